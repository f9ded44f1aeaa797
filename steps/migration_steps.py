"""Steps of migration_recall.feature and embedding_model_change.feature: historical memories in the legacy store,
the app's migration and re-embedding, and recall compared with what it must be. The scenario's migration state is the
`migration` fixture (harness.replay.run.MigrationRun)."""

from __future__ import annotations

from pathlib import Path

import allure
import numpy as np
import pytest
from pytest_bdd import given, parsers, then, when

from harness import report
from harness.drivers.base import Capability
from harness.legacy_store import LegacyMemory
from harness.recall import RecallComparison, assert_same_recall, brute_force
from harness.replay.capture import capture
from harness.replay.run import MigrationRun
from harness.snapshots import snapshot_path, write_snapshot
from harness.snapshots.generate import stream_history
from harness.snapshots.importer import import_history
from harness.suite_options import ROOT
from steps.records import Talk
from steps.world import NAME, World


@pytest.fixture
def migration() -> MigrationRun:
    return MigrationRun()


@given(parsers.parse('the legacy Redis store holds the golden snapshot "{name}"'))
def golden_snapshot(world: World, migration: MigrationRun, name: str) -> None:
    """Loads the snapshot (a name in snapshots/ or a path) into the app's legacy store with its own tool."""
    migration.load_history(world.app, snapshot_path(name), world.tag)


@given(parsers.re(r"the legacy Redis store holds a generated history of (?P<size>[\d,]+) memories"),
       converters={"size": lambda text: int(text.replace(",", ""))})
def generated_history(world: World, migration: MigrationRun, size: int, tmp_path: Path) -> None:
    """Generates a history of that many memories (plus 3) with the app's embedder, into the legacy store."""
    world.app.require(Capability.MIGRATION_TOOLS)
    world.app.require_stores()
    if size >= 10_000:  # into an empty store, as a real migration: an index grown row by row costs minutes
        world.use_app(world.app.fresh())
    app = world.app
    with allure.step(f"generate {size:,} memories (+3) with the app's embedder, seed {world.data.seed}"):
        history = stream_history(app.target, nominal=size, seed=world.data.seed, embedders=[app.embedder],
                                 threshold=app.threshold, k=app.recall_k)
        path = tmp_path / "history.jsonl"
        write_snapshot(path, history.header, history.memories, history.probes)
    migration.load_history(app, path, world.tag)


@given(parsers.parse('the legacy Redis store holds the memories imported from "{folder}"'))
def imported_history(world: World, migration: MigrationRun, folder: str, tmp_path: Path) -> None:
    """A folder with a team's memories.jsonl and questions.jsonl, made a snapshot as `make_snapshot --import` does,
    with the app's own embedding model."""
    world.app.require(Capability.MIGRATION_TOOLS)
    world.app.require_stores()
    app, source, path = world.app, ROOT / folder, tmp_path / "imported.jsonl"
    with allure.step(f"import {folder} into a snapshot with the app's {app.embedder}"):
        header = import_history(app.target, source / "memories.jsonl", path, questions_file=source / "questions.jsonl",
                                sample=0, seed=world.data.seed, embedders=[app.embedder], threshold=app.threshold,
                                k=app.recall_k, description=f"imported from {folder}")
        report.attach_text("imported snapshot", f"{header.memories} memories of {header.owners} owners, "
                                                f"{header.probes} probes")
    migration.load_history(app, path, world.tag)


CAPTURED_FACTS = ("My locker code is 12-{n}-7.", "My dentist is Doctor Okafor {n}.", "Where is it?",
                  "My bike shop is “Rueda” {n} 🚲.", "My locker code is 12-{n}-7.", "Note: my vet is <b>Paws</b> {n}.",
                  "My home city is 東京 and the gate code is {n}.", "My wifi password is C:\\net\\{n}.")


@given("users have told the app facts in several conversations")
def users_told_facts(world: World) -> None:
    """In an app of its own, three users (Ana, Ana1, Ben) each store sixteen memories through its memory API."""
    world.app.require(Capability.DATABASE_ACCESS)
    world.app.require(Capability.MIGRATION_TOOLS)  # the snapshot is replayed through them, later
    world.use_app(world.app.fresh())  # a store of its own
    for n, name in enumerate(("Ana", "Ana1", "Ben")):
        actor = world.actor(name)
        for conversation in range(2):
            actor.session.remember([fact.format(n=f"{n}{conversation}{i}")
                                    for i, fact in enumerate(CAPTURED_FACTS)])


