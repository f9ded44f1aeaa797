"""PostgreSQL access: a small connection pool and the schema, created or upgraded idempotently at start."""

from __future__ import annotations

import queue
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
from pgvector.psycopg import register_vector

from memchat.embedders import DIMS

# The owner's rows, oldest first: a migration into an empty table drops it and builds it once after the load.
OWNER_INDEX = "CREATE INDEX IF NOT EXISTS memories_user ON memories (user_id, created_at)"

SCHEMA = f"""
CREATE EXTENSION IF NOT EXISTS vector;
CREATE TABLE IF NOT EXISTS users (
    id text PRIMARY KEY,
    email text NOT NULL,
    password_hash text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
-- The user's memory switch: off, nothing told is remembered and nothing remembered is recalled.
ALTER TABLE users ADD COLUMN IF NOT EXISTS memory_enabled boolean NOT NULL DEFAULT true;
CREATE UNIQUE INDEX IF NOT EXISTS users_email_lower ON users (lower(email));
CREATE TABLE IF NOT EXISTS sessions (
    token_hash text PRIMARY KEY,
    user_id text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    expires_at timestamptz NOT NULL
);
CREATE TABLE IF NOT EXISTS conversations (
    id text PRIMARY KEY,
    user_id text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    title text NOT NULL DEFAULT '',
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
);
-- Set only by the fault conversation-delete-keeps-messages (a soft delete); the app deletes the row.
ALTER TABLE conversations ADD COLUMN IF NOT EXISTS deleted_at timestamptz;
CREATE INDEX IF NOT EXISTS conversations_user ON conversations (user_id, updated_at DESC);
CREATE TABLE IF NOT EXISTS messages (
    id bigserial PRIMARY KEY,
    conversation_id text NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    role text NOT NULL CHECK (role IN ('user', 'assistant')),
    text text NOT NULL,
    created_at timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS messages_conversation ON messages (conversation_id, id);
CREATE TABLE IF NOT EXISTS memories (
    id text PRIMARY KEY,
    user_id text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    conversation_id text,
    text text NOT NULL,
    fact_key text,
    embedding vector({DIMS}),
    embedder text NOT NULL,
    dims integer NOT NULL,
    created_at timestamptz NOT NULL,
    expires_at timestamptz
);
{OWNER_INDEX};
-- The ids of the memories their owners deleted: a migration run again must not copy them back from the legacy store.
CREATE TABLE IF NOT EXISTS memory_tombstones (
    user_id text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    memory_id text NOT NULL,
    deleted_at timestamptz NOT NULL,
    PRIMARY KEY (user_id, memory_id)
);
-- Wrong passwords by account (its address, lower case) and client address, for sign-in throttling (sign_ins.py).
CREATE TABLE IF NOT EXISTS sign_in_failures (
    account text NOT NULL,
    address text NOT NULL,
    at timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS sign_in_failures_key ON sign_in_failures (account, address, at);
"""


class DatabaseUnavailable(RuntimeError):
    pass


def redact(dsn: str) -> str:
    """The DSN without its password, for messages and logs."""
    return re.sub(r"(://[^:/@]*:)[^@]*@", r"\1***@", dsn)


def connect(dsn: str) -> psycopg.Connection:
    try:
        conn = psycopg.connect(dsn, autocommit=True, connect_timeout=5)
    except (psycopg.Error, ValueError) as e:
        reason = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise DatabaseUnavailable(f"cannot connect to PostgreSQL at {redact(dsn)}: {reason}") from None
    return conn


def create_schema(dsn: str) -> None:
    with connect(dsn) as conn:
        conn.execute("SELECT pg_advisory_lock(7260301)")  # two apps starting on one database must not race
        try:
            conn.execute(SCHEMA)
        finally:
            conn.execute("SELECT pg_advisory_unlock(7260301)")


class Pool:
    """Up to `size` connections shared by the server's worker threads, opened as the load needs them: an idle app
    holds one, so many apps can share one PostgreSQL server's max_connections."""

    def __init__(self, dsn: str, size: int = 8) -> None:
        self.dsn = dsn
        self.size = size
        self._free: queue.LifoQueue[psycopg.Connection] = queue.LifoQueue()
        self._opened = 0
        self._lock = threading.Lock()
        self._free.put(self._take())  # one at start, so a bad DSN fails the start, not the first request

    def _take(self) -> psycopg.Connection:
        try:
            return self._free.get_nowait()
        except queue.Empty:
            pass
        with self._lock:
            may_open = self._opened < self.size
            self._opened += may_open  # reserved before connecting: two threads cannot both open the last one
        if not may_open:
            return self._free.get(timeout=30)
        try:
            conn = connect(self.dsn)
        except DatabaseUnavailable:
            with self._lock:
                self._opened -= 1
            raise
        register_vector(conn)
        return conn

    @contextmanager
    def connection(self) -> Iterator[psycopg.Connection]:
        conn = self._take()
        try:
            if conn.closed or conn.broken:
                conn = connect(self.dsn)
                register_vector(conn)
            yield conn
        finally:
            self._free.put(conn)

    @contextmanager
    def transaction(self) -> Iterator[psycopg.Connection]:
        with self.connection() as conn, conn.transaction():
            yield conn

    def close(self) -> None:
        while not self._free.empty():
            self._free.get_nowait().close()


def server_versions(conn: psycopg.Connection) -> tuple[str, str]:
    pg = conn.execute("SHOW server_version").fetchone()[0].split()[0]
    row = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()
    return pg, (row[0] if row else "absent")
