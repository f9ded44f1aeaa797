"""Steps of replay_through_changes.feature: a history as the app holds it before one of the changes its target
declares, the change done the way the app's operators do it, then the replay's checks (migration_steps' Then steps,
on the same `migration` state). The change comes from the test's parameter `change_name` (features/conftest.py)."""

from __future__ import annotations

from pathlib import Path

import allure
import pytest
from pytest_bdd import given, parsers, when

from harness.app_factory import AppFactory
from harness.app_handle import AppHandle
from harness.changes import Change
from harness.drivers.base import Capability
from harness.replay.run import MigrationRun
from harness.snapshots import write_snapshot
from harness.snapshots.generate import stream_history
from harness.store_upgrade import by_pgvector_version
from steps.world import World

NEEDS = {"migration": Capability.MIGRATION_TOOLS, "embedding-model": Capability.EMBEDDING_MODEL_CHANGE,
         "upgrade": Capability.APP_UPGRADE, "store-upgrade": Capability.DATABASE_ACCESS}


def _older_and_newer(request: pytest.FixtureRequest) -> tuple[AppFactory, AppFactory]:
    """The run's database server and the second provider's, the one with the older pgvector first."""
    second = request.getfixturevalue("second_postgres")
    if second.apps is None:
        pytest.skip(second.why_not)
    older, newer = by_pgvector_version([request.getfixturevalue("apps"), second.apps])
    if older.version == newer.version:
        pytest.skip(f"both database providers have pgvector {older.version}: there is no newer one to upgrade onto")
    return older.apps, newer.apps


def _declared(world: World, change_name: str) -> Change:
    if not change_name:
        pytest.skip(f"{world.app.target.path.name} declares no [changes] for the replay to put the app through")
    return world.app.target.change(change_name)


@given(parsers.re(r'a generated history of (?P<size>[\d,]+) memories, as the app holds it before the change '
                  r'"<change>"'), converters={"size": lambda text: int(text.replace(",", ""))})
def history_before_change(world: World, migration: MigrationRun, change_name: str, size: int,
                          tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """Generates a history of that many memories (plus 3) and puts it into a fresh app as it is before the change."""
    change = _declared(world, change_name)
    world.app.require(NEEDS[change.kind])
    if change.kind != "migration":
        world.app.require(Capability.HISTORY_IMPORT)
    if change.kind == "store-upgrade":  # on the server with the older pgvector, to be moved onto the newer
        older, migration.newer_store = _older_and_newer(request)
        world.use_app(AppHandle.fresh_on(world.app.driver, older, {**world.app.chosen, **change.before_settings}))
    else:
        world.use_app(world.app.fresh(Capability.APP_SETTINGS, **change.before_settings))  # a store of its own
    app = world.app
    embedders = list(dict.fromkeys((change.embedder_before, change.embedder_after)))
    with allure.step(f"generate {size:,} memories (+3) with {', '.join(embedders)}, seed {world.data.seed}"):
        history = stream_history(app.target, nominal=size, seed=world.data.seed, embedders=embedders,
                                 threshold=app.threshold, k=app.recall_k)
        path = tmp_path / "history.jsonl"
        write_snapshot(path, history.header, history.memories, history.probes)
    if change.kind == "migration":
        migration.load_history(app, path, world.tag)  # into the store the migration reads
        migration.import_replayed_owners(app)
    else:
        migration.import_history(app, path, tmp_path, world.tag)


@when('the app goes through the change "<change>"')
def go_through_change(world: World, migration: MigrationRun, change_name: str) -> None:
    """The app goes through the declared change the way its operators do it (the driver's procedure)."""
    change = _declared(world, change_name)
    app, counts = world.app.go_through(change, migration.newer_store)
    world.use_app(app)
    if counts is not None:
        migration.counts.append(counts)
    migration.embedder = change.embedder_after
