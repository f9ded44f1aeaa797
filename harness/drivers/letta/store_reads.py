"""Reads of Letta's store (PostgreSQL + pgvector): what a deleted account or memory leaves in it, its archival
passages exported and ranked as Letta ranks them, a vector removed, its vector index scans."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
import psycopg
from pgvector.psycopg import register_vector
from psycopg import sql

from harness.app.app_launcher import RunningApp
from harness.drivers.base import Account, DriverError, Hit, OwnTextQuery, OwnTextResult
from harness.drivers.letta.api import EMBEDDER, STORED_DIMS, _floats
from harness.drivers.letta.common import LettaBase
from harness.services.databases import IndexScans, VectorIndex, scalar, vector_index_scans, vector_indexes
from model_server import embeddings


class LettaStoreReads(LettaBase):
    def remains_of(self, app: RunningApp, account: Account, conversation_ids: list[str],
                   memory_ids: list[str]) -> dict[str, int]:
        """Rows Letta's tables still hold of the deleted user, by table and what ties them to the user: every table
        with a column of the user's id, organization, agent or conversations (found in the catalogue, so tables a
        newer Letta adds are counted too), and the user's and memories' own rows."""
        if not app.pg_dsn:
            raise DriverError("the Letta driver needs the app's database (--pg-dsn) to read what it keeps")
        ties = {"user_id": ("the user", [account.id]), "created_by_id": ("the user", [account.id]),
                "organization_id": ("the organization", [self._orgs.get(account.id, "")]),
                "agent_id": ("the agent", [self._agents.get(account.id, "")]),
                "conversation_id": ("the conversations", conversation_ids)}
        counts: dict[str, int] = {}
        with psycopg.connect(app.pg_dsn, connect_timeout=10) as conn:
            columns = conn.execute("SELECT table_name, column_name FROM information_schema.columns "
                                   "WHERE table_schema = 'public' AND column_name = ANY(%s) ORDER BY 1, 2",
                                   [list(ties)]).fetchall()
            checks = [(table, column, *ties[column]) for table, column in columns]
            checks += [("organizations", "id", *ties["organization_id"]), ("users", "id", *ties["user_id"]),
                       ("agents", "id", *ties["agent_id"]), ("archival_passages", "id", "the memories", memory_ids),
                       ("conversations", "id", *ties["conversation_id"])]
            for table, column, what, values in checks:
                query = sql.SQL("SELECT count(*) FROM {} WHERE {} = ANY(%s)").format(sql.Identifier(table),
                                                                                    sql.Identifier(column))
                counts[f"{table}.{column} of {what}"] = int(scalar(conn, query, [list(values)]))
        return counts

    def memory_remains(self, app: RunningApp, memory_ids: list[str]) -> dict[str, int]:
        """Letta keeps an archival memory in one row of `archival_passages`, its vector in that row's `embedding`
        column (pgvector) and its tags in `passage_tags`: rows of each, and vectors, left of these memories. An
        archive may keep its vectors in Turbopuffer instead (`archives.vector_db_provider`), where the driver cannot
        look: it says so rather than count what it cannot see."""
        with self._store(app) as conn:
            elsewhere = scalar(conn, "SELECT count(*) FROM archives WHERE vector_db_provider::text <> 'NATIVE'")
            if elsewhere:
                raise DriverError(f"{elsewhere} of Letta's archives keep their vectors in Turbopuffer, which the "
                                  "letta driver cannot read: run Letta without LETTA_USE_TPUF")
            ids = [list(memory_ids)]
            return {
                "archival_passages rows": int(scalar(conn, "SELECT count(*) FROM archival_passages WHERE id = ANY(%s)",
                                                     ids)),
                "archival_passages.embedding vectors": int(scalar(
                    conn, "SELECT count(*) FROM archival_passages WHERE id = ANY(%s) AND embedding IS NOT NULL", ids)),
                "passage_tags rows": int(scalar(conn, "SELECT count(*) FROM passage_tags WHERE passage_id = ANY(%s)",
                                                ids)),
            }

    # The owner of an archival passage is the one user of its organization (the driver makes one per user).
    _OWNED = ("SELECT p.id, u.id AS owner, p.text, p.created_at, p.embedding_config->>'embedding_model' AS embedder,"
              " p.embedding FROM archival_passages p LEFT JOIN users u ON u.organization_id = p.organization_id")

    def _store(self, app: RunningApp) -> psycopg.Connection:
        if not app.pg_dsn:
            raise DriverError("the Letta driver needs the app's database (--pg-dsn) to read its store")
        conn = psycopg.connect(app.pg_dsn, connect_timeout=10, autocommit=True)
        register_vector(conn)
        return conn

    @staticmethod
    def _query_vector(vector: bytes) -> np.ndarray:
        """A query as Letta sends it to pgvector: the embedding zero-padded to the column's 4096 dimensions (which
        leaves every cosine distance as it is)."""
        values = np.frombuffer(vector, dtype="<f4")
        return np.pad(values, (0, STORED_DIMS - values.shape[0]))

    def embed(self, texts: list[str], embedder: str) -> list[bytes | None]:
        """As Letta's embedder (the model server's text-embedding-3-small) embeds them; None for a text with no
        feature, whose vector is all zeros and matches nothing."""
        if embedder != EMBEDDER:
            raise DriverError(f"Letta embeds with {EMBEDDER}, not {embedder!r}")
        vectors = [np.asarray(embeddings.embed(text, embedder), dtype="<f4") for text in texts]
        return [v.tobytes() if v.any() else None for v in vectors]

    def export_memories(self, app: RunningApp, path: Path) -> None:
        """Every archival passage with its owner, as stored (its vector cut back to its model's dimensions)."""
        with self._store(app) as conn, path.open("w", encoding="utf-8") as out:
            rows = conn.execute(f"SELECT DISTINCT ON (q.id) q.*, p.embedding_config->>'embedding_dim' FROM "
                                f"({self._OWNED}) q JOIN archival_passages p ON p.id = q.id ORDER BY q.id")
            for ident, owner, text, created, embedder, vector, dims in rows:
                stored = None if vector is None else _floats(vector)[:int(dims or STORED_DIMS)]
                out.write(json.dumps({
                    "id": ident, "user_id": owner, "conversation_id": None, "text": text,
                    "created_at": created.isoformat(), "expires_at": None, "embedder": embedder,
                    "embedding_f32": base64.b64encode(stored.tobytes()).decode() if stored is not None else None},
                    ensure_ascii=False) + "\n")

    def nearest(self, app: RunningApp, owner_id: str, vectors: list[bytes | None], k: int) -> list[list[Hit]]:
        """Letta's archival ranking (cosine distance over the owner's organization, nearest first), with pgvector's
        similarity as the score Letta does not give."""
        out: list[list[Hit]] = []
        with self._store(app) as conn:
            for vector in vectors:
                if vector is None:
                    out.append([])
                    continue
                query = self._query_vector(vector)
                rows = conn.execute(
                    "SELECT p.id, p.text, 1 - (p.embedding <=> %s) FROM archival_passages p JOIN users u"
                    " ON u.organization_id = p.organization_id WHERE u.id = %s AND p.embedding IS NOT NULL"
                    " ORDER BY p.embedding <=> %s, p.id LIMIT %s", (query, owner_id, query, k)).fetchall()
                out.append([Hit(r[0], float(r[2]), r[1]) for r in rows])
        return out

    def recall_by_own_text(self, app: RunningApp, queries: list[OwnTextQuery]) -> list[OwnTextResult]:
        results = []
        with self._store(app) as conn:
            for q in queries:
                row = conn.execute(f"SELECT owner, text, embedding IS NOT NULL FROM ({self._OWNED}) o WHERE id = %s",
                                   (q.memory_id,)).fetchone()
                if row is None:
                    results.append(OwnTextResult(q.memory_id, None, None, False, None, None))
                    continue
                own = other = other_id = None
                if q.vector is not None:
                    query = self._query_vector(q.vector)
                    own = scalar(conn, "SELECT 1 - (embedding <=> %s) FROM archival_passages WHERE id = %s",
                                 (query, q.memory_id))
                    best = conn.execute(
                        "SELECT p.id, 1 - (p.embedding <=> %s) FROM archival_passages p JOIN users u ON"
                        " u.organization_id = p.organization_id WHERE u.id = %s AND p.id <> %s AND p.embedding IS"
                        " NOT NULL ORDER BY p.embedding <=> %s LIMIT 1",
                        (query, q.owner_id, q.memory_id, query)).fetchone()
                    if best is not None:
                        other_id, other = best[0], float(best[1])
                own_score = float(own) if own is not None else None
                results.append(OwnTextResult(q.memory_id, row[0], row[1], bool(row[2]), own_score, other,
                                             other_id if own_score is not None and other is not None
                                             and other > own_score else None))
        return results

    def remove_vector(self, app: RunningApp, memory_id: str) -> None:
        with self._store(app) as conn:
            changed = conn.execute("UPDATE archival_passages SET embedding = NULL WHERE id = %s",
                                   (memory_id,)).rowcount
        if changed != 1:
            raise DriverError(f"no archival passage {memory_id} in Letta's store to remove the vector of")

    def vector_indexes(self, app: RunningApp) -> dict[str, VectorIndex]:
        """Of Letta's database, as it holds them (none in 0.16.8)."""
        with self._store(app) as conn:
            return vector_indexes(conn)

    def vector_index_scans(self, app: RunningApp) -> dict[str, IndexScans]:
        """Of Letta's database: none, as Letta 0.16.8 creates no vector index (its archival search scans the
        organization's passages)."""
        with self._store(app) as conn:
            return vector_index_scans(conn)
