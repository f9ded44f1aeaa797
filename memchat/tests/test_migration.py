"""The legacy Redis store and the migration into PostgreSQL + pgvector."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import numpy as np
import psycopg
import pytest
import redis
from pgvector.psycopg import register_vector

from memchat import legacy_store
from memchat.db import Pool
from memchat.embedders import get_embedder
from memchat.memory_store import IndexBuildError, MemoryStore
from memchat.migration import migrate
from memchat.tests.helpers import (
    LEGACY_GHOST,
    LEGACY_OWNERS,
    add_user,
    legacy_records,
    migration_counts,
    settings_for,
)

N = 30
GHOSTS = (4, 15, 29)
KNOWN = N - len(GHOSTS)


@pytest.fixture
def legacy(redis_url: str) -> Iterator[redis.Redis]:
    client = legacy_store.connect(redis_url)
    assert legacy_store.put(client, legacy_records(N, GHOSTS), "hash-ngram-v1") == N
    yield client
    client.close()


@pytest.fixture
def target(db: str) -> Iterator[Pool]:
    for uid in LEGACY_OWNERS:
        add_user(db, uid, "x")
    pool = Pool(db, size=2)
    yield pool
    pool.close()


def rows(dsn: str) -> dict[str, tuple]:
    with psycopg.connect(dsn) as conn:
        register_vector(conn)
        return {r[0]: r[1:] for r in conn.execute(
            "SELECT id, user_id, conversation_id, text, embedding, embedder, created_at, expires_at, fact_key"
            " FROM memories ORDER BY id").fetchall()}


def test_the_legacy_store_round_trips_records(legacy) -> None:
    got = {r["id"]: r for r in legacy_store.iter_all(legacy, batch=7)}
    assert list(got) == sorted(got) and len(got) == N
    for rec in legacy_records(N, GHOSTS):
        back = got[rec["id"]]
        assert (back["user_id"], back["text"], back["embedder"]) == (rec["user_id"], rec["text"], "hash-ngram-v1")
        want = get_embedder("hash-ngram-v1").embed(rec["text"])
        assert (back["embedding"] is None) == (want is None)
        if want is not None:
            assert np.allclose(back["embedding"], want, atol=1e-7)


def test_the_legacy_search_scores_in_the_app(legacy) -> None:
    hits = legacy_store.search(legacy, "u1", "What is my dog called?", "hash-ngram-v1", k=3, threshold=0.25)
    texts = {r["id"]: r["text"] for r in legacy_records(N, GHOSTS)}
    assert hits and all("dog" in texts[i] for i, _ in hits)
    assert all(i in {r["id"] for r in legacy_records(N, GHOSTS) if r["user_id"] == "u1"} for i, _ in hits)


@pytest.mark.parametrize("batch_size", [1, 7, 10, 100], ids=["1", "7", "exact-multiple-10", "larger-than-rows"])
def test_every_row_is_copied_whatever_the_batch_size(legacy, target, db, batch_size: int) -> None:
    counts = migrate(legacy, target, settings_for(db), batch_size=batch_size)
    assert (counts.read, counts.written, counts.skipped_present, counts.skipped_unknown_owner) == (
        N, KNOWN, 0, len(GHOSTS))
    assert counts.reembedded == 1  # only the record that never had an embedding is embedded again (to nothing)
    assert counts.summary().startswith(f"read {N}, written {KNOWN}, skipped {len(GHOSTS)}")
    copied = rows(db)
    assert len(copied) == KNOWN
    for rec in legacy_records(N, GHOSTS):
        if rec["user_id"] == LEGACY_GHOST:
            assert rec["id"] not in copied
            continue
        user_id, conversation_id, text, embedding, embedder, created, expires, fact_key = copied[rec["id"]]
        assert (user_id, conversation_id, text, embedder) == (rec["user_id"], rec["conversation_id"] or None,
                                                               rec["text"], "hash-ngram-v1")
        assert created == datetime.fromisoformat(rec["created_at"])
        assert expires == (datetime.fromisoformat(rec["expires_at"]) if rec["expires_at"] else None)
        want = get_embedder("hash-ngram-v1").embed(rec["text"])
        if want is None:
            assert embedding is None and fact_key is None
        else:
            assert np.array_equal(embedding.to_numpy(), want)
            assert fact_key is not None


def test_a_second_run_changes_nothing_and_says_so(legacy, target, db) -> None:
    migrate(legacy, target, settings_for(db), batch_size=7)
    before = rows(db)
    counts = migrate(legacy, target, settings_for(db), batch_size=7)
    assert (counts.read, counts.written, counts.skipped_present, counts.skipped_unknown_owner) == (
        N, 0, KNOWN, len(GHOSTS))
    assert rows(db) == before


def test_a_run_that_stopped_half_way_is_finished_by_the_next(legacy, target, db) -> None:
    first_half = legacy_store.all_ids(legacy)[:12]
    later = legacy_store.all_ids(legacy)[12:]
    legacy.zrem(legacy_store.ALL, *later)  # the first run sees only the first 12 ids
    migrate(legacy, target, settings_for(db), batch_size=5)
    assert set(rows(db)) == {i for i in first_half if i not in {f"lg_{g:03d}" for g in GHOSTS}}
    legacy.zadd(legacy_store.ALL, dict.fromkeys(later, 0))
    counts = migrate(legacy, target, settings_for(db), batch_size=5)
    assert counts.skipped_present == len(rows(db)) - counts.written
    assert len(rows(db)) == KNOWN


def test_rows_are_re_embedded_when_the_target_model_differs(legacy, target, db) -> None:
    counts = migrate(legacy, target, settings_for(db, embedder="hash-ngram-v2"), batch_size=7)
    assert counts.reembedded == N and counts.written == KNOWN
    v2 = get_embedder("hash-ngram-v2")
    for _id, (_u, _c, text, embedding, embedder, *_rest) in rows(db).items():
        assert embedder == "hash-ngram-v2"
        want = v2.embed(text)
        assert (embedding is None and want is None) or np.array_equal(embedding.to_numpy(), want)
    hits = MemoryStore(target, settings_for(db, embedder="hash-ngram-v2")).search(
        "u1", "What is my dog called?", datetime(2026, 1, 1, tzinfo=UTC), k=10)
    assert hits and all("dog" in h.text for h in hits)


def test_unknown_owners_are_skipped_and_counted(legacy, target, db) -> None:
    add_user(db, "someone-else", "x")
    counts = migrate(legacy, target, settings_for(db), batch_size=4)
    assert counts.skipped_unknown_owner == len(GHOSTS)
    with psycopg.connect(db) as conn:
        assert conn.execute("SELECT count(*) FROM memories WHERE user_id = %s", (LEGACY_GHOST,)).fetchone()[0] == 0
    add_user(db, LEGACY_GHOST, "x")  # once the owner exists, a re-run brings their rows over
    again = migrate(legacy, target, settings_for(db), batch_size=4)
    assert (again.written, again.skipped_unknown_owner, again.skipped_present) == (len(GHOSTS), 0, KNOWN)


def test_migrated_memories_are_recalled(legacy, target, db) -> None:
    migrate(legacy, target, settings_for(db), batch_size=7)
    store = MemoryStore(target, settings_for(db))
    hits = store.search("u2", "What is my flight number?", datetime(2026, 1, 1, tzinfo=UTC), k=10)
    want = {r["id"] for r in legacy_records(N, GHOSTS) if r["user_id"] == "u2" and "flight" in r["text"]}
    assert {h.id for h in hits[:len(want)]} == want  # the other "number" facts rank below


@pytest.mark.parametrize("kind", ["hnsw", "ivfflat"])
def test_the_index_is_built_after_loading(legacy, target, db, kind: str) -> None:
    migrate(legacy, target, settings_for(db, index=kind), batch_size=7)
    with psycopg.connect(db) as conn:
        indexes = [r[0] for r in conn.execute(
            "SELECT indexdef FROM pg_indexes WHERE tablename = 'memories' AND indexdef ILIKE %s",
            (f"%USING {kind}%",)).fetchall()]
    assert len(indexes) == 1


def test_a_batch_size_below_one_is_refused(legacy, target, db) -> None:
    with pytest.raises(ValueError, match="batch-size"):
        migrate(legacy, target, settings_for(db), batch_size=0)
    assert rows(db) == {}


def test_an_index_made_at_start_on_the_empty_table_is_built_again_after_loading(legacy, target, db) -> None:
    MemoryStore(target, settings_for(db)).ensure_index()  # as a server started on the new database does
    with target.connection() as conn:
        default = conn.execute("SHOW maintenance_work_mem").fetchone()[0]
    migrate(legacy, target, settings_for(db, index_build_memory="96MB"), batch_size=7)
    with psycopg.connect(db) as conn:
        assert conn.execute("SELECT count(*) FROM pg_indexes WHERE indexname = 'memories_embedding_hnsw'"
                            ).fetchone()[0] == 1
    with target.connection() as one, target.connection() as two:  # the build's settings stay on no connection
        assert [c.execute("SHOW maintenance_work_mem").fetchone()[0] for c in (one, two)] == [default, default]
    assert default != "96MB"


def test_an_index_build_memory_postgresql_refuses_is_one_clear_error(target, db) -> None:
    with pytest.raises(IndexBuildError, match="index build memory '100TB' refused by PostgreSQL"):
        MemoryStore(target, settings_for(db, index_build_memory="100TB")).build_index()


def test_an_empty_legacy_store_migrates_nothing(redis_url, target, db) -> None:
    client = legacy_store.connect(redis_url)
    try:
        assert migration_counts(migrate(client, target, settings_for(db)).summary()) == (
            "read 0, written 0, skipped 0 (0 already present, 0 deleted by their owner, 0 with an unknown owner),"
            " re-embedded 0")
    finally:
        client.close()


def test_the_owner_index_dropped_for_a_load_into_an_empty_table_is_built_again(legacy, target, db) -> None:
    migrate(legacy, target, settings_for(db), batch_size=7)
    with psycopg.connect(db) as conn:
        assert conn.execute("SELECT indexdef FROM pg_indexes WHERE indexname = 'memories_user'").fetchone()[0] \
            .endswith("(user_id, created_at)")


def _one_row(rec: dict) -> tuple:
    when = datetime.fromisoformat(rec["created_at"])
    return (rec["id"], rec["user_id"], None, rec["text"], None, None, "hash-ngram-v1", 256, when, None)


def test_a_batch_the_store_refuses_straight_is_written_again_row_by_row(legacy, target, db) -> None:
    from memchat.migration import Counts, _loading_session, _write_batch

    records = legacy_records(N, GHOSTS)[:3]
    with target.connection() as conn, _loading_session(conn):
        conn.execute("INSERT INTO memories (id, user_id, text, embedder, dims, created_at)"
                     " VALUES (%s, %s, 'there first', 'hash-ngram-v1', 256, now())", (records[0]["id"], "u1"))
        counts = Counts()
        # a row already there: the straight COPY is refused, the batch moves through the staging table
        assert not _write_batch(conn, [_one_row(r) for r in records], counts, set(LEGACY_OWNERS))
        assert (counts.written, counts.skipped_present, counts.skipped_unknown_owner) == (2, 1, 0)
        # an owner the run believed in but the store no longer has: refused straight, skipped and counted
        gone = {**legacy_records(N, GHOSTS)[4], "id": "lg_new"}
        counts = Counts()
        assert not _write_batch(conn, [_one_row(gone)], counts, {LEGACY_GHOST})
        assert (counts.written, counts.skipped_unknown_owner) == (0, 1)
    assert rows(db)[records[0]["id"]][2] == "there first"


# -- what owners deleted stays deleted --------------------------------------------------------------------------------

DELETED_AT = datetime(2026, 2, 1, tzinfo=UTC)


def test_a_memory_its_owner_deleted_is_never_copied_again(legacy, target, db) -> None:
    migrate(legacy, target, settings_for(db), batch_size=7)
    store = MemoryStore(target, settings_for(db))
    assert store.delete("u2", "lg_001", DELETED_AT)
    cleared = store.clear("u1", DELETED_AT)
    kept = rows(db)
    counts = migrate(legacy, target, settings_for(db), batch_size=7)
    assert rows(db) == kept and "lg_001" not in kept and {r[0] for r in kept.values()} == {"u2"}
    assert (counts.read, counts.written, counts.skipped_present, counts.skipped_deleted,
            counts.skipped_unknown_owner) == (N, 0, len(kept), 1 + cleared, len(GHOSTS))
    assert counts.summary().startswith(f"read {N}, written 0, skipped {N} ({len(kept)} already present,"
                                       f" {1 + cleared} deleted by their owner, {len(GHOSTS)} with an unknown owner)")


def test_a_table_its_owners_emptied_is_not_loaded_straight_again(legacy, target, db) -> None:
    """An empty table is COPYed into straight, unchecked; not one whose rows their owners deleted."""
    migrate(legacy, target, settings_for(db), batch_size=7)
    store = MemoryStore(target, settings_for(db))
    assert store.clear("u1", DELETED_AT) + store.clear("u2", DELETED_AT) == KNOWN
    legacy_store.put(legacy, [{"id": "lg_new", "user_id": "u1", "text": "My shoe size is 42.",
                               "created_at": "2026-01-05T08:00:00+00:00"}], "hash-ngram-v1")
    counts = migrate(legacy, target, settings_for(db), batch_size=7)
    assert set(rows(db)) == {"lg_new"}  # only what was never deleted
    assert (counts.written, counts.skipped_deleted, counts.skipped_present) == (1, KNOWN, 0)
