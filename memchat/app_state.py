"""What a running server holds: settings, the database pool, the stores and the clock."""

from __future__ import annotations

from functools import cached_property

import redis

from memchat.accounts import Accounts
from memchat.clock import Clock
from memchat.conversations import Conversations
from memchat.db import Pool, create_schema, redact, server_versions
from memchat.memory_store import MemoryStore
from memchat.settings import Settings
from memchat.sign_ins import SignInThrottle


class RedisUnavailable(RuntimeError):
    pass


class AppState:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        create_schema(settings.pg_dsn)
        self.pool = Pool(settings.pg_dsn)
        self.clock = Clock(settable=settings.settable_clock)
        self.accounts = Accounts(self.pool, match_like=settings.has("sign-in-matches-like"))
        self.sign_ins = SignInThrottle(self.pool, never_expires=settings.has("lockout-never-expires"),
                                       matches_like=settings.has("lockout-matches-like"))
        self.conversations = Conversations(self.pool, check_owner=not settings.has("history-idor"),
                                           soft_delete=settings.has("conversation-delete-keeps-messages"),
                                           by_creation=settings.has("conversation-list-by-creation"),
                                           retitle=settings.has("title-follows-latest-message"),
                                           own_preview=settings.has("preview-shows-own-message"))
        self.memories = MemoryStore(self.pool, settings)
        self.memories.ensure_index()
        self.redis = redis.Redis.from_url(settings.redis_url, socket_connect_timeout=5)
        try:
            self._redis_version = self.redis.info("server")["redis_version"]
        except (redis.RedisError, OSError) as e:
            self.pool.close()
            raise RedisUnavailable(f"cannot connect to Redis at {redact(settings.redis_url)}: {e}") from None

    @cached_property
    def _pg_versions(self) -> tuple[str, str]:
        with self.pool.connection() as conn:
            return server_versions(conn)

    def versions(self) -> dict:
        pg, vector = self._pg_versions
        return {"postgres": pg, "pgvector": vector, "redis": self._redis_version}

    def close(self) -> None:
        self.pool.close()
        self.redis.close()
