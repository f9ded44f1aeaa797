"""Copy the legacy Redis memories into PostgreSQL + pgvector, in batches; idempotent and resumable.

Rows already present (same id) are skipped, so a run that stopped half way is finished by running it again. Rows
their owner deleted in the app (a tombstone each) are skipped too: a migration run again never brings them back. Rows
written under another embedding model are re-embedded with the target model. The index is built after loading.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from time import perf_counter
from zoneinfo import ZoneInfo

import psycopg
import redis

from memchat import legacy_store, legacy_times
from memchat.db import OWNER_INDEX, Pool
from memchat.embedders import get_embedder
from memchat.facts import parse_fact
from memchat.legacy_times import LegacyTimeError, parse_legacy_time, zone_named
from memchat.memory_store import MemoryStore, drop_hnsw_indexes
from memchat.settings import Settings


@dataclass
class Counts:
    read: int = 0
    written: int = 0
    skipped_present: int = 0
    skipped_deleted: int = 0  # deleted by their owner since an earlier run: tombstoned
    skipped_unknown_owner: int = 0
    reembedded: int = 0
    copy_s: float = 0.0  # reading Redis and writing the rows
    index_s: float = 0.0  # building the index after them
    outgrown: list[str] = field(default_factory=list)  # each HNSW graph that outgrew its build memory, for the operator

    def summary(self) -> str:
        """Tools parse its start, "read N, written N, skipped N (N already present": it stays as it is."""
        skipped = self.skipped_present + self.skipped_deleted + self.skipped_unknown_owner
        return (f"read {self.read}, written {self.written}, skipped {skipped} ({self.skipped_present} already present,"
                f" {self.skipped_deleted} deleted by their owner, {self.skipped_unknown_owner} with an unknown owner),"
                f" re-embedded {self.reembedded}; rows copied in {self.copy_s:.1f} s, index built in"
                f" {self.index_s:.1f} s")


def _batches(ids: list[str], size: int, drop_last_partial: bool) -> list[list[str]]:
    if drop_last_partial:  # the shipped bug: range() stops before a final batch shorter than `size`
        return [ids[i:i + size] for i in range(0, len(ids) - size + 1, size)]
    return [ids[i:i + size] for i in range(0, len(ids), size)]


class MigrationError(ValueError):
    """A legacy record the migration cannot take; one line naming the memory and the value."""


def _when(rec: dict, field: str, zone: ZoneInfo | None, wall_clock_as_utc: bool = False) -> datetime | None:
    """The legacy time as an aware UTC time: naive ones in the store's declared `zone` (memchat/legacy_times.py).
    `wall_clock_as_utc` is the fault migration-local-times-as-utc."""
    text = rec[field]
    if not text:
        return None
    try:
        if wall_clock_as_utc:
            parse_legacy_time(text, field, UTC)  # refuses what the clean migration refuses, but for the zone
            return legacy_times.wall_clock_as_utc(text)
        return parse_legacy_time(text, field, zone)
    except LegacyTimeError as e:
        raise MigrationError(f"memory {rec['id']}: {e}; fix it in Redis and run the migration again") from None


def _declared_zone(client: redis.Redis) -> ZoneInfo | None:
    name = legacy_store.declared_zone(client)
    try:
        return zone_named(name) if name else None
    except LegacyTimeError as e:
        raise MigrationError(f"the legacy store's {legacy_store.SETTINGS} timezone: {e}") from None


# A batch is COPYed (binary) straight into memories while the table was empty at the start and every owner is known
# to exist; otherwise into this table, then moved by one INSERT ... SELECT that skips present rows and unknown owners:
# a statement a batch instead of a statement a row. Made once a run (not once a batch: catalog churn) and emptied at
# each commit.
_STAGING = ("CREATE TEMP TABLE IF NOT EXISTS memchat_staging (id text, user_id text, conversation_id text, text text,"
            " fact_key text, embedding vector, embedder text, dims integer, created_at timestamptz,"
            " expires_at timestamptz) ON COMMIT DELETE ROWS")
_COLUMNS = "id, user_id, conversation_id, text, fact_key, embedding, embedder, dims, created_at, expires_at"
_TYPES = ["text", "text", "text", "text", "text", "vector", "text", "int4", "timestamptz", "timestamptz"]


def _copy(conn: psycopg.Connection, table: str, rows: list[tuple]) -> None:
    with conn.cursor() as cur, cur.copy(f"COPY {table} ({_COLUMNS}) FROM STDIN (FORMAT BINARY)") as copy:
        copy.set_types(_TYPES)
        for row in rows:
            copy.write_row(row)


_KNOWN_OWNER = "EXISTS (SELECT 1 FROM users u WHERE u.id = s.user_id)"
_DELETED = "EXISTS (SELECT 1 FROM memory_tombstones t WHERE t.user_id = s.user_id AND t.memory_id = s.id)"


def _write_batch(conn: psycopg.Connection, rows: list[tuple], counts: Counts, owners: set[str] | None,
                 respect_tombstones: bool = True) -> bool:
    """Writes one batch; returns whether the next may be COPYed straight (`owners`: the users known to exist, None
    once that is over; never while a tombstone exists). The straight COPY checks nothing the store does not: an owner
    deleted meanwhile or a row already there makes the store refuse it, and the batch is written again through the
    staging table, as every batch after it. `respect_tombstones` False is the fault migration-resurrects-deleted."""
    if owners is not None and all(row[1] in owners for row in rows):
        try:
            with conn.transaction():
                _copy(conn, "memories", rows)
            counts.written += len(rows)
            return True
        except (psycopg.errors.UniqueViolation, psycopg.errors.ForeignKeyViolation):
            owners = None
    deleted = _DELETED if respect_tombstones else "false"
    with conn.transaction():
        _copy(conn, "memchat_staging", rows)
        written, unknown, tombstoned = conn.execute(
            f"WITH moved AS (INSERT INTO memories ({_COLUMNS}) SELECT {_COLUMNS} FROM memchat_staging s"
            f" WHERE {_KNOWN_OWNER} AND NOT {deleted} ON CONFLICT (id) DO NOTHING RETURNING 1)"
            f" SELECT (SELECT count(*) FROM moved), (SELECT count(*) FROM memchat_staging s WHERE NOT {_KNOWN_OWNER}),"
            f" (SELECT count(*) FROM memchat_staging s WHERE {_KNOWN_OWNER} AND {deleted})").fetchone()
    counts.skipped_unknown_owner += unknown
    counts.skipped_deleted += tombstoned
    counts.written += written
    counts.skipped_present += len(rows) - unknown - tombstoned - written
    return owners is not None


@contextmanager
def _loading_session(conn: psycopg.Connection) -> Iterator[None]:
    """The migration's own session settings, undone before the connection goes back to the pool. Commits do not wait
    for the disk: a crash can lose the last batches' commits, and the next run (idempotent) copies them again."""
    conn.execute(_STAGING)
    conn.execute("SET synchronous_commit = off")
    try:
        yield
    finally:
        conn.execute("RESET synchronous_commit")
        conn.execute("DROP TABLE IF EXISTS memchat_staging")


