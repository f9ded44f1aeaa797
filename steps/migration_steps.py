"""Steps of migration_recall.feature and embedding_model_change.feature: historical memories in the legacy store,
the app's migration and re-embedding, and recall compared with what it must be."""

from __future__ import annotations

import allure
import pytest
from pytest_bdd import given, parsers, then, when

from harness import report
from harness.app_tools import embed_texts, run_tool
from harness.legacy_seed import LegacyMemory, MigrationCounts, empty_legacy_store, load_legacy_store
from harness.recall import Hit, RecallComparison, as_csv, as_text, brute_force
from harness.snapshots import load_snapshot
from steps.common_steps import NAME
from steps.world import Scenario

THRESHOLD, TOP_K = 0.25, 5  # the reference app's recall settings, which the expectations are computed for


def stores_of(world: Scenario) -> tuple[str, str]:
    if not world.app.pg_dsn or not world.app.redis_url:
        pytest.skip("migration scenarios need the app's databases: let the suite start the app, or give "
                    "--pg-dsn and --redis-url with --base-url")
    return world.app.pg_dsn, world.app.redis_url


def legacy_load(world: Scenario, memories: list[LegacyMemory], owners: dict[str, str], embedder: str) -> None:
    _, redis_url = stores_of(world)
    empty_legacy_store(redis_url)
    load_legacy_store(world.target, redis_url, memories, embedder)
    world.notes["legacy"] = memories
    world.notes["owners"] = owners  # owner name -> user id, created in the target when migrating


def check_recall(comparisons: list[RecallComparison], what: str) -> None:
    failing = [c for c in comparisons if not c.matches]
    if failing:
        report.attach_table(f"recall: expected vs actual ({len(failing)} of {len(comparisons)} differ)",
                            as_csv(failing))
    assert not failing, f"{len(failing)} of {len(comparisons)} {what} recalled differently:\n" + as_text(failing)


@given(parsers.parse('the legacy Redis store holds the golden snapshot "{name}"'))
def golden_snapshot(world: Scenario, name: str) -> None:
    snapshot = load_snapshot(name)
    owners = {o: f"{world.tag}-{o}" for o in snapshot.owners}
    memories = [LegacyMemory(f"{world.tag}-{m.id}", owners[m.owner], m.text, m.created_at) for m in snapshot.memories]
    world.notes["snapshot"] = snapshot
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
    world.notes["questions"] = [f"What is my {kind}?" for kind in kinds] + [
        f"Which {kind} do I have?" for kind in kinds]
    legacy_load(world, memories, {"bulk": owner}, "hash-ngram-v1")


@given(parsers.parse('an app that searches owners with many memories through an "{index}" index'))
def app_with_index(world: Scenario, index: str) -> None:
    world.use_variant(index=index, **{"ann-min-rows": "200"})


@given(parsers.parse('the memories are migrated to PostgreSQL in batches of {size:d} with the "{embedder}" '
                     "embedding model"))
@when(parsers.parse('the memories are migrated to PostgreSQL in batches of {size:d} with the "{embedder}" '
                    "embedding model"))
def migrate(world: Scenario, size: int, embedder: str) -> None:
    if world.app.health.get("embedder") != embedder:
        world.use_variant(embedder=embedder)
    pg_dsn, redis_url = stores_of(world)
    if "migrated_once" not in world.notes:
        for owner, user_id in world.notes["owners"].items():
            world.create_user(owner.capitalize(), email_local=owner, user_id=user_id)
        world.notes["migrated_once"] = True
    with allure.step(f"run the app's migration (batch size {size}, {embedder})"):
        output = run_tool(world.target, "migrate", redis_url=redis_url, pg_dsn=pg_dsn, batch_size=str(size),
                          embedder=embedder, index=world.app.health.get("index", "hnsw"),
                          faults=world.app.settings.get("faults", ""))
        report.attach_text("migration output", output)
    world.notes.setdefault("migrations", []).append(MigrationCounts.parse(output))
    world.notes["embedder"] = embedder


@then("the migration reports every memory read and written")
def every_memory_written(world: Scenario) -> None:
    counts, total = world.notes["migrations"][-1], len(world.notes["legacy"])
    assert (counts.read, counts.written, counts.skipped) == (total, total, 0), (
        f"the migration of {total} memories read {counts.read}, wrote {counts.written} and skipped {counts.skipped}")


@then("the second migration writes nothing and skips every memory as already present")
def second_run_changes_nothing(world: Scenario) -> None:
    counts, total = world.notes["migrations"][-1], len(world.notes["legacy"])
    assert (counts.read, counts.written, counts.already_present) == (total, 0, total), (
        f"running the migration again read {counts.read}, wrote {counts.written} and found "
        f"{counts.already_present} of {total} already present")


