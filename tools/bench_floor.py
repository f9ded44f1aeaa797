"""The machine's floor for a replay: the work no replay of a history can avoid, each part timed on its own as the plain
library call, with the libraries and settings the replay uses (tools/bench_migration.py writes it as `floor_s`).

  embed_s  every text of the history (memories and probe questions) embedded once, by the app's own embed tool
  copy_s   one binary COPY of every memory row with its vector into an empty PostgreSQL table
  index_s  the index builds the app made after its load, from their own definitions in the app's database (read by
           app_vector_indexes before it is dropped: an HNSW graph, or its parts, with their conditions), one after the
           other on the app's two workers, each with the memory its graph needs (graph_memory), so that it never spills
  nn_s     one exact nearest-neighbour pass: every memory's and every probe's k nearest among its owner's memories
           (numpy, one matrix product per owner)

What is prepared for these parts (reading the snapshot, parsing its times) is not timed: a floor is a lower bound.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import numpy as np
import psycopg
from pgvector.psycopg import register_vector

from harness.app.app_tools import embed_texts_f32
from harness.app.target import Target
from harness.services.databases import scalar
from harness.snapshots import read_history
from harness.snapshots.format2 import GoldenProbe, Header, HistoricalMemory

_COLUMNS = "id, user_id, conversation_id, text, created_at, expires_at, embedding"
_TYPES = ["text", "text", "text", "text", "timestamptz", "timestamptz", "vector"]


@dataclass
class FloorInput:
    """What the floor's parts work on, read from the snapshot beforehand (not timed)."""

    embedder: str
    k: int
    rows: list[tuple] = field(default_factory=list)  # each memory's columns but its vector (owner second)
    probe_owners: list[str] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)  # memories first, then the probes' questions


def read_floor_input(snapshot: Path) -> FloorInput:
    records = read_history(snapshot)
    header = next(records)
    assert isinstance(header, Header)
    data, questions = FloorInput(header.legacy_embedder, header.k), []
    for record in records:
        if isinstance(record, HistoricalMemory):
            data.rows.append((record.id, record.owner, record.conversation, record.text,
                              datetime.fromisoformat(record.created_at),
                              record.expires_at and datetime.fromisoformat(record.expires_at)))
            data.texts.append(record.text)
        elif isinstance(record, GoldenProbe):
            data.probe_owners.append(record.owner)
            questions.append(record.query)
    data.texts += questions
    return data


@contextmanager
def phase(times: dict[str, float], name: str) -> Iterator[None]:
    """Times the block into `times[name]`, in seconds."""
    started = time.perf_counter()
    yield
    times[name] = round(time.perf_counter() - started, 2)


def _matrix(vectors: list[bytes | None], dims: int) -> tuple[np.ndarray, np.ndarray]:
    """The vectors as one float32 matrix (a zero row where a text has none) and which rows have one."""
    present = np.fromiter((v is not None for v in vectors), dtype=bool, count=len(vectors))
    matrix = np.zeros((len(vectors), dims), dtype=np.float32)
    if present.any():
        matrix[present] = np.frombuffer(b"".join(v for v in vectors if v is not None), dtype="<f4").reshape(-1, dims)
    return matrix, present


def _copy(dsn: str, data: FloorInput, matrix: np.ndarray, present: np.ndarray) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        register_vector(conn)
        conn.execute("CREATE TABLE floor_memories (id text, user_id text, conversation_id text, text text,"
                     f" created_at timestamptz, expires_at timestamptz, embedding vector({matrix.shape[1]}))")
        with conn.cursor() as cur, cur.copy(f"COPY floor_memories ({_COLUMNS}) FROM STDIN (FORMAT BINARY)") as copy:
            copy.set_types(_TYPES)
            for i, row in enumerate(data.rows):
                copy.write_row((*row, matrix[i] if present[i] else None))


def graph_memory(rows: int, dims: int) -> str:
    """maintenance_work_mem for an HNSW graph of `rows` vectors that fits whole: each element holds its vector, its
    neighbour lists (2 x m = 32 at layer 0, 16 bytes each) and bookkeeping, 2 kB at 256 dims (pgvector 0.6 fitted
    602 such elements in 1MB: 1.74 kB each); at least 64MB."""
    return f"{max(64, -(-rows * (4 * dims + 8 + 32 * 16 + 512) // (1 << 20)))}MB"


class FloorSpilled(RuntimeError):
    """The floor's index build did not fit its memory: the floor would be slowed, so it is refused."""


_DEFINITION = re.compile(r"^CREATE INDEX \S+ ON (?:\S+\.)?memories (USING .+?)(?: WHERE (.+))?$")


