"""Reads of Open WebUI's store: what is left of deleted memories (rows of its `memory` table, vectors in pgvector or
Chroma), and recall by a memory's own text (its row, and how its vector store scores the text)."""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from harness.app.app_launcher import RunningApp
from harness.drivers.base import DriverError, Hit, OwnTextQuery, OwnTextResult
from harness.drivers.open_webui.api import LEFT_BEHIND, OpenWebUIParts, search_memories
from harness.drivers.open_webui.store import (
    OwnTextScore,
    count_by_owner,
    iso,
    memory_rows_left,
    own_text_in_pgvector,
    read_memories,
    vectors_left_in_chroma,
    vectors_left_in_pgvector,
)
from harness.services.http_clients import client
from harness.vocabulary.recall import SCORE_TOLERANCE


class OpenWebUIStoreReads(OpenWebUIParts):
    def memory_remains(self, app: RunningApp, memory_ids: list[str]) -> dict[str, int]:
        """Rows of the `memory` table (SQLite or PostgreSQL) and vectors: on pgvector, `document_chunk` rows (the
        user's collection `user-memory-<id>`); on Chroma, read in its file `vector_db/chroma.sqlite3`, the
        collection's `embeddings` rows and the vectors its write-ahead log (`embeddings_queue`) still holds."""
        rows = {"memory table rows": memory_rows_left(app, self.postgresql, memory_ids)}
        if self._vectors_in_pgvector(app):
            return rows | vectors_left_in_pgvector(app, memory_ids)
        return rows | vectors_left_in_chroma(app, memory_ids)

    def recall_by_own_text(self, app: RunningApp, queries: list[OwnTextQuery]) -> list[OwnTextResult]:
        """Each memory's row from the `memory` table, and how its vector store scores the memory's own text: on
        pgvector, its cosine within the owner's collection (set-based, as its search computes it); on Chroma,
        which only the app reads, the owner's own memory search for the text over all of the owner's memories. A
        vector that does not give its own text the full score (a stale one, another model's) cannot reach the
        memory as itself."""
        rows = read_memories(app, self.postgresql, [q.memory_id for q in queries])
        scores = (self._own_text_in_pgvector(app, queries) if self._vectors_in_pgvector(app)
                  else self._own_text_searched(app, queries))
        results = []
        for query in queries:
            row, score = rows.get(query.memory_id), scores.get(query.memory_id)
            if row is None:
                results.append(OwnTextResult(query.memory_id, None, None, False, None, None))
                continue
            own = score.own if score is not None else None
            results.append(OwnTextResult(
                query.memory_id, row.user_id, row.content, bool(score and score.has_vector),
                own if own is not None and own >= 1 - SCORE_TOLERANCE else None,
                score.best_other if score else None, score.best_other_id if score else None,
                {"created_at": iso(row.created_at)}))
        return results

    def _vectors_in_pgvector(self, app: RunningApp) -> bool:
        """Where the driver's environment told the app to keep its vectors (VECTOR_DB=pgvector)."""
        return self.postgresql and LEFT_BEHIND not in app.settings

    @staticmethod
    def _own_text_in_pgvector(app: RunningApp, queries: list[OwnTextQuery]) -> dict[str, OwnTextScore]:
        return own_text_in_pgvector(app, [(q.memory_id, q.owner_id, None if q.vector is None else
                                           np.frombuffer(q.vector, dtype="<f4")) for q in queries])

    def _own_text_searched(self, app: RunningApp, queries: list[OwnTextQuery]) -> dict[str, OwnTextScore]:
        counts = count_by_owner(app, self.postgresql, sorted({q.owner_id for q in queries}))

        def one(query: OwnTextQuery) -> tuple[str, OwnTextScore]:
            hits = (self._search_as(app, query.owner_id, query.text, counts.get(query.owner_id, 1))
                    if query.vector is not None else [])
            own = next((h for h in hits if h.id == query.memory_id), None)
            other = next((h for h in hits if h.id != query.memory_id and not math.isnan(h.score)), None)
            return query.memory_id, OwnTextScore(own is not None, own.score if own else None,
                                                 other.score if other else None, other.id if other else None)

        with ThreadPoolExecutor(4) as pool:
            return dict(pool.map(one, queries))

    def _search_as(self, app: RunningApp, user_id: str, text: str, k: int) -> list[Hit]:
        token = self._tokens.get((app.base_url, user_id))
        if token is None:
            raise DriverError(f"no session of user {user_id} to search their memories with: import the owners first")
        with client(base_url=app.base_url, timeout=60,
                    headers={"Authorization": f"Bearer {token}"}) as http:
            return search_memories(http, text, k)
