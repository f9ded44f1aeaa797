"""Long-term memory in PostgreSQL + pgvector.

Recall is exact in the clean app: an owner's rows are scored by cosine inside that owner's rows only (a materialised
scan, so the planner cannot use a global ANN index and post-filter away the owner's memories: the filtered-HNSW trap).
Only owners with at least `ann_min_rows` memories (default 100,000) go through the ANN index, built after loading:
faster there, and approximate (measured recall@5 0.96 for a 50,000-row owner in 100,000 rows, HNSW, ef_search 400;
1.0 for ivfflat, whose probes cover every list). Ties are broken by id on both paths.

An HNSW index is built in parts of at most about `index_graph_rows` rows each (default 100,000): owners are split by a
hash of their id, one partial index per part, and an owner's ANN search names its part, so that the planner takes that
part's index. One graph over a million rows built 16 times slower than one over 100,000 here (each insertion walks a
larger graph, mostly out of the CPU's caches); ten graphs of 100,000 build 10 times slower, and an owner's search
filters past the other owners of its part only.
"""

from __future__ import annotations

import math
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta

import numpy as np
import psycopg

from memchat.db import Pool
from memchat.embedders import get_embedder
from memchat.facts import parse_fact
from memchat.settings import Settings


@dataclass(frozen=True)
class Recalled:
    id: str
    text: str
    score: float
    conversation_id: str | None
    created_at: datetime
    fact_key: str | None

    def as_json(self) -> dict:
        return {"id": self.id, "text": self.text, "score": round(self.score, 6),
                "conversation_id": self.conversation_id, "created_at": self.created_at.isoformat()}


class IndexBuildError(RuntimeError):
    """The index could not be built with the given settings; the message says what to change."""


HNSW_INDEX = "memories_embedding_hnsw"  # one graph; in parts: memories_embedding_hnsw_<part>_of_<parts>
_HNSW_INDEXES = (f"SELECT indexname FROM pg_indexes WHERE tablename = 'memories'"
                 f" AND (indexname = '{HNSW_INDEX}' OR indexname LIKE '{HNSW_INDEX}\\_%\\_of\\_%')")


# pgvector's notice when an HNSW graph no longer fits in maintenance_work_mem and the build goes on on disk.
OUTGREW = "hnsw graph no longer fits into maintenance_work_mem"


def hnsw_part_of(parts: int) -> str:
    """The SQL expression of an owner's part (0 to parts - 1): the same in the partial indexes and in the queries."""
    return f"mod(hashtext(user_id) & 2147483647, {int(parts)})"


def hnsw_indexes(conn: psycopg.Connection) -> list[str]:
    """The HNSW indexes on memories: the one graph, or its parts."""
    return [row[0] for row in conn.execute(_HNSW_INDEXES).fetchall()]


def hnsw_parts(conn: psycopg.Connection) -> int:
    """How many parts the HNSW index is built in (1: one graph, or none built)."""
    names = hnsw_indexes(conn)
    return max((int(name.rsplit("_of_", 1)[1]) for name in names if "_of_" in name), default=1)


def drop_hnsw_indexes(conn: psycopg.Connection) -> None:
    for name in hnsw_indexes(conn):
        conn.execute(f'DROP INDEX IF EXISTS "{name}"')


_LISTED = "id, text, conversation_id, created_at, expires_at, embedder"  # a memory as GET /api/memories lists it
_TOMBSTONED = ("EXISTS (SELECT 1 FROM memory_tombstones t WHERE t.user_id = memories.user_id"
               " AND t.memory_id = memories.id)")


def _listed(row: tuple) -> dict:
    return {"id": row[0], "text": row[1], "conversation_id": row[2], "created_at": row[3].isoformat(),
            "expires_at": row[4].isoformat() if row[4] else None, "embedder": row[5]}


def new_memory_id() -> str:
    return "m_" + uuid.uuid4().hex[:20]