@then("every historical memory is recalled for its owner and for nobody else")
def every_memory_recalled(world: Scenario) -> None:
    by_owner: dict[str, list[LegacyMemory]] = {}
    for m in world.notes["legacy"]:
        by_owner.setdefault(m.user_id, []).append(m)
    actors = {a.account.id: a for a in world.actors.values()}
    lost, leaked = [], []
    for user_id, memories in by_owner.items():
        own = {m.id for m in memories}
        for m in memories:
            hits = actors[user_id].api.search(m.text, k=TOP_K)
            if not hits or hits[0]["id"] != m.id:
                lost.append(f"  {m.id} {m.text!r}: first hit {hits[0]['id'] if hits else 'nothing'}")
            leaked += [f"  {h['id']} for {user_id}" for h in hits if h["id"] not in own]
    assert not lost and not leaked, (
        f"{len(lost)} of {len(world.notes['legacy'])} memories are no longer recalled by their own text:\n"
        + "\n".join(lost[:15]) + ("\nand memories recalled for another owner:\n" + "\n".join(leaked[:15])
                                  if leaked else ""))


@then("every golden question recalls the expected memories, in order, with the expected scores")
def golden_questions(world: Scenario) -> None:
    snapshot, embedder = world.notes["snapshot"], world.notes["embedder"]
    owners = world.notes["owners"]
    actors = {a.account.id: a for a in world.actors.values()}
    comparisons = []
    for probe in snapshot.probes:
        expected = [Hit(f"{world.tag}-{h.id}", h.score) for h in snapshot.expected_for(probe, embedder)]
        hits = actors[owners[probe.owner]].api.search(probe.query, k=snapshot.k)
        comparisons.append(RecallComparison(probe.query, probe.owner, expected,
                                            [Hit(h["id"], h["score"]) for h in hits]))
    check_recall(comparisons, "golden questions")


@then(parsers.parse("{count:d} questions of that owner recall exactly what a full scan of the owner's memories "
                    "ranks first"))
def questions_match_full_scan(world: Scenario, count: int) -> None:
    memories: list[LegacyMemory] = world.notes["legacy"]
    questions = world.notes["questions"][:count]
    embedder = world.notes["embedder"]
    vectors = embed_texts(world.target, [m.text for m in memories] + questions, embedder)
    rows = {m.id: v for m, v in zip(memories, vectors[:len(memories)], strict=True) if v is not None}
    actor = next(iter(world.actors.values()))
    comparisons = []
    for question, qvec in zip(questions, vectors[len(memories):], strict=True):
        ranking = brute_force(rows, qvec, k=len(rows), threshold=THRESHOLD)
        hits = actor.api.search(question, k=TOP_K)
        comparisons.append(RecallComparison(question, actor.name, ranking[:TOP_K],
                                            [Hit(h["id"], h["score"]) for h in hits], candidates=ranking))
    check_recall(comparisons, "questions")


@given(parsers.parse('an app of its own running the "{embedder}" embedding model'))
def own_app(world: Scenario, embedder: str) -> None:
    apps = world.require_apps("an embedding-model change")
    world.app, world.notes["own_dsn"] = apps.fresh({"embedder": embedder})


@when(parsers.parse('the app moves to the "{embedder}" embedding model following the upgrade procedure'))
def move_embedding_model(world: Scenario, embedder: str) -> None:
    apps, dsn = world.require_apps("an embedding-model change"), str(world.notes["own_dsn"])
    faults = world.app.settings.get("faults", "")
    apps.stop(world.app)
    with allure.step(f"re-embed every memory with {embedder}, then start the app on it"):
        output = run_tool(world.target, "reembed", pg_dsn=dsn, embedder=embedder, index="hnsw", faults=faults)
        report.attach_text("re-embedding output", output)
        world.app = apps.start(dsn, {"embedder": embedder}, f"{embedder}-after-upgrade")


@then(parsers.re(f"^searching {NAME}'s memory for each of them finds it first$"))
def search_finds_each(world: Scenario, name: str) -> None:
    actor = world.actors[name]
    missing = []
    for fact in actor.told:
        hits = actor.api.search(fact.question)
        if not hits or hits[0]["text"] != fact.sentence:
            missing.append(f"  {fact.question!r}: expected {fact.sentence!r} first, got {hits[:2]}")
    assert not missing, f"{len(missing)} of {len(actor.told)} memories are not found first:\n" + "\n".join(missing)