@when("the app's memory is captured as a snapshot, with questions sampled from it")
def capture_snapshot(world: World, migration: MigrationRun, tmp_path: Path) -> None:
    """Captures the app's memories and what it answers now as a snapshot, with 16 questions sampled."""
    path = tmp_path / "captured.jsonl.gz"
    with allure.step("capture the app's memories and what it answers now"):
        header = capture(world.app, path, questions=None, sample=16, seed=world.data.seed, k=world.app.recall_k,
                         description=f"captured in scenario {world.tag}")
        report.attach_text("captured snapshot", f"{header.memories} memories of {header.owners} owners, "
                                                f"{header.probes} probes, {header.embedders[0]}")
    migration.captured = path


@when("the snapshot is replayed into a fresh store through the migration")
def replay_captured(world: World, migration: MigrationRun) -> None:
    """Loads the captured snapshot into a fresh app's legacy store and migrates it in batches of 7."""
    world.use_app(world.app.fresh())
    assert migration.captured is not None, "nothing was captured"
    migration.load_history(world.app, migration.captured, world.tag)
    migrate(world, migration, 7, world.app.embedder)


@given(parsers.parse("the legacy Redis store holds {count:d} generated memories of one owner"))
def generated_memories(world: World, migration: MigrationRun, count: int) -> None:
    """Loads that many generated memories of one owner into the legacy store, with questions about them."""
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
    migration.questions = [f"What is my {kind}?" for kind in kinds] + [f"Which {kind} do I have?" for kind in kinds]
    migration.load_memories(world.app, memories, {"bulk": owner}, "hash-ngram-v1")


@given(parsers.parse('an app that searches owners with many memories through an "{index}" index'))
def app_with_index(world: World, index: str) -> None:
    """The scenario goes on with an app that searches owners of 200 memories or more through that index kind."""
    world.app.require(Capability.MIGRATION_TOOLS)  # before starting an app the scenario could not load
    world.use_app(world.app.with_settings(Capability.APP_SETTINGS, index=index, **{"ann-min-rows": "200"}))


@given(parsers.parse('the memories are migrated to PostgreSQL in batches of {size:d} with the "{embedder}" '
                     "embedding model"))
@when(parsers.parse('the memories are migrated to PostgreSQL in batches of {size:d} with the "{embedder}" '
                    "embedding model"))
def migrate(world: World, migration: MigrationRun, size: int, embedder: str) -> None:
    """Creates the owners, then migrates the legacy store with the app's tool, in those batches, with that model."""
    world.app.require(Capability.MIGRATION_TOOLS)
    if world.app.health.get("embedder") != embedder:
        world.use_app(world.app.with_settings(Capability.APP_SETTINGS, embedder=embedder))
    world.app.require(Capability.MIGRATION_TOOLS)
    world.app.require_stores()
    if not migration.owners_created:
        if migration.replay is not None:
            migration.import_replayed_owners(world.app)
        else:
            for owner, user_id in migration.owners.items():
                world.create_user(owner.capitalize(), email_local=owner, user_id=user_id)
            migration.owners_created = True
    migration.migrate(world.app, size, embedder)


@then("the migration reports every memory read and written")
def every_memory_written(world: World, migration: MigrationRun) -> None:
    """The migration's own counts: every memory read and written, none skipped."""
    counts, total = migration.last_counts, migration.total
    if (counts.read, counts.written, counts.skipped) != (total, total, 0):
        named = ""
        if migration.replay is not None:  # which memories: the replay's figures even though this check fails first
            checks = migration.replay_checks(world.app)
            named = f"\n{checks.figures()}\n{checks.lost_memories()}"
        raise AssertionError(f"the migration of {total} memories read {counts.read}, wrote {counts.written} and "
                             f"skipped {counts.skipped}{named}")


@then("the second migration writes nothing and skips every memory as already present")
def second_run_changes_nothing(migration: MigrationRun) -> None:
    """The last migration read every memory, wrote none and found every one already present."""
    counts, total = migration.last_counts, migration.total
    assert (counts.read, counts.written, counts.already_present) == (total, 0, total), (
        f"running the migration again read {counts.read}, wrote {counts.written} and found "
        f"{counts.already_present} of {total} already present")


@then("every historical memory is recalled for its owner and for nobody else")
def every_memory_recalled(world: World, migration: MigrationRun) -> None:
    """Every memory is there, its owner's, with its text and vector, recalled by its own text; no other owner's hit."""
    checks = migration.replay_checks(world.app)
    leaks, lost = checks.leaks(migration.replay), len(checks.memories.lost)
    assert not lost and not leaks, (
        f"{checks.figures()}\n" + (checks.lost_memories() if not checks.memories.ok else "")
        + (f"\nand {len(leaks)} hits of another owner:\n" + "\n".join(leaks[:15]) if leaks else ""))


