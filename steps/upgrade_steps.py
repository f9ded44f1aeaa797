"""Steps of pgvector_upgrade.feature: the golden snapshot migrated onto two pgvector versions, compared question by
question, and each version's vector index proven used by its own scan counter. The two versions are the
`pgvector_versions` fixture."""

from __future__ import annotations

from dataclasses import dataclass, field

import allure
import pytest
from pytest_bdd import parsers, then, when

from harness.app_handle import AppHandle
from harness.drivers.base import Account, Capability
from harness.polling import Timeout, wait_until
from harness.recall import Hit, RecallComparison, assert_same_recall
from harness.replay.run import MigrationRun
from steps.world import World

# The vector index kinds pgvector offers, as PostgreSQL names their access methods.
VECTOR_ACCESS_METHODS = ("hnsw", "ivfflat")
# Both versions compute the same float32 cosine: a minor upgrade may not move a score by more than rounding.
UPGRADE_SCORE_TOLERANCE = 1e-6
# A server process reports its index scans when it goes idle, at most every 10 s (PostgreSQL 15+'s statistics).
STATS_FLUSH_S = 15


@dataclass
class VersionRun:
    """One pgvector version: its app, which index kind it was given, and what each golden question recalled."""

    pgvector: str
    index_kind: str
    app: AppHandle
    accounts: dict[str, Account] = field(default_factory=dict)  # owner name -> its account in this app
    scans_before: int = 0
    hits: dict[tuple[str, str], list[Hit]] = field(default_factory=dict)  # (owner, question) -> hits


@dataclass
class PgvectorVersions:
    """The two versions one snapshot was migrated onto: this run's, then the other provider's."""

    runs: list[VersionRun] = field(default_factory=list)


@pytest.fixture
def pgvector_versions() -> PgvectorVersions:
    return PgvectorVersions()


def _migrate_onto(world: World, migration: MigrationRun, version: VersionRun, size: int) -> None:
    """The golden snapshot from the legacy store into this app's database, owners created with their ids (each app
    has its own database: the same ids and addresses in each)."""
    for owner, user_id in migration.owners.items():
        actor = world.create_user(owner.capitalize(), email_local=owner, user_id=user_id, app=version.app)
        version.accounts[owner] = actor.account
    counts = version.app.migrate(size, version.app.embedder)
    assert counts.written == migration.total, (
        f"the migration onto pgvector {version.pgvector} wrote {counts.written} of {migration.total}")


@when(parsers.parse('it is migrated onto the other pgvector version too, with "{index_here}" here and '
                    '"{index_there}" there'))
def migrated_onto_both(world: World, migration: MigrationRun, pgvector_versions: PgvectorVersions,
                       index_here: str, index_there: str, second_postgres) -> None:  # noqa: ANN001
    """Migrates the golden snapshot onto this run's and the other provider's pgvector, with each index kind."""
    for capability in (Capability.MIGRATION_TOOLS, Capability.DATABASE_ACCESS, Capability.APP_SETTINGS):
        world.app.require(capability)
    if second_postgres.apps is None:
        pytest.skip(second_postgres.why_not)
    kinds = world.app.target.index_kinds
    unknown = [k for k in (index_here, index_there) if k not in kinds]
    if unknown:
        raise ValueError(f"{world.app.target.path.name} names no index kind {unknown}; its [index_kinds] are: "
                         f"{', '.join(kinds)}")
    here = world.app.fresh(**kinds[index_here])
    there = AppHandle.fresh_on(world.app.driver, second_postgres.apps, kinds[index_there])
    runs = pgvector_versions.runs
    runs += [VersionRun(str(app.health.get("pgvector", "?")), kind, app)
             for app, kind in ((here, index_here), (there, index_there))]
    if runs[0].pgvector == runs[1].pgvector:
        pytest.skip(f"both providers have pgvector {runs[0].pgvector}: nothing to compare")
    for version in runs:
        with allure.step(f"migrate onto pgvector {version.pgvector} ({version.index_kind})"):
            _migrate_onto(world, migration, version, size=50)
        version.scans_before = sum(version.app.vector_index_scans().values())


@then("every golden question recalls the same memories on both versions, in order, with the same scores")
def same_recall_on_both(migration: MigrationRun, pgvector_versions: PgvectorVersions) -> None:
    """Every golden question recalls the same ids, in the same order, with the same scores on both versions."""
    snapshot = migration.snapshot
    assert snapshot is not None and pgvector_versions.runs, "no snapshot was migrated onto two versions"
    for version in pgvector_versions.runs:
        for probe in snapshot.probes:
            session = version.app.session(version.accounts[probe.owner])
            version.hits[(probe.owner, probe.query)] = session.search(probe.query, k=snapshot.k)
            session.close()
    old, new = pgvector_versions.runs
    comparisons = [RecallComparison(f"{query} (pgvector {old.pgvector} -> {new.pgvector})", owner,
                                    old.hits[(owner, query)], new.hits[(owner, query)], UPGRADE_SCORE_TOLERANCE)
                   for owner, query in old.hits]
    assert_same_recall(comparisons, "golden questions")


@then("each version searched every owner through the index it was given")
def index_really_used(world: World, pgvector_versions: PgvectorVersions) -> None:
    """Each version's own index-scan counter shows that every golden question went through its index."""
    for version in pgvector_versions.runs:
        probes = sum(1 for hits in version.hits.values() if hits)  # a question that recalled something was searched
        app = version.app
        wants_index = any(v in VECTOR_ACCESS_METHODS for v in world.app.target.index_kinds[version.index_kind].values())
        if not wants_index:
            indexes = app.vector_index_scans()
            assert not indexes, f"pgvector {version.pgvector} was given no vector index but has {sorted(indexes)}"
            continue
        try:
            total = wait_until(lambda a=app: sum(a.vector_index_scans().values()),
                               lambda n, v=version, p=probes: n - v.scans_before >= p, timeout=STATS_FLUSH_S,
                               what=f"pgvector {version.pgvector}'s {version.index_kind} index scans counted")
        except Timeout:
            total = sum(app.vector_index_scans().values())
        used = total - version.scans_before
        assert used >= probes, (
            f"on pgvector {version.pgvector} the {version.index_kind} index was scanned {used} times for {probes} "
            "golden questions that recalled something: not every search went through it, so the comparison did not "
            "test it")