def _drop_indexes_if_empty(conn: psycopg.Connection, settings: Settings) -> bool:
    """Into an empty table, load first and build the indexes once after: growing the HNSW graph row by row as
    100,000 rows arrive costs many times more, and the owner index's random inserts twice its build. Safe: an index
    over no rows serves nothing, and the owner index is made again by the next run or the app's next start if this
    one stops. ivfflat is left to build_index (and to the ivfflat-before-load fault, whose index must stay built on
    the empty table). Returns whether the table was empty."""
    if conn.execute("SELECT EXISTS (SELECT 1 FROM memories)").fetchone()[0]:
        return False
    if settings.index == "hnsw":
        drop_hnsw_indexes(conn)
    conn.execute("DROP INDEX IF EXISTS memories_user")
    return True


def _any_deleted(conn: psycopg.Connection) -> bool:
    """Whether an owner has deleted a memory: an empty table may be one its owners cleared, which the straight COPY
    would fill again with what they deleted."""
    return conn.execute("SELECT EXISTS (SELECT 1 FROM memory_tombstones)").fetchone()[0]


def _read_ahead(client: redis.Redis, batches: list[list[str]]) -> Iterator[list[dict]]:
    """Each batch's records, the next one read from Redis on a thread while the caller writes this one: the reply
    parsing (Python) then overlaps PostgreSQL's COPY and INSERT, which wait with the GIL released."""
    if not batches:
        return
    with ThreadPoolExecutor(max_workers=1) as reader:
        pending = reader.submit(legacy_store.fetch, client, batches[0])
        for following in [*batches[1:], None]:
            records = pending.result()
            pending = reader.submit(legacy_store.fetch, client, following) if following is not None else None
            yield records


def migrate(client: redis.Redis, pool: Pool, settings: Settings, batch_size: int = 500) -> Counts:
    if batch_size < 1:
        raise MigrationError("--batch-size must be at least 1")
    target = get_embedder(settings.embedder)
    counts = Counts()
    ids = legacy_store.all_ids(client)
    zone = _declared_zone(client)
    local_as_utc = settings.has("migration-local-times-as-utc")
    reset_created, lose_conversation = (settings.has(f) for f in ("migration-created-at-reset",
                                                                    "migration-drops-conversation"))
    # The fault migration-resurrects-deleted checks presence in the live table only.
    respect_tombstones = not settings.has("migration-resurrects-deleted")
    started = perf_counter()
    with pool.connection() as conn, _loading_session(conn):
        # Straight COPYs while the table was empty: no row can be there yet, and the owners are checked here.
        owners = None
        if _drop_indexes_if_empty(conn, settings) and not (respect_tombstones and _any_deleted(conn)):
            owners = {r[0] for r in conn.execute("SELECT id FROM users")}
        for records in _read_ahead(client, _batches(ids, batch_size, settings.has("migration-drops-last-batch"))):
            counts.read += len(records)
            vectors = []
            for rec in records:
                if rec[legacy_store.NO_VECTOR]:
                    vectors.append(None)  # stored without a vector on purpose: migrated so, never embedded
                elif rec["embedder"] == target.name and rec["embedding"] is not None:
                    vectors.append(rec["embedding"])
                else:
                    vectors.append(target.embed(rec["text"]))
                    counts.reembedded += 1
            if settings.has("migration-null-embedding") and vectors:
                vectors = vectors[:-1] + [None]  # the shipped bug: a batch call that drops its last result
            now = datetime.now(UTC)
            rows = []
            for rec, vec in zip(records, vectors, strict=True):
                fact = parse_fact(rec["text"])
                conversation = None if lose_conversation else rec["conversation_id"] or None
                created = now if reset_created else _when(rec, "created_at", zone, local_as_utc) or now
                rows.append((rec["id"], rec["user_id"], conversation, rec["text"], fact.key if fact else None, vec,
                             target.name, target.dims, created, _when(rec, "expires_at", zone, local_as_utc)))
            if rows:
                if not _write_batch(conn, rows, counts, owners, respect_tombstones):
                    owners = None
        conn.execute(OWNER_INDEX)
    counts.copy_s = perf_counter() - started
    counts.outgrown = MemoryStore(pool, settings).build_index()
    counts.index_s = perf_counter() - started - counts.copy_s
    return counts