@then("every historical memory keeps its conversation and its creation and expiry times")
def every_field_kept(world: World, migration: MigrationRun) -> None:
    """Every memory keeps its conversation, creation and expiry times, as far as the app keeps them."""
    checks = migration.replay_checks(world.app)
    if not checks.memories.kept_fields:
        pytest.skip(f"{world.app.target.name} keeps none of a memory's conversation, creation and expiry times "
                    f"that the suite can read: not applicable")
    assert not checks.memories.changed, f"{checks.figures()}\n{checks.changed_memories()}"


@when("one migrated memory's vector is removed from the store by hand")
def remove_one_vector(world: World, migration: MigrationRun) -> None:
    """Removes the vector of one migrated memory, drawn by the scenario's seed, from the store."""
    history = migration.replay
    assert history is not None, "no history was loaded"
    embeddable = [i for i, ok in enumerate(history.embeddable) if ok]
    victim = history.ids[embeddable[world.fake.random_int(0, len(embeddable) - 1)]]
    world.app.remove_vector(history.memory_id(victim))
    migration.removed = victim


@then("the replay names exactly that memory as lost, and only it")
def replay_names_the_removed_one(world: World, migration: MigrationRun) -> None:
    """The replay names that memory as lost, and no other."""
    checks = migration.replay_checks(world.app)
    named = [line.split()[0] for line in checks.memories.lost]
    assert named == [migration.removed], (f"the vector of {migration.removed} was removed by hand; the replay named "
                                          f"{named[:10] or 'nothing'}\n{checks.figures()}")


@then("every golden question recalls the expected memories, in order, with the expected scores")
def golden_questions(world: World, migration: MigrationRun) -> None:
    """Every golden question (probe) of the history recalls its expected memories, in order, with their scores."""
    checks = migration.replay_checks(world.app)
    failing = checks.probes.failing
    assert not failing, (f"{len(failing)} of {len(checks.probes.outcomes)} golden questions recalled differently\n"
                         f"{checks.figures()}\nthe worst:\n{checks.probes.worst_as_text()}")


@then(parsers.parse("{count:d} questions of that owner recall exactly what a full scan of the owner's memories "
                    "ranks first"))
def questions_match_full_scan(world: World, migration: MigrationRun, count: int) -> None:
    """That many questions recall, through the app's search, what an exact scan of the owner's memories ranks first."""
    app, k = world.app, world.app.recall_k
    questions = migration.questions[:count]
    vectors = [np.frombuffer(v, dtype="<f4").astype(np.float64) if v is not None else None
               for v in app.embed([m.text for m in migration.legacy] + questions, migration.embedder)]
    rows = {m.id: v for m, v in zip(migration.legacy, vectors[:len(migration.legacy)], strict=True) if v is not None}
    actor = next(iter(world.actors.values()))
    comparisons = []
    for question, qvec in zip(questions, vectors[len(migration.legacy):], strict=True):
        ranking = brute_force(rows, qvec, k=len(rows), threshold=app.threshold)
        hits = actor.session.search(question, k=k)
        comparisons.append(RecallComparison(question, actor.name, ranking[:k], hits, candidates=ranking))
    assert_same_recall(comparisons, "questions")


@given(parsers.parse('an app of its own running the "{embedder}" embedding model'))
def own_app(world: World, embedder: str) -> None:
    """The scenario goes on with an app of its own, on fresh data, running that embedding model."""
    world.app.require(Capability.EMBEDDING_MODEL_CHANGE)
    world.use_app(world.app.fresh(embedder=embedder))


@when(parsers.parse('the app moves to the "{embedder}" embedding model following the upgrade procedure'))
def move_embedding_model(world: World, embedder: str) -> None:
    """The app moves to that embedding model by its own procedure for it (the driver's)."""
    world.use_app(world.app.change_embedding_model(embedder))


@then(parsers.re(f"^searching {NAME}'s memory for each of them finds it first$"))
def search_finds_each(world: World, talk: Talk, name: str) -> None:
    """Searching the user's memory for each fact they told finds that fact's memory first."""
    actor, told = world.actors[name], talk.of(name).told
    missing = []
    for fact in told:
        hits = actor.session.search(fact.question, k=world.app.recall_k)
        if not hits or hits[0].text != fact.sentence:
            missing.append(f"  {fact.question!r}: expected {fact.sentence!r} first, got {hits[:2]}")
    assert not missing, f"{len(missing)} of {len(told)} memories are not found first:\n" + "\n".join(missing)
