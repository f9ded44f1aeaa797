"""Open WebUI's own `memory` table, in whichever database the app runs on (SQLite in its data folder, or PostgreSQL):
what a history import writes and what the replay reads back; and, on PostgreSQL, its pgvector store's similarity
for each memory's own text.

A history goes in as rows, the way a team's bulk load would (Open WebUI's API takes neither an id nor a creation
time: it gives every memory a new uuid and the current time); the app's own re-index then embeds every row. Both
releases the suite runs (0.11.4 and 0.12.4) have the same table (`models/memories.py` is identical in both).
"""

from __future__ import annotations

import json
import math
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
from pgvector.psycopg import register_vector

from harness.app.app_launcher import RunningApp
from harness.drivers.base import DriverError
from harness.services.databases import scalar

IMPORT_META = json.dumps({"created_by": "memtest-import"})  # how an imported row says where it came from
_COLUMNS = "id, user_id, content, type, path, meta, created_at, updated_at"


@dataclass(frozen=True)
class MemoryRow:
    id: str
    user_id: str
    content: str
    created_at: int  # epoch seconds, as Open WebUI keeps them


def epoch(iso: str) -> int:
    return int(datetime.fromisoformat(iso).timestamp())


def iso(seconds: int) -> str:
    return datetime.fromtimestamp(seconds, UTC).isoformat()


@contextmanager
def _connect(app: RunningApp, postgresql: bool) -> Iterator[Any]:
    """The app's database, with `%s` parameters whichever it is."""
    if postgresql:
        if not app.pg_dsn:
            raise DriverError("Open WebUI on PostgreSQL was started without a database address")
        with psycopg.connect(app.pg_dsn, connect_timeout=10) as conn:
            yield conn
        return
    path = (app.data_dir or Path("/nonexistent")) / "webui.db"
    if not path.exists():
        raise DriverError(f"Open WebUI's database {path} does not exist: give the suite an app it starts itself")
    # The app holds it in WAL mode: a second writer waits, never conflicts.
    database = sqlite3.connect(path, timeout=30)
    try:
        yield _QmarkConnection(database)
        database.commit()
    finally:
        database.close()


class _QmarkConnection:
    """sqlite3 with psycopg's `%s` placeholders, so that each statement is written once."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def execute(self, statement: str, params: tuple = ()) -> sqlite3.Cursor:
        return self.conn.execute(statement.replace("%s", "?"), params)

    def executemany(self, statement: str, rows: list[tuple]) -> None:
        self.conn.executemany(statement.replace("%s", "?"), rows)


def insert_memories(app: RunningApp, postgresql: bool, rows: list[MemoryRow]) -> None:
    """The rows into the app's `memory` table, each with its own id and creation time (updated when created)."""
    values = [(r.id, r.user_id, r.content, "context", None, IMPORT_META, r.created_at, r.created_at) for r in rows]
    insert = f"INSERT INTO memory ({_COLUMNS}) VALUES ({', '.join(['%s'] * 8)})"
    with _connect(app, postgresql) as conn:
        if postgresql:
            with conn.cursor() as cur:
                cur.executemany(insert, values)
        else:
            conn.executemany(insert, values)


def read_memories(app: RunningApp, postgresql: bool, ids: list[str]) -> dict[str, MemoryRow]:
    """The rows of these ids that the table holds, by id."""
    found: dict[str, MemoryRow] = {}
    with _connect(app, postgresql) as conn:
        for start in range(0, len(ids), 500):  # SQLite's limit of bound parameters
            part = ids[start:start + 500]
            marks = ", ".join(["%s"] * len(part))
            for row in conn.execute(f"SELECT id, user_id, content, created_at FROM memory WHERE id IN ({marks})",
                                    tuple(part)).fetchall():
                found[row[0]] = MemoryRow(row[0], row[1], row[2], int(row[3]))
    return found


def count_by_owner(app: RunningApp, postgresql: bool, owners: list[str]) -> dict[str, int]:
    """How many memories each of these users has."""
    counts: dict[str, int] = {}
    with _connect(app, postgresql) as conn:
        for start in range(0, len(owners), 500):
            part = owners[start:start + 500]
            marks = ", ".join(["%s"] * len(part))
            counts.update(dict(conn.execute(f"SELECT user_id, count(*) FROM memory WHERE user_id IN ({marks})"
                                            " GROUP BY user_id", tuple(part)).fetchall()))
    return counts


@dataclass(frozen=True)
class OwnTextScore:
    has_vector: bool  # the owner's collection holds a vector of the memory
    own: float | None  # the cosine of its own text's vector with it
    best_other: float | None  # the best cosine of any other vector of the owner's collection (None: there is none)
    best_other_id: str | None


