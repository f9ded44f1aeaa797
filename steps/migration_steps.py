"""Steps of migration_recall.feature and embedding_model_change.feature: historical memories in the legacy store,
the app's migration and re-embedding, and recall compared with what it must be."""

from __future__ import annotations

from pathlib import Path

import allure
import pytest
from pytest_bdd import given, parsers, then, when

from harness import report
from harness.app_tools import embed_texts, run_tool
from harness.drivers.base import Capability
from harness.legacy_seed import LegacyMemory, MigrationCounts, empty_legacy_store, load_legacy_store
from harness.recall import Hit, RecallComparison, as_csv, as_text, brute_force
from harness.replay.capture import capture
from harness.replay.checks import ReplayChecks, check_memories, check_probes, query_vectors
from harness.replay.history import import_owners, read_for_replay
from harness.snapshots import is_format2, load_snapshot, snapshot_path, write_snapshot
from harness.snapshots.generate import generate_history
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


def replay_into_legacy_store(world: Scenario, snapshot: Path, legacy_input: Path) -> None:
    """A snapshot of any format into the legacy store, through the app's loading tool; owners are created when
    migrating (a migration may start the app anew on other settings)."""
    _, redis_url = stores_of(world)
    with allure.step(f"load {snapshot.name} into the legacy store"):
        history = read_for_replay(snapshot, world.tag, legacy_input)
        empty_legacy_store(redis_url)
        run_tool(world.target, "redis_load", redis_url=redis_url, file=str(legacy_input),
                 embedder=history.header.legacy_embedder, timeout=900)
    world.migration.replay = history
    world.migration.owners = {o: history.user_id(o) for o in sorted(set(history.owners))}
    if not is_format2(snapshot):
        world.migration.snapshot = load_snapshot(snapshot)


@given(parsers.parse('the legacy Redis store holds the golden snapshot "{name}"'))
def golden_snapshot(world: Scenario, name: str, tmp_path: Path) -> None:
    replay_into_legacy_store(world, snapshot_path(name), tmp_path / "legacy.jsonl")


@given(parsers.re(r"the legacy Redis store holds a generated history of (?P<size>[\d,]+) memories"))
def generated_history(world: Scenario, size: str, tmp_path: Path) -> None:
    world.require(Capability.MIGRATION_TOOLS)
    world.require(Capability.DATABASE_ACCESS)
    nominal = int(size.replace(",", ""))
    if nominal >= 10_000:  # into an empty store, as a real migration: an index grown row by row costs minutes
        world.app = world.require_apps(Capability.APP_SETTINGS).fresh(world.app_settings)
    stores_of(world)
    threshold, k = recall_settings(world)
    with allure.step(f"generate {nominal:,} memories (+3) with the app's embedder, seed {world.data.seed}"):
        history = generate_history(world.target, nominal=nominal, seed=world.data.seed,
                                   embedders=[str(world.app.health.get("embedder", "hash-ngram-v1"))],
                                   threshold=threshold, k=k)
        path = tmp_path / "history.jsonl"
        write_snapshot(path, history.header, history.memories, history.probes)
    replay_into_legacy_store(world, path, tmp_path / "legacy.jsonl")


CAPTURED_FACTS = ("My locker code is 12-{n}-7.", "My dentist is Doctor Okafor {n}.", "Where is it?",
                  "My bike shop is “Rueda” {n} 🚲.", "My locker code is 12-{n}-7.", "Note: my vet is <b>Paws</b> {n}.",
                  "My home city is 東京 and the gate code is {n}.", "My wifi password is C:\\net\\{n}.")


@given("users have told the app facts in several conversations")
def users_told_facts(world: Scenario) -> None:
    world.require(Capability.DATABASE_ACCESS)
    world.app = world.require_apps(Capability.APP_SETTINGS).fresh(world.app_settings)  # a store of its own
    for n, name in enumerate(("Ana", "Ana1", "Ben")):
        actor = world.actor(name)
        for conversation in range(2):
            actor.session.remember([fact.format(n=f"{n}{conversation}{i}")
                                    for i, fact in enumerate(CAPTURED_FACTS)])


@when("the app's memory is captured as a snapshot, with questions sampled from it")
def capture_snapshot(world: Scenario, tmp_path: Path) -> None:
    _, k = recall_settings(world)
    path = tmp_path / "captured.jsonl.gz"
    with allure.step("capture the app's memories and what it answers now"):
        header = capture(world.driver, world.app, world.target, path, questions=None, sample=16,
                         seed=world.data.seed, k=k, description=f"captured in scenario {world.tag}")
        report.attach_text("captured snapshot", f"{header.memories} memories of {header.owners} owners, "
                                                f"{header.probes} probes, {header.embedders[0]}")
    world.migration.captured = path


