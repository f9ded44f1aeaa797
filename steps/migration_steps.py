"""Steps of migration_recall.feature and embedding_model_change.feature: historical memories in the legacy store,
the app's migration and re-embedding, and recall compared with what it must be."""

from __future__ import annotations

import allure
import pytest
from pytest_bdd import given, parsers, then, when

from harness import report
from harness.app_tools import embed_texts, run_tool
from harness.drivers.base import Capability
from harness.legacy_seed import LegacyMemory, MigrationCounts, empty_legacy_store, load_legacy_store
from harness.recall import Hit, RecallComparison, as_csv, as_text, brute_force
from harness.snapshots import load_snapshot
from steps.common_steps import NAME
from steps.world import Scenario


def stores_of(world: Scenario) -> tuple[str, str]:
    world.require(Capability.MIGRATION_TOOLS)
    world.require(Capability.DATABASE_ACCESS)
    if not world.app.pg_dsn or not world.app.redis_url:
        pytest.skip("migration scenarios need the app's databases: let the suite start the app, or give "
                    "--pg-dsn and --redis-url with --base-url")
    return world.app.pg_dsn, world.app.redis_url


def recall_settings(world: Scenario) -> tuple[float, int]:
    """The app's similarity threshold and top k, which the expected rankings are computed for (target [recall])."""
    return float(world.target.recall.get("threshold", 0.0)), world.driver.recall_k(world.app)


def legacy_load(world: Scenario, memories: list[LegacyMemory], owners: dict[str, str], embedder: str) -> None:
    _, redis_url = stores_of(world)
    empty_legacy_store(redis_url)
    load_legacy_store(world.target, redis_url, memories, embedder)
    world.migration.legacy = memories
    world.migration.owners = owners


def check_recall(comparisons: list[RecallComparison], what: str) -> None:
    failing = [c for c in comparisons if not c.matches]
    if failing:
        report.attach_table(f"recall: expected vs actual ({len(failing)} of {len(comparisons)} differ)",
                            as_csv(failing))
    assert not failing, f"{len(failing)} of {len(comparisons)} {what} recalled differently:\n" + as_text(failing)


def as_hits(results: list) -> list[Hit]:
    return [Hit(h.id, h.score) for h in results]


@given(parsers.parse('the legacy Redis store holds the golden snapshot "{name}"'))
def golden_snapshot(world: Scenario, name: str) -> None:
    snapshot = load_snapshot(name)
    owners = {o: f"{world.tag}-{o}" for o in snapshot.owners}
    memories = [LegacyMemory(f"{world.tag}-{m.id}", owners[m.owner], m.text, m.created_at) for m in snapshot.memories]
    world.migration.snapshot = snapshot
    legacy_load(world, memories, owners, snapshot.legacy_embedder)


@given(parsers.parse("the legacy Redis store holds {count:d} generated memories of one owner"))
def generated_memories(world: Scenario, count: int) -> None:
    fake = world.fake
    kinds = ["order number", "locker code", "gate code", "flight", "dentist", "plumber", "gym class", "book club",
             "favourite tea", "bike shop", "tax advisor", "car plate", "library card", "seat", "wifi password",
             "piano teacher", "vet", "bank branch", "passport number", "insurance number"]
    owner = f"{world.tag}-bulk"
    memories = []
    for i in range(count):
        kind = kinds[i % len(kinds)]
        value = f"{fake.word()} {fake.random_int(10, 9999)}" if i % 3 else fake.city()
        memories.append(LegacyMemory(f"{world.tag}-g{i:05d}", owner, f"My {kind} is {value}.",
                                     fake.date_time_this_decade().isoformat() + "+00:00"))
    world.migration.questions = [f"What is my {kind}?" for kind in kinds] + [
        f"Which {kind} do I have?" for kind in kinds]
    legacy_load(world, memories, {"bulk": owner}, "hash-ngram-v1")


@given(parsers.parse('an app that searches owners with many memories through an "{index}" index'))
def app_with_index(world: Scenario, index: str) -> None:
    world.require(Capability.MIGRATION_TOOLS)  # before starting an app the scenario could not load
    world.use_variant(Capability.APP_SETTINGS, index=index, **{"ann-min-rows": "200"})


@given(parsers.parse('the memories are migrated to PostgreSQL in batches of {size:d} with the "{embedder}" '
                     "embedding model"))
@when(parsers.parse('the memories are migrated to PostgreSQL in batches of {size:d} with the "{embedder}" '
                    "embedding model"))
def migrate(world: Scenario, size: int, embedder: str) -> None:
    run = world.migration
    if world.app.health.get("embedder") != embedder:
        world.use_variant(Capability.APP_SETTINGS, embedder=embedder)
    pg_dsn, redis_url = stores_of(world)
    if not run.owners_created:
        for owner, user_id in run.owners.items():
            world.create_user(owner.capitalize(), email_local=owner, user_id=user_id)
        run.owners_created = True
    with allure.step(f"run the app's migration (batch size {size}, {embedder})"):
        output = run_tool(world.target, "migrate", redis_url=redis_url, pg_dsn=pg_dsn, batch_size=str(size),
                          embedder=embedder, index=world.app.health.get("index", "hnsw"),
                          faults=world.app.settings.get("faults", ""))
        report.attach_text("migration output", output)
    run.counts.append(MigrationCounts.parse(output))
    run.embedder = embedder