# Open WebUI's own search on pgvector (retrieval/vector/dbs/pgvector.py): cosine distance within the user's collection,
# `user-memory-<user id>`, the query vector padded with zeros to the column's size. Set-based: each memory against
# its own row and its owner's best other row, in one statement.
_OWN_TEXT = ("SELECT q.memory_id, own.id IS NOT NULL, 1 - (own.vector <=> q.vec), best.id, 1 - best.d FROM own_text q"
             " LEFT JOIN document_chunk own ON own.id = q.memory_id AND own.collection_name = q.collection"
             " LEFT JOIN LATERAL (SELECT x.id, x.vector <=> q.vec AS d FROM document_chunk x"
             " WHERE x.collection_name = q.collection AND x.id <> q.memory_id ORDER BY d, x.id LIMIT 1) best"
             " ON q.vec IS NOT NULL")


def own_text_in_pgvector(app: RunningApp, queries: list[tuple[str, str, np.ndarray | None]]) -> dict[str, OwnTextScore]:
    """For each (memory id, owner id, its own text's vector), what Open WebUI's pgvector store gives it."""
    with psycopg.connect(str(app.pg_dsn), connect_timeout=10) as conn:
        register_vector(conn)
        size = scalar(conn, "SELECT atttypmod FROM pg_attribute WHERE attrelid = 'document_chunk'::regclass"
                            " AND attname = 'vector'")
        conn.execute("CREATE TEMP TABLE own_text (memory_id text, collection text, vec vector)")
        with conn.cursor() as cur, cur.copy("COPY own_text FROM STDIN WITH (FORMAT BINARY)") as copy:
            copy.set_types(["text", "text", "vector"])
            for memory_id, owner_id, vector in queries:
                padded = None if vector is None else np.pad(vector, (0, size - vector.shape[0]))
                copy.write_row((memory_id, f"user-memory-{owner_id}", padded))
        conn.execute("ANALYZE own_text")
        rows = conn.execute(_OWN_TEXT).fetchall()
        conn.rollback()
    return {r[0]: OwnTextScore(bool(r[1]), _number(r[2]), _number(r[4]), r[3]) for r in rows}


def _number(value: float | None) -> float | None:
    """A cosine, or None where there is none (no row; NaN, pgvector's score of an all-zero vector)."""
    return None if value is None or math.isnan(value) else float(value)


# -- what is left of deleted memories (memory_remains) ----------------------------------------------------------------
def memory_rows_left(app: RunningApp, postgresql: bool, ids: list[str]) -> int:
    """Rows of the `memory` table that still have these ids."""
    return len(read_memories(app, postgresql, ids))


def vectors_left_in_pgvector(app: RunningApp, ids: list[str]) -> dict[str, int]:
    """Open WebUI's pgvector store keeps a memory's vector (and its text) in one `document_chunk` row whose id is the
    memory's, in the collection `user-memory-<user id>`: those rows left, in any collection."""
    with psycopg.connect(str(app.pg_dsn), connect_timeout=10) as conn:
        left = scalar(conn, "SELECT count(*) FROM document_chunk WHERE id = ANY(%s)", (list(ids),))
    return {"document_chunk rows (vectors)": int(left)}


def chroma_file(app: RunningApp) -> Path:
    """Chroma's own database in the app's data folder (CHROMA_DATA_PATH = DATA_DIR/vector_db)."""
    path = (app.data_dir or Path("/nonexistent")) / "vector_db" / "chroma.sqlite3"
    if not path.exists():
        raise DriverError(f"Open WebUI's Chroma store {path} does not exist: give the suite an app it starts itself")
    return path


def vectors_left_in_chroma(app: RunningApp, ids: list[str]) -> dict[str, int]:
    """Open WebUI's Chroma store (a PersistentClient on the data folder): a memory is a record of its collection, its
    id the memory's; Chroma keeps the record in `embeddings` (its metadata and text in `embedding_metadata`) and every
    write, vector and text included, in its write-ahead log `embeddings_queue` until its vector index has persisted
    past it. Counted: records left, and logged writes that still carry a vector of these ids."""
    database = sqlite3.connect(f"file:{chroma_file(app)}?mode=ro", uri=True, timeout=30)
    try:
        records = logged = 0
        for start in range(0, len(ids), 500):
            part = ids[start:start + 500]
            marks = ", ".join(["?"] * len(part))
            records += database.execute(f"SELECT count(*) FROM embeddings WHERE embedding_id IN ({marks})",
                                        part).fetchone()[0]
            logged += database.execute(f"SELECT count(*) FROM embeddings_queue WHERE id IN ({marks})"
                                       " AND vector IS NOT NULL", part).fetchone()[0]
    finally:
        database.close()
    return {"Chroma embeddings records": int(records), "Chroma write-ahead log vectors (embeddings_queue)": int(logged)}
