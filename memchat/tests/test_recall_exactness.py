"""Recall equals a brute-force cosine over the owner's rows, for every owner, on clustered data, per index kind and
search path (exact scan, or the ANN index for owners with at least `ann_min_rows` rows)."""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from urllib.parse import urlsplit

import numpy as np
import psycopg
import pytest

from memchat import corpus
from memchat.db import Pool
from memchat.embedders import get_embedder
from memchat.memory_store import MemoryStore, hnsw_parts
from memchat.settings import Settings
from memchat.tests.helpers import brute_force, owner_rows, ranking_mismatch, recall_at_k

NOW = datetime(2026, 6, 1, tzinfo=UTC)
V1, V2 = get_embedder("hash-ngram-v1"), get_embedder("hash-ngram-v2")

# One big owner (most of the table), a middle one, near-colliding ids, and many owners with few rows.
OWNERS = {"big": 2400, "mid": 150, "u1": 15, "u11": 15, "u111": 3,
          **{f"s{i:02d}": 1 + (i * 7) % 40 for i in range(36)}}
SMALL_ANN_MIN_ROWS = 100  # "big" and "mid" go through the ANN index, everyone else is scanned exactly


@pytest.fixture(scope="module")
def loaded(pg_server) -> str:
    """Name of a database holding the clustered corpus (no vector index); cloned per configuration."""
    dsn = pg_server.create_database("corpus")
    corpus.load(dsn, corpus.generate(OWNERS), NOW)
    return urlsplit(dsn).path.lstrip("/")


@dataclass
class Outcome:
    searches: int = 0
    mismatches: list[str] = field(default_factory=list)  # rows or scores differ
    tie_mismatches: list[str] = field(default_factory=list)  # rows with equal vectors out of id order
    recall5_sum: float = 0.0
    recall5_n: int = 0

    @property
    def recall5(self) -> float:
        return self.recall5_sum / self.recall5_n if self.recall5_n else 1.0


def probe_queries(user_id: str) -> list[str]:
    rng = random.Random(f"q-{user_id}")
    topics = corpus.owner_topics(random.Random(0), 20)  # every topic, in a fixed order
    return corpus.questions(rng, rng.sample(topics, 4))


def compare_all(dsn: str, settings: Settings, owners: list[str], ks: tuple[int, ...] = (5, 20)) -> dict[str, Outcome]:
    """Run every owner's probe queries through the app and the reference; per-owner outcome."""
    pool = Pool(dsn, size=2)
    try:
        store = MemoryStore(pool, settings)
        results = {}
        for owner in owners:
            ids, vectors = owner_rows(dsn, owner, settings.embedder, NOW)
            same_vector = {i: v.tobytes() for i, v in zip(ids, vectors, strict=True)}
            out = Outcome()
            for q in probe_queries(owner):
                qvec = store.embedder.embed(q)
                all_scores = dict(brute_force(ids, vectors, qvec, len(ids), -2.0))
                for k in ks:
                    got = [(h.id, h.score) for h in store.search(owner, q, NOW, k=k)]
                    want = brute_force(ids, vectors, qvec, k, settings.effective_threshold)
                    out.searches += 1
                    if k == 5:
                        out.recall5_sum += recall_at_k(got, want, all_scores)
                        out.recall5_n += 1
                    why = ranking_mismatch(got, want, all_scores, settings.effective_threshold)
                    if why:
                        out.mismatches.append(f"{owner} k={k} {q!r}: {why}")
                    elif why := ranking_mismatch(got, want, all_scores, settings.effective_threshold,
                                                 same_vector=same_vector):
                        out.tie_mismatches.append(f"{owner} k={k} {q!r}: {why}")
            results[owner] = out
        return results
    finally:
        pool.close()


def clone_with_index(pg_server, template: str, config: str) -> tuple[str, Settings]:
    """A copy of the corpus database with the configured vector index built after loading."""
    settings_kw = dict(CONFIGS[config])
    drop_owner_index = settings_kw.pop("drop_owner_index", False)
    dsn = pg_server.create_database("exact", template=template)
    settings = Settings(pg_dsn=dsn, redis_url="", **settings_kw)
    pool = Pool(dsn, size=2)  # build_index holds one connection while ensure_index takes another
    try:
        if drop_owner_index:
            with pool.connection() as conn:
                conn.execute("DROP INDEX memories_user")
        MemoryStore(pool, settings).build_index()
    finally:
        pool.close()
    return dsn, settings


CONFIGS = {
    "none": {"index": "none"},
    "hnsw-exact-path": {"index": "hnsw"},
    "ivfflat-exact-path": {"index": "ivfflat"},
    "hnsw-ann-path": {"index": "hnsw", "ann_min_rows": SMALL_ANN_MIN_ROWS},
    # The HNSW index in parts (4 here: "big" fills most of one), as after a bulk load of more than index_graph_rows.
    "hnsw-ann-path-in-parts": {"index": "hnsw", "ann_min_rows": SMALL_ANN_MIN_ROWS, "index_graph_rows": 1000},
    "ivfflat-ann-path": {"index": "ivfflat", "ann_min_rows": SMALL_ANN_MIN_ROWS},
    # With probes = lists the planner prefers the owner's btree to ivfflat on this corpus; without that btree
    # (and with sequential scans off, as the ANN path sets) only the ivfflat index is left, so it is measured too.
    "ivfflat-ann-path-no-owner-btree": {"index": "ivfflat", "ann_min_rows": SMALL_ANN_MIN_ROWS,
                                        "drop_owner_index": True},
}
ANN_CONFIGS = ["hnsw-ann-path", "hnsw-ann-path-in-parts", "ivfflat-ann-path", "ivfflat-ann-path-no-owner-btree"]