def app_vector_indexes(app_dsn: str) -> list[str]:
    """The vector indexes (HNSW, ivfflat) on the app's memories table, as PostgreSQL writes their definitions."""
    with psycopg.connect(app_dsn, autocommit=True) as conn:
        return [row[0] for row in conn.execute(
            "SELECT indexdef FROM pg_indexes WHERE tablename = 'memories' AND indexdef ~ ' USING (hnsw|ivfflat) '"
            " ORDER BY indexname").fetchall()]


def floor_builds(definitions: list[str]) -> list[tuple[str, str]]:
    """Each app index definition as the same build on the floor's table: (CREATE INDEX statement, the condition of
    its rows)."""
    builds = []
    for definition in definitions:
        found = _DEFINITION.match(definition)
        if not found:
            raise ValueError(f"bench floor: cannot rebuild the app's index {definition!r} on the floor's table")
        method, condition = found.groups()
        where = f" WHERE {condition}" if condition else ""
        builds.append((f"CREATE INDEX ON floor_memories {method}{where}", condition or "true"))
    return builds


def _build_memories(dsn: str, builds: list[tuple[str, str]], dims: int) -> list[str]:
    """Each build's maintenance_work_mem: room for the graph of the rows its condition takes (not timed)."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        return [graph_memory(scalar(conn, f"SELECT count(*) FROM floor_memories WHERE embedding IS NOT NULL"
                                          f" AND ({condition})"), dims) for _, condition in builds]


def _index(dsn: str, builds: list[tuple[str, str]], memories: list[str]) -> None:
    """The builds one after the other, each with its memory, on the app's two workers."""
    notices: list[str] = []
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.add_notice_handler(lambda diag: notices.append(diag.message_primary or ""))
        conn.execute("SET max_parallel_maintenance_workers = 2")
        for (statement, _), memory in zip(builds, memories, strict=True):
            conn.execute("SELECT set_config('maintenance_work_mem', %s, false)", (memory,))
            conn.execute(statement)
    spilled = [n for n in notices if "no longer fits" in n]
    if spilled:
        raise FloorSpilled(f"bench floor: an HNSW build spilled ({spilled[0]}); raise graph_memory() in "
                           "tools/bench_floor.py")


def nearest_within_owners(owners: list[str], probe_owners: list[str], matrix: np.ndarray, present: np.ndarray,
                          k: int) -> np.ndarray:
    """Row q: the k nearest memories (their indexes, best first, -1 past the owner's last) of query q, the memories
    first and then the probes (rows len(owners) + j of `matrix`), among the memories of the query's owner that have
    a vector."""
    size = len(owners)
    by_owner: dict[str, list[int]] = {}
    for i, owner in enumerate(owners):
        by_owner.setdefault(owner, []).append(i)
    asked: dict[str, list[int]] = {}
    for j, owner in enumerate(probe_owners):
        asked.setdefault(owner, []).append(size + j)
    nearest = np.full((size + len(probe_owners), k), -1, dtype=np.int64)
    for owner, mine in by_owner.items():
        rows = np.asarray(mine)
        rows = rows[present[rows]]
        top = min(k, len(rows))
        if not top:
            continue
        wanted = np.asarray(mine + asked.get(owner, []))
        scores = matrix[wanted] @ matrix[rows].T
        best = np.argpartition(-scores, top - 1, axis=1)[:, :top]
        order = np.argsort(-np.take_along_axis(scores, best, axis=1), axis=1, kind="stable")
        nearest[wanted, :top] = rows[np.take_along_axis(best, order, axis=1)]
    return nearest


def measure_floor(target: Target, snapshot: Path, database_dsn: str, index_definitions: list[str]) -> dict[str, float]:
    """The floor's parts and their sum for the history in `snapshot`; `database_dsn` names an empty database, and
    `index_definitions` are the app's (app_vector_indexes)."""
    data = read_floor_input(snapshot)
    times: dict[str, float] = {}
    with phase(times, "embed_s"):
        vectors = embed_texts_f32(target, data.texts, data.embedder)
    dims = next((len(v) // 4 for v in vectors if v is not None), 1)
    matrix, present = _matrix(vectors, dims)
    del vectors
    owners, builds = [row[1] for row in data.rows], floor_builds(index_definitions)
    with phase(times, "copy_s"):
        _copy(database_dsn, data, matrix, present)
    memories = _build_memories(database_dsn, builds, dims)
    with phase(times, "index_s"):
        _index(database_dsn, builds, memories)
    with phase(times, "nn_s"):
        nearest_within_owners(owners, data.probe_owners, matrix, present, data.k)
    times["floor_s"] = round(sum(times.values()), 2)
    return times
