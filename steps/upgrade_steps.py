"""Steps of pgvector_upgrade.feature: the golden snapshot migrated onto two pgvector versions, compared question by
question, and each version's vector index proven used by its own scan counter."""

from __future__ import annotations

from dataclasses import dataclass, field

import allure
import psycopg
import pytest
from pytest_bdd import parsers, then, when

from harness import report
from harness.app_launcher import RunningApp
from harness.app_tools import run_tool
from harness.drivers.base import Capability
from harness.legacy_seed import MigrationCounts
from harness.polling import Timeout, wait_until
from harness.recall import Hit, RecallComparison
from steps.migration_steps import as_hits, check_recall
from steps.world import Scenario

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
    app: RunningApp
    scans_before: int = 0
    hits: dict[tuple[str, str], list[Hit]] = field(default_factory=dict)  # (owner, question) -> hits


def vector_index_scans(pg_dsn: str) -> dict[str, int]:
    """Scans counted so far by each vector index of the app's database (pg_stat_user_indexes): the app's own queries
    are counted, whatever SQL it runs, which EXPLAIN of a query the suite guessed would not prove."""
    methods = ", ".join(f"'{m}'" for m in VECTOR_ACCESS_METHODS)
    with psycopg.connect(pg_dsn, connect_timeout=10) as conn:
        rows = conn.execute(
            "SELECT s.indexrelname, s.idx_scan FROM pg_stat_user_indexes s JOIN pg_class c ON c.oid = s.indexrelid"
            f" JOIN pg_am am ON am.oid = c.relam WHERE am.amname IN ({methods})").fetchall()
    return {name: int(scans) for name, scans in rows}


def _migrate_onto(world: Scenario, app: RunningApp, size: int) -> None:
    """The golden snapshot from the legacy store into this app's database, owners created with their ids."""
    run = world.migration
    previous = world.app
    world.app = app
    try:
        for owner, user_id in run.owners.items():  # each app has its own database: the same ids and addresses
            world.create_user(owner.capitalize(), email_local=owner, user_id=user_id)
    finally:
        world.app = previous
    output = run_tool(world.target, "migrate", redis_url=str(app.redis_url), pg_dsn=str(app.pg_dsn),
                      batch_size=str(size), embedder=str(app.health.get("embedder", "")),
                      index=str(app.health.get("index", "hnsw")), faults=app.settings.get("faults", ""))
    report.attach_text(f"migration output ({app.health.get('pgvector')})", output)
    counts = MigrationCounts.parse(output)
    assert counts.written == run.total, (
        f"the migration onto pgvector {app.health.get('pgvector')} wrote {counts.written} of {run.total}")


@when(parsers.parse('it is migrated onto the other pgvector version too, with "{index_here}" here and '
                    '"{index_there}" there'))
def migrated_onto_both(world: Scenario, index_here: str, index_there: str, second_postgres) -> None:  # noqa: ANN001
    world.require(Capability.MIGRATION_TOOLS)
    world.require(Capability.DATABASE_ACCESS)
    world.require(Capability.APP_SETTINGS)
    if second_postgres.apps is None:
        pytest.skip(second_postgres.why_not)
    kinds = world.target.index_kinds
    unknown = [k for k in (index_here, index_there) if k not in kinds]
    if unknown:
        raise ValueError(f"{world.target.path.name} names no index kind {unknown}; its [index_kinds] are: "
                         f"{', '.join(kinds)}")
    here = world.require_apps(Capability.APP_SETTINGS).fresh(kinds[index_here])
    there = second_postgres.apps.fresh(kinds[index_there])
    world.upgrade = [VersionRun(str(app.health.get("pgvector", "?")), kind, app)
                     for app, kind in ((here, index_here), (there, index_there))]
    if world.upgrade[0].pgvector == world.upgrade[1].pgvector:
        pytest.skip(f"both providers have pgvector {world.upgrade[0].pgvector}: nothing to compare")
    for version in world.upgrade:
        with allure.step(f"migrate onto pgvector {version.pgvector} ({version.index_kind})"):
            _migrate_onto(world, version.app, size=50)
        version.scans_before = sum(vector_index_scans(str(version.app.pg_dsn)).values())


@then("every golden question recalls the same memories on both versions, in order, with the same scores")
def same_recall_on_both(world: Scenario) -> None:
    snapshot = world.migration.snapshot
    assert snapshot is not None and world.upgrade, "no snapshot was migrated onto two versions"
    for version in world.upgrade:
        previous = world.app
        world.app = version.app
        try:
            for probe in snapshot.probes:
                owner = world.migration.owners[probe.owner]
                session = world.driver.session(version.app, _account_of(world, version.app, owner))
                version.hits[(probe.owner, probe.query)] = as_hits(session.search(probe.query, k=snapshot.k))
                session.close()
        finally:
            world.app = previous
    old, new = world.upgrade
    comparisons = [RecallComparison(f"{query} (pgvector {old.pgvector} -> {new.pgvector})", owner,
                                    old.hits[(owner, query)], new.hits[(owner, query)], UPGRADE_SCORE_TOLERANCE)
                   for owner, query in old.hits]
    check_recall(comparisons, "golden questions")


def _account_of(world: Scenario, app: RunningApp, user_id: str):  # noqa: ANN202
    for created_app, account in world.created:
        if created_app is app and account.id == user_id:
            return account
    raise AssertionError(f"no account {user_id} was created in the app at {app.base_url}")


@then("each version searched every owner through the index it was given")
def index_really_used(world: Scenario) -> None:
    for version in world.upgrade:
        probes = sum(1 for hits in version.hits.values() if hits)  # a question that recalled something was searched
        dsn = str(version.app.pg_dsn)
        wants_index = any(v in VECTOR_ACCESS_METHODS for v in world.target.index_kinds[version.index_kind].values())
        if not wants_index:
            indexes = vector_index_scans(dsn)
            assert not indexes, f"pgvector {version.pgvector} was given no vector index but has {sorted(indexes)}"
            continue
        try:
            total = wait_until(lambda d=dsn: sum(vector_index_scans(d).values()),
                               lambda n, v=version, p=probes: n - v.scans_before >= p, timeout=STATS_FLUSH_S,
                               what=f"pgvector {version.pgvector}'s {version.index_kind} index scans counted")
        except Timeout:
            total = sum(vector_index_scans(dsn).values())
        used = total - version.scans_before
        assert used >= probes, (
            f"on pgvector {version.pgvector} the {version.index_kind} index was scanned {used} times for {probes} "
            "golden questions that recalled something: not every search went through it, so the comparison did not "
            "test it")