@pytest.fixture(scope="module")
def outcomes(pg_server, loaded) -> Iterator:
    """config -> per-owner outcomes, computed once per configuration."""
    cache: dict[str, dict[str, Outcome]] = {}

    def get(config: str) -> dict[str, Outcome]:
        if config not in cache:
            dsn, settings = clone_with_index(pg_server, loaded, config)
            cache[config] = compare_all(dsn, settings, list(OWNERS))
            searches = sum(o.searches for o in cache[config].values())
            recall5 = [o.recall5 for o in cache[config].values()]
            print(f"\n{config}: {searches} searches over {len(OWNERS)} owners, mean recall@5"
                  f" {sum(recall5) / len(recall5):.4f}, min {min(recall5):.4f};"
                  f" {sum(len(o.mismatches) for o in cache[config].values())} differ in rows or scores,"
                  f" {sum(len(o.tie_mismatches) for o in cache[config].values())} only in the order of equal vectors")
        return cache[config]

    yield get


def failures(results: dict[str, Outcome], ties: bool) -> str:
    problems = [m for o in results.values() for m in (o.tie_mismatches if ties else o.mismatches)]
    searches = sum(o.searches for o in results.values())
    recall = sum(o.recall5 for o in results.values()) / len(results)
    return f"{len(problems)} of {searches} searches differ (mean recall@5 {recall:.4f}):\n" + "\n".join(problems[:10])


@pytest.mark.parametrize("config", ["none", "hnsw-exact-path", "ivfflat-exact-path"])
def test_exact_path_equals_brute_force_for_every_owner(outcomes, config: str) -> None:
    results = outcomes(config)
    assert not any(o.mismatches or o.tie_mismatches for o in results.values()), failures(results, ties=False) + (
        "\n" + failures(results, ties=True))


@pytest.mark.parametrize("config", ANN_CONFIGS)
def test_ann_path_equals_brute_force_for_every_owner(outcomes, config: str) -> None:
    """The same rows with the same scores as the reference; the order among rows with equal vectors is the next
    test's."""
    results = outcomes(config)
    assert not any(o.mismatches for o in results.values()), failures(results, ties=False)


@pytest.mark.parametrize("config", ANN_CONFIGS)
def test_ann_path_breaks_ties_by_id(outcomes, config: str) -> None:
    results = outcomes(config)
    assert not any(o.tie_mismatches for o in results.values()), failures(results, ties=True)


def index_scans(conn: psycopg.Connection, index: str) -> int:
    """Scans of the index, or of all its parts (INDEX_<part>_of_<parts>)."""
    conn.execute("SELECT pg_stat_force_next_flush()")  # this session's counters, now rather than within a second
    parts = index.replace("_", "\\_") + "\\_%\\_of\\_%"
    return conn.execute("SELECT sum(idx_scan) FROM pg_stat_user_indexes"
                        " WHERE indexrelname = %s OR indexrelname LIKE %s", (index, parts)).fetchone()[0]


@pytest.mark.parametrize("config", ANN_CONFIGS)
def test_only_owners_with_ann_min_rows_may_use_the_vector_index(pg_server, loaded, config: str) -> None:
    """Owners below ann_min_rows never touch the vector index. At or above it the index (HNSW, or ivfflat with probes =
    lists) is used for the biggest owner of this corpus, so the ANN comparison above really measures it."""
    dsn, settings = clone_with_index(pg_server, loaded, config)
    index = f"memories_embedding_{settings.index}"
    pool = Pool(dsn, size=1)  # the searches and the statistics share the one connection
    used = {}
    try:
        store = MemoryStore(pool, settings)
        with pool.connection() as conn:
            parts = hnsw_parts(conn) if settings.index == "hnsw" else 1
        assert parts == max(1, -(-sum(OWNERS.values()) // settings.index_graph_rows)), f"{config}: {parts} parts"
        for owner in ("u1", "u11", "s05", "s30", "big", "mid"):
            with pool.connection() as conn:
                before = index_scans(conn, index)
            store.search(owner, "What is my favourite colour?", NOW)
            with pool.connection() as conn:
                used[owner] = index_scans(conn, index) > before
    finally:
        pool.close()
    print(f"\n{config}: vector index used: {used}")
    assert not any(used[o] for o in ("u1", "u11", "s05", "s30")), "below ann_min_rows the scan is exact"
    # The owner with most rows goes through the index (so the ANN comparison above measures it); for "mid" the planner
    # may prefer the owner's btree over the index at the ANN path's LIMIT, which is just as correct.
    assert used["big"]


def test_the_corpus_is_clustered() -> None:
    rows = corpus.generate(OWNERS)
    topics = [r.topic for r in rows if r.user_id == "big"]
    top = max(set(topics), key=topics.count)
    q = V1.embed(corpus.TOPICS[top][2][0])
    same = np.array([V1.embed(r.text) @ q for r in rows if r.user_id == "big" and r.topic == top])
    other = np.array([V1.embed(r.text) @ q for r in rows if r.user_id == "big" and r.topic != top])
    assert len(same) > 100
    # a topic's paraphrases stand well apart from the rest, yet are not one point
    assert np.median(same) > 0.4 and np.median(other) < 0.1 and len({round(float(x), 4) for x in same}) > 10