def retention(settings: Settings) -> timedelta:
    if settings.has("ttl-too-short"):
        return timedelta(hours=settings.ttl_days)  # the unit bug: days read as hours
    return timedelta(days=settings.ttl_days)


class MemoryStore:
    def __init__(self, pool: Pool, settings: Settings) -> None:
        self.pool = pool
        self.settings = settings
        self.embedder = get_embedder(settings.embedder)

    # -- writing ---------------------------------------------------------------------------------------------------
    def write(self, user_id: str, conversation_id: str | None, texts: list[str], now: datetime) -> list[str]:
        if self.settings.has("busy-store-write-dropped"):  # the bug: a write that waits gives up, and says nothing
            try:
                return self._write(user_id, conversation_id, texts, now, lock_timeout="1s")
            except psycopg.errors.LockNotAvailable:
                return []
        return self._write(user_id, conversation_id, texts, now)

    def _write(self, user_id: str, conversation_id: str | None, texts: list[str], now: datetime,
               lock_timeout: str | None = None) -> list[str]:
        ids = []
        with self.pool.transaction() as conn:
            if lock_timeout:
                conn.execute("SELECT set_config('lock_timeout', %s, true)", (lock_timeout,))
            for i, text in enumerate(texts):
                fact = parse_fact(text)
                mid = new_memory_id()
                when = now + timedelta(microseconds=i)  # one request's items keep the order they were told in
                conn.execute(
                    "INSERT INTO memories (id, user_id, conversation_id, text, fact_key, embedding, embedder, dims,"
                    " created_at, expires_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                    (mid, user_id, conversation_id, text, fact.key if fact else None, self.embedder.embed(text),
                     self.embedder.name, self.embedder.dims, when, when + retention(self.settings)),
                )
                ids.append(mid)
        return ids

    def list(self, user_id: str, now: datetime) -> list[dict]:
        """The user's memories still within retention, oldest first: an expired memory is forgotten, not listed."""
        # The fault soft-delete-still-recalled marks a deleted memory (its tombstone) and hides it here only.
        hidden = f" AND NOT {_TOMBSTONED}" if self.settings.has("soft-delete-still-recalled") else ""
        with self.pool.connection() as conn:
            rows = conn.execute(
                f"SELECT {_LISTED} FROM memories WHERE user_id = %s AND (expires_at IS NULL OR expires_at > %s)"
                f"{hidden} ORDER BY created_at, id", (user_id, now)).fetchall()
        return [_listed(r) for r in rows]

    # -- what users take back --------------------------------------------------------------------------------------
    def edit(self, user_id: str, memory_id: str, text: str, now: datetime) -> dict | None:
        """The owner's memory, still remembered, rewritten in place: new text, fact key and vector (under the current
        embedder); its id, conversation, creation and expiry times are kept. None when the user has no such memory."""
        if self.settings.has("edit-keeps-old-vector"):  # the bug: the text changes, its key and vector do not
            changes, values = "text = %(text)s", {}
        else:
            fact = parse_fact(text)
            changes = ("text = %(text)s, fact_key = %(key)s, embedding = %(vec)s, embedder = %(embedder)s,"
                       " dims = %(dims)s")
            values = {"key": fact.key if fact else None, "vec": self.embedder.embed(text),
                      "embedder": self.embedder.name, "dims": self.embedder.dims}
        with self.pool.connection() as conn:
            row = conn.execute(
                f"UPDATE memories SET {changes} WHERE id = %(id)s AND user_id = %(user)s"
                f" AND (expires_at IS NULL OR expires_at > %(now)s) RETURNING {_LISTED}",
                {"text": text, "id": memory_id, "user": user_id, "now": now, **values}).fetchone()
        return _listed(row) if row else None

    def delete(self, user_id: str, memory_id: str, now: datetime) -> bool:
        """Delete the owner's memory (its row, and so its vector) and keep its tombstone; False when the user has no
        memory of that id. An expired memory can be deleted too."""
        return self._delete("id = %(id)s AND user_id = %(user)s", {"id": memory_id, "user": user_id}, now) == 1

    def clear(self, user_id: str, now: datetime) -> int:
        """Delete every memory of the owner, expired ones too, each with its tombstone; returns how many."""
        if self.settings.has("clear-all-users"):  # the bug: the delete is not scoped to the user (mem0 #3746)
            return self._delete("true", {}, now)
        return self._delete("user_id = %(user)s", {"user": user_id}, now)

    def _delete(self, where: str, params: dict, now: datetime) -> int:
        """Delete the rows `where` picks and record a tombstone for each under its owner, in one statement."""
        if self.settings.has("soft-delete-still-recalled"):  # the bug: only the tombstone marks it deleted
            gone = f"SELECT id, user_id FROM memories WHERE {where} AND NOT {_TOMBSTONED}"
        else:
            gone = f"DELETE FROM memories WHERE {where} RETURNING id, user_id"
        with self.pool.connection() as conn:
            return conn.execute(
                f"WITH gone AS ({gone}), marked AS (INSERT INTO memory_tombstones (user_id, memory_id, deleted_at)"
                " SELECT user_id, id, %(now)s FROM gone ON CONFLICT (user_id, memory_id)"
                " DO UPDATE SET deleted_at = excluded.deleted_at) SELECT count(*) FROM gone",
                {**params, "now": now}).fetchone()[0]

    # -- recall ----------------------------------------------------------------------------------------------------
    def search(self, user_id: str, query: str, now: datetime, k: int | None = None,
               exclude_conversation: str | None = None, fact_key: str | None = None) -> list[Recalled]:
        """The k memories closest to `query` at or above the threshold, best first. With `fact_key` (the fact a
        question asks about), the newest memory of that fact joins them when it was outranked or fell below the
        threshold: an older statement of a fact may be the closer match, and the newest must still win."""
        vec = self.embedder.embed(query)
        if vec is None:
            # A question made only of common words ("What is my will?") has no vector to compare; the fact it asks
            # about is still found by its key (unless the fault common-word-key-forgotten skips it).
            if fact_key is None or self.settings.has("common-word-key-forgotten"):
                return []
            return self._newest_of(user_id, fact_key, now, exclude_conversation)
        k = k or self.settings.top_k
        params = {"q": vec, "user": user_id, "embedder": self.embedder.name, "now": now, "k": k,
                  "min": self.settings.effective_threshold, "skip": exclude_conversation}
        scoped = "" if self.settings.has("recall-ignores-user") else "AND user_id = %(user)s"
        # Rows written under another embedding model live in another vector space: comparing them is meaningless.
        where = (f"embedding IS NOT NULL AND embedder = %(embedder)s {scoped}"
                 " AND (expires_at IS NULL OR expires_at > %(now)s)"
                 " AND (%(skip)s::text IS NULL OR conversation_id IS DISTINCT FROM %(skip)s)")
        with self.pool.transaction() as conn:
            if self._use_ann(conn, user_id):
                self._tune_ann(conn)
                # The index orders by distance alone (adding `, id` makes the planner drop it): fetch a margin and
                # break ties by id below, so equal vectors come back in the exact path's order.
                params["fetch"] = 2 * k + 16
                sql = (f"SELECT id, text, conversation_id, created_at, fact_key, embedding <=> %(q)s AS d"
                       f" FROM memories WHERE {where}{self._owner_part(conn, user_id)}"
                       " ORDER BY embedding <=> %(q)s LIMIT %(fetch)s")
            else:
                sql = (f"WITH mine AS MATERIALIZED (SELECT id, text, conversation_id, created_at, fact_key, embedding"
                       f" FROM memories WHERE {where})"
                       " SELECT id, text, conversation_id, created_at, fact_key, embedding <=> %(q)s AS d"
                       " FROM mine ORDER BY d, id LIMIT %(k)s")
            rows = sorted(conn.execute(sql, params).fetchall(), key=lambda r: (float(r[5]), r[0]))[:k]
            newest = conn.execute(
                f"SELECT id, text, conversation_id, created_at, fact_key, embedding <=> %(q)s AS d FROM memories"
                f" WHERE {where} AND fact_key = %(key)s ORDER BY created_at DESC, id DESC LIMIT 1",
                {**params, "key": fact_key}).fetchone() if fact_key is not None else None
        hits = [Recalled(r[0], r[1], 1.0 - float(r[5]), r[2], r[3], r[4]) for r in rows]
        hits = [h for h in hits if h.score >= params["min"]]
        if newest is not None and newest[0] not in {h.id for h in hits}:
            # The asked fact's own newest statement: the same fact by its key, however far its wording has drifted.
            hits.append(Recalled(newest[0], newest[1], 1.0 - float(newest[5]), newest[2], newest[3], newest[4]))
        return hits

    def _newest_of(self, user_id: str, fact_key: str, now: datetime,
                   exclude_conversation: str | None) -> list[Recalled]:
        """The newest memory of a fact, by its key alone (no similarity to score it by: its score is 0)."""
        scoped = "" if self.settings.has("recall-ignores-user") else "AND user_id = %(user)s"
        with self.pool.connection() as conn:
            row = conn.execute(
                f"SELECT id, text, conversation_id, created_at, fact_key FROM memories WHERE fact_key = %(key)s"
                f" AND embedding IS NOT NULL AND embedder = %(embedder)s {scoped}"
                " AND (expires_at IS NULL OR expires_at > %(now)s)"
                " AND (%(skip)s::text IS NULL OR conversation_id IS DISTINCT FROM %(skip)s)"
                " ORDER BY created_at DESC, id DESC LIMIT 1",
                {"key": fact_key, "user": user_id, "embedder": self.embedder.name, "now": now,
                 "skip": exclude_conversation}).fetchone()
        return [Recalled(row[0], row[1], 0.0, row[2], row[3], row[4])] if row else []

    def _owner_rows(self, conn: psycopg.Connection, user_id: str) -> int:
        return conn.execute("SELECT count(*) FROM memories WHERE user_id = %s", (user_id,)).fetchone()[0]

    def _use_ann(self, conn: psycopg.Connection, user_id: str) -> bool:
        if self.settings.index == "none":
            return False
        return self._owner_rows(conn, user_id) >= self.settings.ann_min_rows

    def _owner_part(self, conn: psycopg.Connection, user_id: str) -> str:
        """For an HNSW index in parts, the condition naming the owner's part, its number written out: the planner
        takes a partial index only for a query whose own condition is the index's."""
        parts = hnsw_parts(conn) if self.settings.index == "hnsw" else 1
        if parts == 1:
            return ""
        part = conn.execute(f"SELECT {hnsw_part_of(parts)} FROM (SELECT %s::text AS user_id) o",
                            (user_id,)).fetchone()[0]
        return f" AND {hnsw_part_of(parts)} = {int(part)}"

    def _tune_ann(self, conn: psycopg.Connection) -> None:
        conn.execute("SET LOCAL enable_seqscan = off")
        # The planner may cost a filtered vector-index scan above the owner's btree plus a sort (pgvector 0.8 does for
        # HNSW, both versions for ivfflat): without sorts the index's own order wins, so the ANN path uses the index.
        conn.execute("SET LOCAL enable_sort = off")
        if self.settings.index == "hnsw":
            conn.execute("SET LOCAL hnsw.ef_search = 400")
        elif not self.settings.has("ivfflat-before-load"):
            lists = self._ivfflat_lists(conn)
            conn.execute(f"SET LOCAL ivfflat.probes = {max(1, lists)}")

    # -- indexes and maintenance -----------------------------------------------------------------------------------
    def _ivfflat_lists(self, conn: psycopg.Connection) -> int:
        row = conn.execute(
            "SELECT (regexp_match(indexdef, 'lists=''?(\\d+)'))[1] FROM pg_indexes"
            " WHERE indexname = 'memories_embedding_ivfflat'").fetchone()
        return int(row[0]) if row and row[0] else 1

    def ensure_index(self) -> None:
        """At start: HNSW can be built at any time; ivfflat only once the table holds the data it clusters."""
        with self.pool.connection() as conn:
            self._ensure_index(conn)

    def _ensure_index(self, conn: psycopg.Connection) -> None:
        kind = self.settings.index
        if kind == "hnsw" and not hnsw_indexes(conn):  # one graph, or the parts a bulk load's build made
            conn.execute(f"CREATE INDEX IF NOT EXISTS {HNSW_INDEX} ON memories"
                         " USING hnsw (embedding vector_cosine_ops)")
        elif kind == "ivfflat" and self.settings.has("ivfflat-before-load"):
            conn.execute("CREATE INDEX IF NOT EXISTS memories_embedding_ivfflat ON memories"
                         " USING ivfflat (embedding vector_cosine_ops) WITH (lists = 100)")
        elif kind == "ivfflat" and conn.execute("SELECT EXISTS (SELECT 1 FROM memories)").fetchone()[0]:
            self._build_ivfflat(conn)

    def _build_ivfflat(self, conn: psycopg.Connection) -> None:
        rows = conn.execute("SELECT count(*) FROM memories WHERE embedding IS NOT NULL").fetchone()[0]
        lists = max(1, int(math.sqrt(rows)) if rows > 1_000_000 else rows // 1000)
        conn.execute("DROP INDEX IF EXISTS memories_embedding_ivfflat")
        conn.execute(f"CREATE INDEX memories_embedding_ivfflat ON memories"
                     f" USING ivfflat (embedding vector_cosine_ops) WITH (lists = {lists})")

    def _build_memory(self, graph_rows: int) -> str:
        """The configured build memory; for "auto", the room an HNSW graph of `graph_rows` rows needs (each element:
        its vector, its neighbour lists, 2 x m = 32 entries of 16 bytes at layer 0, and bookkeeping: 2 kB at 256 dims,
        where pgvector 0.6 fits 602 elements in 1MB, 1.74 kB each), at least PostgreSQL's least, 1MB. A graph that
        fits builds no faster with more, and a parallel build asks the server for that much shared memory."""
        if self.settings.index_build_memory != "auto":
            return self.settings.index_build_memory
        if self.settings.index != "hnsw":
            return "512MB"
        return f"{max(1, -(-graph_rows * (4 * self.embedder.dims + 8 + 32 * 16 + 512) // (1 << 20)))}MB"

    def _hnsw_plan(self, conn: psycopg.Connection) -> tuple[int, int]:
        """(parts, rows of the largest part) for the rows with a vector: at most about index_graph_rows rows a part
        (as many parts as that takes: 995,000 rows make ten graphs of 99,500, not nine of 110,600, whose build
        costs more than its share, each insertion walking a larger graph)."""
        rows = conn.execute("SELECT count(*) FROM memories WHERE embedding IS NOT NULL").fetchone()[0]
        parts = max(1, -(-rows // max(1, self.settings.index_graph_rows)))
        if parts == 1:
            return 1, rows
        largest = conn.execute(f"SELECT max(n) FROM (SELECT count(*) AS n FROM memories WHERE embedding IS NOT NULL"
                               f" GROUP BY {hnsw_part_of(parts)}) p").fetchone()[0]
        return parts, largest

    def _build_hnsw(self, conn: psycopg.Connection, parts: int, heard: list[str]) -> list[tuple[str, str]]:
        """The graph, or its parts one after the other (each build on all the workers); each graph that outgrew its
        build memory, by name, with what pgvector said of it (`heard`: the notices of the connection, as they come)."""
        drop_hnsw_indexes(conn)
        outgrown = []
        for part in range(parts):
            heard.clear()
            if parts == 1:
                name = HNSW_INDEX
                self._ensure_index(conn)
            else:
                name = f"{HNSW_INDEX}_{part}_of_{parts}"
                conn.execute(f"CREATE INDEX {name} ON memories"
                             f" USING hnsw (embedding vector_cosine_ops) WHERE {hnsw_part_of(parts)} = {part}")
            outgrown += [(name, notice) for notice in heard if notice.startswith(OUTGREW)]
        return outgrown

    def build_index(self) -> list[str]:
        """After a bulk load: (re)build the configured index on the data it will serve, with the memory and workers
        a large build needs (an HNSW graph that does not fit in maintenance_work_mem builds several times slower).
        Returns one line for each HNSW graph that outgrew that memory, for the operator (none when each fitted)."""
        heard: list[str] = []
        with self.pool.connection() as conn:
            hnsw = self.settings.index == "hnsw"
            parts, graph_rows = self._hnsw_plan(conn) if hnsw else (1, 0)
            memory = self._build_memory(graph_rows)
            try:
                conn.execute("SELECT set_config('maintenance_work_mem', %s, false)", (memory,))
            except psycopg.Error as e:
                raise IndexBuildError(f"index build memory '{memory}' refused by "
                                      f"PostgreSQL: {e.diag.message_primary or e}; give a size such as 512MB") from None

            def hear(notice: psycopg.errors.Diagnostic) -> None:
                heard.append(notice.message_primary or "")

            conn.add_notice_handler(hear)
            outgrown: list[tuple[str, str]] = []
            try:
                conn.execute("SET max_parallel_maintenance_workers = 2")
                if self.settings.index == "ivfflat" and not self.settings.has("ivfflat-before-load"):
                    self._build_ivfflat(conn)
                elif hnsw:
                    outgrown = self._build_hnsw(conn, parts, heard)
                else:
                    self._ensure_index(conn)
                conn.execute("ANALYZE memories")
            finally:  # the connection goes back to a shared pool
                conn.remove_notice_handler(hear)
                conn.execute("RESET maintenance_work_mem")
                conn.execute("RESET max_parallel_maintenance_workers")
        return [f"the HNSW graph {name} outgrew its build memory of {memory} ({notice}): the rest of it was built "
                "on disk, several times slower; give --index-build-memory auto, or more" for name, notice in outgrown]

    def drop_hnsw(self) -> None:
        """Before every vector is rewritten: an HNSW graph updated row by row costs many times one build after
        (100,000 re-embedded rows took more than 5 minutes with it kept); build_index builds it again."""
        if self.settings.index == "hnsw":
            with self.pool.connection() as conn:
                drop_hnsw_indexes(conn)

    def reembed(self, batch_size: int = 500) -> int:
        """Re-embed every row written under another model; returns how many rows changed."""
        stale = ("embedding IS NULL" if self.settings.has("stale-embeddings")  # the bug: only rows never embedded
                 else "(embedder <> %(name)s OR embedding IS NULL)")
        changed, last_id = 0, ""
        while True:
            with self.pool.transaction() as conn:
                rows = conn.execute(
                    f"SELECT id, text FROM memories WHERE {stale} AND id > %(after)s ORDER BY id LIMIT %(n)s",
                    {"name": self.embedder.name, "n": batch_size, "after": last_id}).fetchall()
                if not rows:
                    return changed
                with conn.cursor() as cur:  # one pipelined batch, not a round trip per row
                    cur.executemany("UPDATE memories SET embedding = %s, embedder = %s, dims = %s WHERE id = %s",
                                    [(self.embedder.embed(text), self.embedder.name, self.embedder.dims, mid)
                                     for mid, text in rows])
                changed += len(rows)
                last_id = rows[-1][0]


def brute_force(vectors: np.ndarray, ids: list[str], query: np.ndarray, k: int,
                threshold: float) -> list[tuple[str, float]]:
    """Reference ranking used by the app's own tests: cosine over every row, ties by id."""
    scores = vectors @ query
    order = sorted(range(len(ids)), key=lambda i: (-float(scores[i]), ids[i]))
    return [(ids[i], float(scores[i])) for i in order if scores[i] >= threshold][:k]
