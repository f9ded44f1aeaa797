"""Copy the legacy Redis memories into PostgreSQL + pgvector, in batches; idempotent and resumable.

Rows already present (same id) are skipped, so a run that stopped half way is finished by running it again. Rows
written under another embedding model are re-embedded with the target model. The index is built after loading.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

import redis

from memchat import legacy_store
from memchat.db import Pool
from memchat.embedders import get_embedder
from memchat.facts import parse_fact
from memchat.memory_store import MemoryStore
from memchat.settings import Settings


@dataclass
class Counts:
    read: int = 0
    written: int = 0
    skipped_present: int = 0
    skipped_unknown_owner: int = 0
    reembedded: int = 0

    def summary(self) -> str:
        return (f"read {self.read}, written {self.written}, skipped {self.skipped_present + self.skipped_unknown_owner}"
                f" ({self.skipped_present} already present, {self.skipped_unknown_owner} with an unknown owner),"
                f" re-embedded {self.reembedded}")


def _batches(ids: list[str], size: int, drop_last_partial: bool) -> list[list[str]]:
    if drop_last_partial:  # the shipped bug: range() stops before a final batch shorter than `size`
        return [ids[i:i + size] for i in range(0, len(ids) - size + 1, size)]
    return [ids[i:i + size] for i in range(0, len(ids), size)]


def _when(text: str) -> datetime | None:
    if not text:
        return None
    when = datetime.fromisoformat(text)
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def migrate(client: redis.Redis, pool: Pool, settings: Settings, batch_size: int = 500) -> Counts:
    if batch_size < 1:
        raise ValueError("--batch-size must be at least 1")
    target = get_embedder(settings.embedder)
    counts = Counts()
    ids = legacy_store.all_ids(client)
    for batch in _batches(ids, batch_size, settings.has("migration-drops-last-batch")):
        records = legacy_store.fetch(client, batch)
        counts.read += len(records)
        vectors = []
        for rec in records:
            if rec["embedder"] == target.name and rec["embedding"] is not None:
                vectors.append(rec["embedding"])
            else:
                vectors.append(target.embed(rec["text"]))
                counts.reembedded += 1
        if settings.has("migration-null-embedding") and vectors:
            vectors = vectors[:-1] + [None]  # the shipped bug: a batch call that drops its last result
        with pool.transaction() as conn:
            known = {r[0] for r in conn.execute("SELECT id FROM users WHERE id = ANY(%s)",
                                                ([r["user_id"] for r in records],)).fetchall()}
            for rec, vec in zip(records, vectors, strict=True):
                if rec["user_id"] not in known:
                    counts.skipped_unknown_owner += 1
                    continue
                fact = parse_fact(rec["text"])
                cur = conn.execute(
                    "INSERT INTO memories (id, user_id, conversation_id, text, fact_key, embedding, embedder, dims,"
                    " created_at, expires_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
                    " ON CONFLICT (id) DO NOTHING",
                    (rec["id"], rec["user_id"], rec["conversation_id"] or None, rec["text"],
                     fact.key if fact else None, vec, target.name, target.dims,
                     _when(rec["created_at"]) or datetime.now(UTC), _when(rec["expires_at"])),
                )
                if cur.rowcount:
                    counts.written += 1
                else:
                    counts.skipped_present += 1
    MemoryStore(pool, settings).build_index()
    return counts