@then("the migration reports every memory read and written")
def every_memory_written(world: Scenario) -> None:
    counts, total = world.migration.counts[-1], len(world.migration.legacy)
    assert (counts.read, counts.written, counts.skipped) == (total, total, 0), (
        f"the migration of {total} memories read {counts.read}, wrote {counts.written} and skipped {counts.skipped}")


@then("the second migration writes nothing and skips every memory as already present")
def second_run_changes_nothing(world: Scenario) -> None:
    counts, total = world.migration.counts[-1], len(world.migration.legacy)
    assert (counts.read, counts.written, counts.already_present) == (total, 0, total), (
        f"running the migration again read {counts.read}, wrote {counts.written} and found "
        f"{counts.already_present} of {total} already present")


@then("every historical memory is recalled for its owner and for nobody else")
def every_memory_recalled(world: Scenario) -> None:
    _, k = recall_settings(world)
    by_owner: dict[str, list[LegacyMemory]] = {}
    for m in world.migration.legacy:
        by_owner.setdefault(m.user_id, []).append(m)
    actors = {a.account.id: a for a in world.actors.values()}
    lost, leaked = [], []
    for user_id, memories in by_owner.items():
        own = {m.id for m in memories}
        for m in memories:
            hits = actors[user_id].session.search(m.text, k=k)
            if not hits or hits[0].id != m.id:
                lost.append(f"  {m.id} {m.text!r}: first hit {hits[0].id if hits else 'nothing'}")
            leaked += [f"  {h.id} for {user_id}" for h in hits if h.id not in own]
    assert not lost and not leaked, (
        f"{len(lost)} of {len(world.migration.legacy)} memories are no longer recalled by their own text:\n"
        + "\n".join(lost[:15]) + ("\nand memories recalled for another owner:\n" + "\n".join(leaked[:15])
                                  if leaked else ""))


@then("every golden question recalls the expected memories, in order, with the expected scores")
def golden_questions(world: Scenario) -> None:
    run = world.migration
    assert run.snapshot is not None, "no golden snapshot was loaded"
    actors = {a.account.id: a for a in world.actors.values()}
    comparisons = []
    for probe in run.snapshot.probes:
        expected = [Hit(f"{world.tag}-{h.id}", h.score) for h in run.snapshot.expected_for(probe, run.embedder)]
        hits = actors[run.owners[probe.owner]].session.search(probe.query, k=run.snapshot.k)
        comparisons.append(RecallComparison(probe.query, probe.owner, expected, as_hits(hits)))
    check_recall(comparisons, "golden questions")


@then(parsers.parse("{count:d} questions of that owner recall exactly what a full scan of the owner's memories "
                    "ranks first"))
def questions_match_full_scan(world: Scenario, count: int) -> None:
    run = world.migration
    threshold, k = recall_settings(world)
    questions = run.questions[:count]
    vectors = embed_texts(world.target, [m.text for m in run.legacy] + questions, run.embedder)
    rows = {m.id: v for m, v in zip(run.legacy, vectors[:len(run.legacy)], strict=True) if v is not None}
    actor = next(iter(world.actors.values()))
    comparisons = []
    for question, qvec in zip(questions, vectors[len(run.legacy):], strict=True):
        ranking = brute_force(rows, qvec, k=len(rows), threshold=threshold)
        hits = actor.session.search(question, k=k)
        comparisons.append(RecallComparison(question, actor.name, ranking[:k], as_hits(hits), candidates=ranking))
    check_recall(comparisons, "questions")


@given(parsers.parse('an app of its own running the "{embedder}" embedding model'))
def own_app(world: Scenario, embedder: str) -> None:
    world.require(Capability.EMBEDDING_MODEL_CHANGE)
    world.app = world.require_apps(Capability.APP_SETTINGS).fresh({"embedder": embedder})


@when(parsers.parse('the app moves to the "{embedder}" embedding model following the upgrade procedure'))
def move_embedding_model(world: Scenario, embedder: str) -> None:
    apps = world.require_apps(Capability.EMBEDDING_MODEL_CHANGE)
    with allure.step(f"move the app to the {embedder} embedding model with its upgrade procedure"):
        world.app = world.driver.change_embedding_model(world.app, embedder, apps.restart)


@then(parsers.re(f"^searching {NAME}'s memory for each of them finds it first$"))
def search_finds_each(world: Scenario, name: str) -> None:
    actor = world.actors[name]
    k = world.driver.recall_k(world.app)
    missing = []
    for fact in actor.told:
        hits = actor.session.search(fact.question, k=k)
        if not hits or hits[0].text != fact.sentence:
            missing.append(f"  {fact.question!r}: expected {fact.sentence!r} first, got {hits[:2]}")
    assert not missing, f"{len(missing)} of {len(actor.told)} memories are not found first:\n" + "\n".join(missing)