@when("the snapshot is replayed into a fresh store through the migration")
def replay_captured(world: Scenario, tmp_path: Path) -> None:
    world.app = world.require_apps(Capability.APP_SETTINGS).fresh(world.app_settings)
    assert world.migration.captured is not None, "nothing was captured"
    replay_into_legacy_store(world, world.migration.captured, tmp_path / "legacy.jsonl")
    migrate(world, 7, str(world.app.health.get("embedder", "hash-ngram-v1")))


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
        if run.replay is not None:
            world.require(Capability.REQUESTED_USER_IDS)
            run.accounts = import_owners(world.driver, world.app, run.replay)
        else:
            for owner, user_id in run.owners.items():
                world.create_user(owner.capitalize(), email_local=owner, user_id=user_id)
        run.owners_created = True
    with allure.step(f"run the app's migration (batch size {size}, {embedder})"):
        output = run_tool(world.target, "migrate", redis_url=redis_url, pg_dsn=pg_dsn, batch_size=str(size),
                          embedder=embedder, index=world.app.health.get("index", "hnsw"),
                          faults=world.app.settings.get("faults", ""), timeout=900)
        report.attach_text("migration output", output)
    run.counts.append(MigrationCounts.parse(output))
    run.embedder = embedder


@then("the migration reports every memory read and written")
def every_memory_written(world: Scenario) -> None:
    counts, total = world.migration.counts[-1], world.migration.total
    assert (counts.read, counts.written, counts.skipped) == (total, total, 0), (
        f"the migration of {total} memories read {counts.read}, wrote {counts.written} and skipped {counts.skipped}")


@then("the second migration writes nothing and skips every memory as already present")
def second_run_changes_nothing(world: Scenario) -> None:
    counts, total = world.migration.counts[-1], world.migration.total
    assert (counts.read, counts.written, counts.already_present) == (total, 0, total), (
        f"running the migration again read {counts.read}, wrote {counts.written} and found "
        f"{counts.already_present} of {total} already present")


def replay_checks(world: Scenario) -> ReplayChecks:
    """Memory by memory through the store's similarity query, probe by probe through the search API: made once,
    reported with their figures whether they pass or not."""
    run = world.migration
    if run.checks is None:
        assert run.replay is not None, "no snapshot or generated history was loaded"
        world.require(Capability.DATABASE_ACCESS)
        _, k = recall_settings(world)
        with allure.step(f"check {run.replay.size:,} memories and {len(run.replay.probes):,} probes"):
            vectors = query_vectors(world.target, run.replay, run.embedder)
            run.checks = ReplayChecks(check_memories(world.driver, world.app, run.replay, vectors),
                                      check_probes(world.driver, world.app, run.replay, run.accounts, run.embedder, k))
            report.attach_text("replay figures", run.checks.figures())
            if run.checks.memories.lost:
                report.attach_text(f"lost memories ({len(run.checks.memories.lost)}, every one)",
                                   "\n".join(run.checks.memories.lost))
            if run.checks.probes.failing:
                report.attach_table(f"worst probes ({len(run.checks.probes.failing)} of "
                                    f"{len(run.checks.probes.outcomes)} differ)", run.checks.probes.worst_as_csv())
            print(run.checks.figures())
    return run.checks


@then("every historical memory is recalled for its owner and for nobody else")
def every_memory_recalled(world: Scenario) -> None:
    checks = replay_checks(world)
    leaks = checks.leaks(world.migration.replay)
    lost_or_leaked = not checks.memories.ok or bool(leaks)
    assert not lost_or_leaked, (
        f"{checks.figures()}\n" + (checks.lost_memories() if not checks.memories.ok else "")
        + (f"\nand {len(leaks)} hits of another owner:\n" + "\n".join(leaks[:15]) if leaks else ""))


@when("one migrated memory's vector is removed from the store by hand")
def remove_one_vector(world: Scenario) -> None:
    history = world.migration.replay
    assert history is not None, "no history was loaded"
    world.require(Capability.DATABASE_ACCESS)
    embeddable = [i for i, ok in enumerate(history.embeddable) if ok]
    victim = history.ids[embeddable[world.fake.random_int(0, len(embeddable) - 1)]]
    world.driver.remove_vector(world.app, history.memory_id(victim))
    world.migration.removed = victim


@then("the replay names exactly that memory as lost, and only it")
def replay_names_the_removed_one(world: Scenario) -> None:
    checks = replay_checks(world)
    removed = world.migration.removed
    named = [line.split()[0] for line in checks.memories.lost]
    assert named == [removed], (f"the vector of {removed} was removed by hand; the replay named "
                                f"{named[:10] or 'nothing'}\n{checks.figures()}")


@then("every golden question recalls the expected memories, in order, with the expected scores")
def golden_questions(world: Scenario) -> None:
    checks = replay_checks(world)
    failing = checks.probes.failing
    assert not failing, (f"{len(failing)} of {len(checks.probes.outcomes)} golden questions recalled differently\n"
                         f"{checks.figures()}\nthe worst:\n{checks.probes.worst_as_text()}")


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
