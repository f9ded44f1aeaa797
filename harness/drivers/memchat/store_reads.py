"""Reads of memchat's store: what remains of a user, a memory or a conversation, recall by a memory's own text and
nearest vectors on the exact path, the vector indexes there are and those it promises."""

from __future__ import annotations

import math
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import psycopg
from pgvector.psycopg import register_vector

from harness.app.app_launcher import (
    RunningApp,
)
from harness.drivers.base import (
    NEAR_TIE,
    Account,
    AppDriver,
    DriverError,
    Hit,
    OwnTextQuery,
    OwnTextResult,
    PromisedIndex,
)
from harness.services.databases import IndexScans, VectorIndex, scalar, vector_index_scans, vector_indexes


class MemchatStoreReads(AppDriver):
    def remains_of(self, app: RunningApp, account: Account, conversation_ids: list[str],
                   memory_ids: list[str]) -> dict[str, int]:
        queries = {
            "memories": ("SELECT count(*) FROM memories WHERE user_id = %s OR id = ANY(%s)", (account.id, memory_ids)),
            "conversations": ("SELECT count(*) FROM conversations WHERE user_id = %s OR id = ANY(%s)",
                              (account.id, conversation_ids)),
            "messages": ("SELECT count(*) FROM messages WHERE conversation_id = ANY(%s)", (conversation_ids,)),
            "sessions": ("SELECT count(*) FROM sessions WHERE user_id = %s", (account.id,)),
            "users": ("SELECT count(*) FROM users WHERE id = %s", (account.id,)),
        }
        with psycopg.connect(str(app.pg_dsn), connect_timeout=10) as conn:
            return {kind: scalar(conn, sql, params) for kind, (sql, params) in queries.items()}

    def memory_remains(self, app: RunningApp, memory_ids: list[str]) -> dict[str, int]:
        """memchat keeps a memory's vector in its row (the `embedding` column)."""
        with psycopg.connect(str(app.pg_dsn), connect_timeout=10) as conn:
            return {"memory rows": scalar(conn, "SELECT count(*) FROM memories WHERE id = ANY(%s)", (memory_ids,)),
                    "vectors": scalar(conn, "SELECT count(*) FROM memories WHERE id = ANY(%s) AND embedding IS NOT "
                                            "NULL", (memory_ids,))}

    def conversation_remains(self, app: RunningApp, conversation_id: str) -> dict[str, int]:
        """memchat deletes a conversation's row and, with it, its messages (memchat/README.md)."""
        with psycopg.connect(str(app.pg_dsn), connect_timeout=10) as conn:
            return {"conversation rows": scalar(conn, "SELECT count(*) FROM conversations WHERE id = %s",
                                                (conversation_id,)),
                    "messages": scalar(conn, "SELECT count(*) FROM messages WHERE conversation_id = %s",
                                       (conversation_id,))}

    # memchat's recall, set-based, a part of the owners at a time: each memory's row and its own score (the store's
    # cosine of its stored vector with its text's), and the best score of another memory of its owner where that
    # comes within NEAR_TIE of it or above it, on the exact path (the owner's rows scored inside that owner's rows),
    # or through the vector index for owners with at least ann-min-rows memories, as the app's search does.
    _OWN_ROW = ("SELECT q.memory_id, m.user_id, m.text, m.embedding IS NOT NULL,"
                " CASE WHEN m.embedder = %(embedder)s AND (m.expires_at IS NULL OR m.expires_at > now())"
                " THEN 1 - (m.embedding <=> q.vec) END, m.conversation_id, m.created_at, m.expires_at"
                " FROM own_text q LEFT JOIN memories m ON m.id = q.memory_id")
    _ELIGIBLE = ("x.embedding IS NOT NULL AND x.embedder = %(embedder)s"
                 " AND (x.expires_at IS NULL OR x.expires_at > now())")
    # Every pair of an owner's memories is scored (one distance each), but only those that come near the memory's own
    # score leave the join: the aggregate then holds a few rows, not the millions of pairs. Both sides are sorted by
    # owner and merged: a nested loop reads the owner's heap rows again for every memory of theirs (3x slower at
    # 100,000 memories), and a hash join walks one chain of the owner's rows per memory (2x).
    _EXACT_NEAR = (f"WITH mine AS MATERIALIZED (SELECT x.id, x.user_id, x.embedding FROM memories x"
                   f" WHERE x.user_id = ANY(%(owners)s) AND {_ELIGIBLE}),"
                   f" own AS MATERIALIZED (SELECT q.memory_id, q.owner_id, q.vec, (SELECT x.embedding <=> q.vec"
                   f" FROM memories x WHERE x.id = q.memory_id AND {_ELIGIBLE}) AS d"
                   f" FROM own_text q WHERE NOT q.ann AND q.vec IS NOT NULL)"
                   f" SELECT o.memory_id, 1 - min(x.embedding <=> o.vec) FROM own o JOIN mine x"
                   f" ON x.user_id = o.owner_id AND x.id <> o.memory_id"
                   f" WHERE (x.embedding <=> o.vec) <= o.d + {NEAR_TIE} GROUP BY o.memory_id")
    _ANN = (f"SELECT q.memory_id, 1 - best.d FROM own_text q CROSS JOIN LATERAL (SELECT d FROM (SELECT x.id,"
            f" x.embedding <=> q.vec AS d FROM memories x WHERE x.user_id = q.owner_id AND {_ELIGIBLE}"
            f" ORDER BY x.embedding <=> q.vec LIMIT 26) fetched WHERE id <> q.memory_id ORDER BY d, id LIMIT 1) best"
            f" WHERE q.ann AND q.vec IS NOT NULL")
    _BEST_OTHER = (f"SELECT q.memory_id, best.id FROM own_text q CROSS JOIN LATERAL (SELECT x.id FROM memories x"
                   f" WHERE x.user_id = q.owner_id AND x.id <> q.memory_id AND {_ELIGIBLE}"
                   f" ORDER BY x.embedding <=> q.vec, x.id LIMIT 1) best WHERE q.memory_id = ANY(%(ids)s)")
    # Memories whose owners are checked together: the pairs of a part are sorted in memory (about 1 kB a memory).
    PART_MEMORIES = 20_000

    def _ann(self, app: RunningApp) -> tuple[str, int]:
        index = str(app.health.get("index", "hnsw"))
        return index, int(app.settings.get("ann-min-rows", 100_000)) if index != "none" else 1 << 62

    def _tune_ann(self, conn: psycopg.Connection, app: RunningApp) -> None:
        """The session settings of the app's ANN path (memory_store.MemoryStore._tune_ann)."""
        conn.execute("SET LOCAL enable_seqscan = off")
        conn.execute("SET LOCAL enable_sort = off")
        index, _ = self._ann(app)
        if index == "hnsw":
            conn.execute("SET LOCAL hnsw.ef_search = 400")
        elif "ivfflat-before-load" not in app.health.get("faults", []):
            row = conn.execute("SELECT (regexp_match(indexdef, 'lists=''?(\\d+)'))[1] FROM pg_indexes"
                               " WHERE indexname = 'memories_embedding_ivfflat'").fetchone()
            conn.execute(f"SET LOCAL ivfflat.probes = {int(row[0]) if row and row[0] else 1}")

    def _own_text_part(self, app: RunningApp, rows: list[OwnTextQuery],
                       ann_owners: set[str]) -> list[OwnTextResult]:
        owners = sorted({q.owner_id for q in rows} - ann_owners)
        params = {"embedder": str(app.health.get("embedder", "hash-ngram-v1")), "owners": owners}
        with psycopg.connect(str(app.pg_dsn), connect_timeout=10) as conn:
            register_vector(conn)
            conn.execute("CREATE TEMP TABLE own_text (memory_id text, owner_id text, vec vector, ann bool)")
            with conn.cursor() as cur, cur.copy("COPY own_text FROM STDIN WITH (FORMAT BINARY)") as copy:
                copy.set_types(["text", "text", "vector", "bool"])
                for q in rows:
                    vec = np.frombuffer(q.vector, dtype="<f4") if q.vector is not None else None
                    copy.write_row((q.memory_id, q.owner_id, vec, q.owner_id in ann_owners))
            conn.execute("ANALYZE own_text")
            near: dict[str, float] = {}
            if owners:
                conn.execute("SET LOCAL work_mem = '256MB'")  # a part's rows sorted in memory, not spilled
                conn.execute("SET LOCAL enable_nestloop = off")
                conn.execute("SET LOCAL enable_hashjoin = off")
                near = dict(conn.execute(self._EXACT_NEAR, params).fetchall())
                for setting in ("work_mem", "enable_nestloop", "enable_hashjoin"):
                    conn.execute(f"RESET {setting}")
            found = conn.execute(self._OWN_ROW, params).fetchall()
            if ann_owners & {q.owner_id for q in rows}:
                self._tune_ann(conn, app)
                near.update(conn.execute(self._ANN, params).fetchall())
            # Which memory outranks each outranked one: few, looked up one by one.
            outranked = [r[0] for r in found if r[4] is not None and near.get(r[0], -2.0) > r[4]]
            better: dict[str, str] = (dict(conn.execute(self._BEST_OTHER, {**params, "ids": outranked}).fetchall())
                                      if outranked else {})
            conn.rollback()
        return [OwnTextResult(r[0], r[1], r[2], bool(r[3]), r[4], near.get(r[0]), better.get(r[0]),
                              {"conversation": r[5], "created_at": r[6] and r[6].isoformat(),
                               "expires_at": r[7] and r[7].isoformat()}) for r in found]

    def _parts(self, queries: list[OwnTextQuery], counts: dict[str, int]) -> list[list[OwnTextQuery]]:
        """The queries in parts of at most PART_MEMORIES and an eighth of the pairs to score (a query scores every
        row of its owner), the costliest first, so that the two connections finish together. An owner's queries stay
        together unless they alone cost more than that."""
        by_owner: dict[str, list[OwnTextQuery]] = {}
        for q in queries:
            by_owner.setdefault(q.owner_id, []).append(q)
        most = max(1, sum(len(mine) * counts.get(o, 0) for o, mine in by_owner.items()) // 8)
        groups: list[tuple[int, list[OwnTextQuery]]] = []
        for owner, mine in by_owner.items():
            step = max(1, most // max(1, counts.get(owner, 0)))
            groups += [(len(mine[i:i + step]) * counts.get(owner, 0), mine[i:i + step])
                       for i in range(0, len(mine), step)]
        parts: list[list[OwnTextQuery]] = [[]]
        spent = [0]
        for cost, group in sorted(groups, key=lambda g: g[0], reverse=True):
            if parts[-1] and (len(parts[-1]) + len(group) > self.PART_MEMORIES or spent[-1] + cost > most):
                parts.append([])
                spent.append(0)
            parts[-1] += group
            spent[-1] += cost
        return [part for _, part in sorted(zip(spent, parts, strict=True), key=lambda p: p[0], reverse=True)]

    def recall_by_own_text(self, app: RunningApp, queries: list[OwnTextQuery]) -> list[OwnTextResult]:
        _, ann_min_rows = self._ann(app)
        owners = sorted({q.owner_id for q in queries})
        with psycopg.connect(str(app.pg_dsn), connect_timeout=10) as conn:
            counts: dict[str, int] = dict(conn.execute("SELECT user_id, count(*) FROM memories WHERE user_id = ANY(%s)"
                                                       " GROUP BY user_id", (owners,)).fetchall())
        ann_owners = {o for o, n in counts.items() if n >= ann_min_rows}
        parts = self._parts(queries, counts)
        # Two connections take the parts in turn: PostgreSQL runs each on a core of its own.
        with ThreadPoolExecutor(2) as pool:
            return [result for part in pool.map(lambda p: self._own_text_part(app, p, ann_owners), parts)
                    for result in part]

    def nearest(self, app: RunningApp, owner_id: str, vectors: list[bytes | None], k: int) -> list[list[Hit]]:
        embedder = str(app.health.get("embedder", "hash-ngram-v1"))
        out: list[list[Hit]] = []
        with psycopg.connect(str(app.pg_dsn), connect_timeout=10) as conn:
            register_vector(conn)
            for vector in vectors:
                if vector is None:
                    out.append([])
                    continue
                rows = conn.execute(
                    "WITH mine AS MATERIALIZED (SELECT id, text, embedding FROM memories WHERE user_id = %s AND"
                    " embedding IS NOT NULL AND embedder = %s AND (expires_at IS NULL OR expires_at > now()))"
                    " SELECT id, text, 1 - (embedding <=> %s) AS score FROM mine"
                    " ORDER BY embedding <=> %s, id LIMIT %s",
                    (owner_id, embedder, np.frombuffer(vector, dtype="<f4"), np.frombuffer(vector, dtype="<f4"),
                     k)).fetchall()
                out.append([Hit(r[0], float(r[2]), r[1]) for r in rows])
        return out

    def remove_vector(self, app: RunningApp, memory_id: str) -> None:
        with psycopg.connect(str(app.pg_dsn), connect_timeout=10, autocommit=True) as conn:
            changed = conn.execute("UPDATE memories SET embedding = NULL WHERE id = %s", (memory_id,)).rowcount
        if changed != 1:
            raise DriverError(f"no memory {memory_id} in the store to remove the vector of")

    def vector_index_scans(self, app: RunningApp) -> dict[str, IndexScans]:
        with psycopg.connect(str(app.pg_dsn), connect_timeout=10) as conn:
            return vector_index_scans(conn)

    def vector_indexes(self, app: RunningApp) -> dict[str, VectorIndex]:
        with psycopg.connect(str(app.pg_dsn), connect_timeout=10) as conn:
            return vector_indexes(conn)

    # The rows of one HNSW graph, unless the bulk load was given --index-graph-rows (memchat/README.md, migrate).
    GRAPH_ROWS = 100_000

    def promised_vector_indexes(self, app: RunningApp, given: Sequence[str] = ()) -> dict[str, PromisedIndex]:
        """As of the app's last start or bulk load (`given`: the words given to the bulk load's tool), on the memories
        its store holds. memchat/README.md: `--index hnsw` keeps one graph, `memories_embedding_hnsw`, up to
        `--index-graph-rows` memories with a vector (100,000), and a bulk load builds more in parts of at most about
        that many, one partial index `memories_embedding_hnsw_<part>_of_<parts>` each, owners split by
        `mod(hashtext(user_id) & 2147483647, parts)`; `--index none` builds none. `--index ivfflat`
        (memchat/memory_store.py, _build_ivfflat) builds `memories_embedding_ivfflat` once the store holds memories,
        with pgvector's recommended lists: one per 1,000 memories with a vector (at least one), the square root of
        their number past a million."""
        index = str(app.health.get("index", "hnsw"))
        with psycopg.connect(str(app.pg_dsn), connect_timeout=10) as conn:
            rows = int(scalar(conn, "SELECT count(*) FROM memories WHERE embedding IS NOT NULL"))
        if index == "ivfflat":
            lists = max(1, int(math.sqrt(rows)) if rows > 1_000_000 else rows // 1000)
            return {"memories_embedding_ivfflat": PromisedIndex("ivfflat", (("lists", str(lists)),))} if rows else {}
        if index != "hnsw":
            return {}
        words = list(given)
        graph_rows = (int(words[words.index("--index-graph-rows") + 1]) if "--index-graph-rows" in words[:-1]
                      else self.GRAPH_ROWS)
        parts = max(1, -(-rows // max(1, graph_rows)))
        if parts == 1:
            return {"memories_embedding_hnsw": PromisedIndex("hnsw")}
        return {f"memories_embedding_hnsw_{part}_of_{parts}": PromisedIndex(
            "hnsw", predicate=f"(mod((hashtext(user_id) & 2147483647), {parts}) = {part})") for part in range(parts)}
