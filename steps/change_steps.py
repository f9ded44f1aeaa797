"""Steps of replay_through_changes.feature, the changes: a history put into the app as it is before one of the
changes its target declares, and the app taken through the change the way its operators do. Which change comes from
the test's parameter `change_name`, which index kind from `index_kind_name` (features/conftest.py). What a step hands
on is a frozen record of the replay's (`history`, `captured`, `index_kind`: harness.replay.run), or the app after
the change (`world.app`)."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

import allure
import pytest
from pytest_bdd import given, parsers, then, when

from harness.app.app_factory import AppFactory
from harness.app.app_handle import AppHandle
from harness.app.app_tools import ToolRun
from harness.app.changes import Change, Edge, Mistake, Volume
from harness.app.index_use import promise_broken
from harness.app.legacy_store import LegacyMemory, MigrationCounts
from harness.app.store_upgrade import by_pgvector_version
from harness.drivers.base import Capability
from harness.replay.run import (
    Captured,
    HeldHistory,
    IndexKind,
    import_into_app,
    load_into_source_store,
    replay_checks,
)
from harness.snapshots import Header, read_history, snapshot_path, write_snapshot
from harness.snapshots.generate import question_count, stream_history
from harness.snapshots.importer import import_history
from harness.suite import report
from harness.suite.options import ROOT
from harness.vocabulary.facts import Fact
from steps.records import TakenBack, Talk
from steps.world import NAME, World

NEEDS = {"migration": Capability.MIGRATION_TOOLS, "embedding-model": Capability.EMBEDDING_MODEL_CHANGE,
         "upgrade": Capability.APP_UPGRADE, "store-upgrade": Capability.DATABASE_ACCESS}


@pytest.fixture
def index_kind() -> IndexKind:
    return IndexKind()


@dataclass(frozen=True)
class StoreServers:
    """The run's database server and the second provider's: the one with the older pgvector holds the history, the
    store is upgraded onto the other."""

    older: AppFactory
    newer: AppFactory


@pytest.fixture
def store_servers(request: pytest.FixtureRequest) -> StoreServers:
    """Where a second provider runs beside the run's (`make engine`, CI's testcontainers stage); else the scenario
    skips in one line."""
    second = request.getfixturevalue("second_postgres")
    if second.apps is None:
        pytest.skip(second.why_not)
    older, newer = by_pgvector_version([request.getfixturevalue("apps"), second.apps])
    if older.version == newer.version:
        pytest.skip(f"both database providers have pgvector {older.version}: there is no newer one to upgrade onto")
    return StoreServers(older.apps, newer.apps)


def declared_change(world: World, change_name: str) -> Change:
    if not change_name:
        pytest.skip(f"{world.app.target.path.name} declares no [changes] for the replay to put the app through")
    return world.app.target.change(change_name)


def app_before(world: World, change: Change, index_kind: IndexKind, request: pytest.FixtureRequest,
               **more: str) -> AppHandle:
    """A fresh app of its own as it is before the change (and searching through the index kind, if one was chosen;
    with `more` settings): for a store upgrade, on the server with the older pgvector."""
    world.app.require(NEEDS[change.kind])
    settings = {**change.before_settings, **index_kind.settings, **more}
    if change.kind == "store-upgrade":
        older = request.getfixturevalue("store_servers").older
        return world.use_app(AppHandle.fresh_on(world.app.driver, older, {**world.app.chosen, **settings}))
    return world.use_app(world.app.fresh(Capability.APP_SETTINGS, **settings))


def _history_goes_in(world: World, change: Change) -> None:
    """What putting a history where the app holds it before the change needs, asked before any app starts: before a
    migration, the app's own loading tool for the store the migration reads; before any other change, the driver's
    import into the app's own store."""
    world.app.require(Capability.MIGRATION_TOOLS if change.kind == "migration" else Capability.HISTORY_IMPORT)


def _held_before(world: World, change: Change, snapshot: Path, workdir: Path) -> HeldHistory:
    """The snapshot where the app holds its memories before the change: in the store its migration reads, or in its
    own store."""
    if change.kind == "migration":
        return load_into_source_store(world.app, snapshot, world.tag)
    return import_into_app(world.app, snapshot, workdir, world.tag)


@given(parsers.re(r'a generated history of (?P<size>[\d,]+) memories, as the app holds it before the change '
                  r'"<change>"'), converters={"size": lambda text: int(text.replace(",", ""))},
       target_fixture="history")
def generated_history(world: World, change_name: str, size: int, index_kind: IndexKind, tmp_path: Path,
                      request: pytest.FixtureRequest) -> HeldHistory:
    """Generates a history of that many memories (plus 3) and puts it into a fresh app as it is before the change."""
    return _generated(world, declared_change(world, change_name), size, index_kind, tmp_path, request)


def _generated(world: World, change: Change, size: int, index_kind: IndexKind, tmp_path: Path,
               request: pytest.FixtureRequest, questions: int | None = None) -> HeldHistory:
    _history_goes_in(world, change)
    app = app_before(world, change, index_kind, request)
    embedders = list(dict.fromkeys((change.embedder_before, change.embedder_after)))
    with allure.step(f"generate {size:,} memories (+3) with {', '.join(embedders)}, seed {world.data.seed}"):
        generated = stream_history(app.target, nominal=size, seed=world.data.seed, embedders=embedders,
                                   threshold=app.threshold, k=app.recall_k, probe_count=questions)
        path = tmp_path / "history.jsonl"
        write_snapshot(path, generated.header, generated.memories, generated.probes)
    return _held_before(world, change, path, tmp_path)


@given(parsers.re(r'the memories imported from "(?P<folder>[^"]+)", as the app holds them before the change '
                  r'"<change>"'), target_fixture="history")
def imported_history(world: World, change_name: str, folder: str, index_kind: IndexKind, tmp_path: Path,
                     request: pytest.FixtureRequest) -> HeldHistory:
    """Imports a team's memories.jsonl and questions.jsonl from that folder and puts them into a fresh app as it is
    before the change.

    The folder is made a snapshot as `make_snapshot --import` does, each question's expectation computed with the
    app's embedding models before and after the change."""
    change = declared_change(world, change_name)
    _history_goes_in(world, change)
    app = app_before(world, change, index_kind, request)
    source, path = ROOT / folder, tmp_path / "imported.jsonl"
    embedders = list(dict.fromkeys((change.embedder_before, change.embedder_after)))
    with allure.step(f"import {folder} into a snapshot with {', '.join(embedders)}"):
        header = import_history(app.target, source / "memories.jsonl", path, questions_file=source / "questions.jsonl",
                                sample=0, seed=world.data.seed, embedders=embedders, threshold=app.threshold,
                                k=app.recall_k, description=f"imported from {folder}")
        report.attach_text("imported snapshot", f"{header.memories} memories of {header.owners} owners, "
                                                f"{header.probes} probes")
    return _held_before(world, change, path, tmp_path)


@given(parsers.re(r'the golden snapshot "(?P<name>[^"]+)", as the app holds it before the change "<change>"'),
       target_fixture="history")
def golden_snapshot(world: World, change_name: str, name: str, index_kind: IndexKind, tmp_path: Path,
                    request: pytest.FixtureRequest) -> HeldHistory:
    """A golden snapshot of snapshots/, put into a fresh app as it is before the change; its questions keep the
    rankings and scores recorded with it (never computed again: an embedding model that now gives other vectors under
    its name fails them), where it records them for the app's models and recall settings (else skipped)."""
    change = declared_change(world, change_name)
    path = snapshot_path(name)
    header = next(read_history(path))
    assert isinstance(header, Header), f"{path.name} starts with no header"
    app = world.app
    models = list(dict.fromkeys((change.embedder_before, change.embedder_after)))
    if set(models) - set(header.embedders) or (header.threshold, header.k) != (app.threshold, app.recall_k):
        pytest.skip(f"the golden snapshot {path.name} records rankings for {', '.join(header.embedders)} with "
                    f"threshold {header.threshold} and k {header.k}; the change {change.name!r} runs "
                    f"{', '.join(models)} with threshold {app.threshold} and k {app.recall_k}")
    _history_goes_in(world, change)
    app_before(world, change, index_kind, request)
    return _held_before(world, change, path, tmp_path)


CAPTURED_FACTS = ("My locker code is 12-{n}-7.", "My dentist is Doctor Okafor {n}.", "Where is it?",
                  "My bike shop is “Rueda” {n} 🚲.", "My locker code is 12-{n}-7.", "Note: my vet is <b>Paws</b> {n}.",
                  "My home city is 東京 and the gate code is {n}.", "My wifi password is C:\\net\\{n}.")


@given('users have told the app facts in several conversations, before the change "<change>"')
def users_told_facts(world: World, change_name: str, request: pytest.FixtureRequest) -> None:
    """In a fresh app as it is before the change, three users (Ana, Ana1, Ben) each store sixteen memories through its
    memory API.

    What it holds is then captured with what it answers under its embedding model: a change to another model skips
    (nothing was captured under the new one)."""
    change = declared_change(world, change_name)
    if change.embedder_after != change.embedder_before:
        pytest.skip(f"the change {change.name!r} moves the app from {change.embedder_before} to "
                    f"{change.embedder_after}: what the app answers under the new model cannot be captured before it "
                    "(not applicable)")
    world.app.require(Capability.DATABASE_ACCESS)  # to capture what the app holds
    _history_goes_in(world, change)
    app_before(world, change, IndexKind(), request)
    for n, name in enumerate(("Ana", "Ana1", "Ben")):
        actor = world.actor(name)
        for conversation in range(2):
            actor.session.remember([fact.format(n=f"{n}{conversation}{i}")
                                    for i, fact in enumerate(CAPTURED_FACTS)])


# What each of three users tells in a first conversation, then corrects in a second (its newest statement wins); one
# fact is named by a common word ("will"), asked about by a question of common words only. By user: their values.
TOLD_FIRST = ("My locker code is {n}150.", "My will is with notary {notary}.", "My gate code is 77{n}1.",
              "My dentist is Doctor Okafor.")
TOLD_LATER = ("Actually, my gate code is 88{n}2.", "My dentist is Doctor {dentist}.")
TELLERS = (("Ana", "Brandt", "Lindqvist"), ("Ana1", "Moreau", "Ferreira"), ("Ben", "Kowalski", "Haddad"))
PASTED = "  My library card is LC-{n}40.\n"  # saved as pasted: the spaces before it and the line's end kept


@given('users have told the app facts in two conversations, some corrected in the second and one named by a common '
       'word, and saved a note as they pasted it, before the change "<change>"', target_fixture="talk")
def users_told_and_corrected(world: World, change_name: str, talk: Talk, index_kind: IndexKind,
                              request: pytest.FixtureRequest) -> Talk:
    """In a fresh app as it is before the change (searching through the index kind, if one was chosen; with a clock
    the test can move, for their retention to end), three users (Ana, Ana1, Ben) each tell the assistant four facts
    in a conversation, then correct two of them in a new one, through its chat API; and each saves one more fact
    through its memory API with the spaces and line end it was pasted with. When each was made is noted (a span of
    the suite's clock), for the edges of their retention."""
    change = declared_change(world, change_name)
    for needed in (Capability.CHAT_API, Capability.MOVABLE_CLOCK, Capability.DATABASE_ACCESS):  # the last: a capture
        world.app.require(needed)
    _history_goes_in(world, change)
    app_before(world, change, index_kind, request, clock="settable")
    for n, (name, notary, dentist) in enumerate(TELLERS):
        session = world.actor(name).session
        for sentences in (TOLD_FIRST, TOLD_LATER):
            conversation = session.start_conversation()
            for sentence in (s.format(n=n + 1, notary=notary, dentist=dentist) for s in sentences):
                started = time.monotonic()
                session.send(conversation, sentence)
                talk = talk.stored(name, Fact.parse(sentence), made=((sentence, (started, time.monotonic())),))
        pasted, started = PASTED.format(n=n + 1), time.monotonic()
        session.remember([pasted])
        talk = talk.stored(name, Fact.parse(pasted), made=((pasted, (started, time.monotonic())),))
    return talk


@given('the captured history, as the app holds it before the change "<change>"', target_fixture="history")
def captured_history(world: World, change_name: str, captured: Captured, tmp_path: Path) -> HeldHistory:
    """Puts the captured snapshot where the app it was captured from holds its memories before the change.

    Its memories and owners come back under the run's own ids (`<tag>-<id>`): beside what the users told, never in its
    place."""
    return _held_before(world, declared_change(world, change_name), captured.path, tmp_path)


@given('an app that searches every owner\'s memories through the "<index kind>" index it declares',
       target_fixture="index_kind")
def chosen_index_kind(world: World, index_kind_name: str) -> IndexKind:
    """The app started next searches every owner's memories through that index kind (the target's [index_kinds]
    settings for it)."""
    if not index_kind_name:
        pytest.skip(f"{world.app.target.path.name} declares no [index_kinds] for its searches to go through")
    world.app.require(Capability.APP_SETTINGS)
    return IndexKind(index_kind_name, MappingProxyType(dict(world.app.target.index_kinds[index_kind_name])))


def declared_volume(world: World, change: Change, index_kind: IndexKind, table: str = "volumes") -> Volume:
    """The history past the limits of the index kind's parameters the change declares ([changes."<name>".volumes]),
    or, `table` "build_memory", the one whose index needs much memory to build; a change without one skips."""
    volume = change.volume_for(index_kind.name) if table == "volumes" else change.build_volume_for(index_kind.name)
    if volume is None:
        what = "past the limits of" if table == "volumes" else "whose index needs much memory to build, for"
        pytest.skip(f'{world.app.target.path.name} declares no history {what} the {index_kind.name!r} index for the '
                    f'change {change.name!r}: [changes."{change.name}".{table}]')
    return volume


@given('a history past the limits of the "<index kind>" index\'s parameters, as the app holds it before the change '
       '"<change>"', target_fixture="history")
def history_past_the_limits(world: World, change_name: str, index_kind: IndexKind, tmp_path: Path,
                            request: pytest.FixtureRequest) -> HeldHistory:
    """Generates the history the change declares past the limits of that index kind's parameters (its number of
    memories, plus 3; as many golden questions as the smallest history has) and puts it into a fresh app, searching
    through that index kind, as it is before the change."""
    change = declared_change(world, change_name)
    volume = declared_volume(world, change, index_kind)
    return _generated(world, change, volume.memories, index_kind, tmp_path, request, question_count(0))


@given('an app of its own that searches every owner\'s memories through the "<index kind>" index it declares',
       target_fixture="index_kind")
def own_app_of_index_kind(world: World, index_kind_name: str) -> IndexKind:
    """A fresh app of the scenario's own, searching every owner's memories through that index kind (the target's
    [index_kinds] settings for it), which the scenario may restart and stop."""
    kind = chosen_index_kind(world, index_kind_name)
    world.use_app(world.app.fresh(Capability.APP_SETTINGS, **kind.settings))
    return kind


@given('the app goes through the change "<change>"')
@when('the app goes through the change "<change>"')
def go_through_change(world: World, change_name: str, request: pytest.FixtureRequest) -> None:
    """The app goes through the declared change the way its operators do it (the driver's procedure).

    A change that reports what it carried over (a migration's counts) must have read and written every memory of the
    history in the store it read, and skipped none; when it did not, the replay's figures name the memories it left
    behind."""
    _go_through(world, declared_change(world, change_name), request)


@when('the app goes through the change "<change>" as that history needs')
def go_through_change_for_volume(world: World, change_name: str, index_kind: IndexKind,
                                 request: pytest.FixtureRequest) -> None:
    """The declared change, with the words an operator adds for a history past the limits of the index kind's
    parameters ([changes."<name>".volumes]); every memory carried over, as for any change."""
    change = declared_change(world, change_name)
    _go_through(world, change, request, declared_volume(world, change, index_kind).give)


# -- the memory an index build is given: [changes."<name>".build_memory] -------------------------------------------

@given('a history whose "<index kind>" index needs tens of megabytes to build, as the app holds it before the change '
       '"<change>"', target_fixture="history")
def history_of_a_large_graph(world: World, change_name: str, index_kind: IndexKind, tmp_path: Path,
                             request: pytest.FixtureRequest) -> HeldHistory:
    """Generates the history the change declares for its index build's memory (its number of memories, plus 3) and
    puts it into a fresh app, searching through that index kind, as it is before the change."""
    change = declared_change(world, change_name)
    volume = declared_volume(world, change, index_kind, "build_memory")
    return _generated(world, change, volume.memories, index_kind, tmp_path, request, question_count(0))


@when('the app goes through the change "<change>", its index\'s build memory left to the app',
      target_fixture="carried_over")
def go_through_change_with_build_memory_left_to_app(world: World, change_name: str, index_kind: IndexKind,
                                                    request: pytest.FixtureRequest) -> MigrationCounts | None:
    """The declared change, with no words of the operator's on the memory of its index build (the app's default);
    every memory carried over, as for any change."""
    change = declared_change(world, change_name)
    return _go_through(world, change, request, declared_volume(world, change, index_kind, "build_memory").give)


@when('the operator runs the change "<change>" again, giving its index\'s build less memory than it needs',
      target_fixture="carried_over")
def go_through_change_short_of_build_memory(world: World, change_name: str,
                                            index_kind: IndexKind) -> MigrationCounts | None:
    """The declared change once more on the same stores (it carries nothing over again, and builds its index again),
    with the words the target declares for a build memory the history's index outgrows (`short`)."""
    change = declared_change(world, change_name)
    volume = declared_volume(world, change, index_kind, "build_memory")
    app, counts = world.app.go_through(change, None, (*volume.give, *volume.short))
    world.use_app(app)
    return counts


def _told_of_builds(carried_over: MigrationCounts | None) -> tuple[str, ...]:
    if carried_over is None or carried_over.outgrown_builds is None:
        pytest.skip("the change's tool does not tell of index builds that outgrew the memory they were given")
    return carried_over.outgrown_builds


@then("the change told its operators of no index build that outgrew the memory it had")
def no_build_outgrew_its_memory(carried_over: MigrationCounts | None) -> None:
    """Where the change's tool tells of index builds that outgrew the memory they were given (a graph built partly on
    disk, several times slower), it told of none: the memory the app gave its build was enough for the history."""
    told = _told_of_builds(carried_over)
    assert not told, ("the change built its index with less memory than the history's index needed, and told its "
                      "operators: " + " | ".join(told))


@then("the change told its operators that its index build outgrew the memory it had")
def build_outgrew_its_memory(carried_over: MigrationCounts | None) -> None:
    """Given less build memory than its index needs, the change's tool tells its operators so, one line a build."""
    told = _told_of_builds(carried_over)
    assert told, ("the change built its index with less memory than the history's index needed and told its operators "
                  f"nothing of it; it said: {carried_over.output.strip()[-300:] if carried_over else ''!r}")


def _go_through(world: World, change: Change, request: pytest.FixtureRequest,
                extra: Sequence[str] = ()) -> MigrationCounts | None:
    newer = request.getfixturevalue("store_servers").newer if change.kind == "store-upgrade" else None
    app, counts = world.app.go_through(change, newer, extra)
    world.use_app(app)
    if counts is not None:
        held: HeldHistory = request.getfixturevalue("history")
        total = held.history.size
        if (counts.read, counts.written, counts.skipped) != (total, total, 0):
            checks = replay_checks(app, held)
            raise AssertionError(f"the change {change.name!r} of {total} memories read {counts.read}, wrote "
                                 f"{counts.written} and skipped {counts.skipped}\n{checks.figures()}\n"
                                 f"{checks.lost_memories()}")
        assert not (wrong := embedded_again_wrongly(change, counts, held)), wrong
    return counts


def embedded_again_wrongly(change: Change, counts: MigrationCounts, held: HeldHistory) -> str:
    """What is wrong with the count of memories a migration says it embedded again (every one it read with a vector
    of another model than its own, each once), or "" (also where the tool or the history does not say)."""
    expected = held.history.embedded_again_by(change.embedder_after)
    if counts.reembedded is None or expected is None or counts.reembedded == expected:
        return ""
    return (f"the change {change.name!r} says it embedded {counts.reembedded} memories again, where {expected} of the "
            f"{held.history.size} it read had a vector of another model than its {change.embedder_after}\n"
            f"{counts.output.strip()[-300:]}")


@given('the change "<change>" runs again from the store it reads, as a migration does')
def runs_again(world: World, change_name: str) -> None:
    """Only a change that reads a store the app keeps (a migration) can run again on the same data; the others skip
    (not applicable)."""
    change = declared_change(world, change_name)
    if change.kind != "migration":
        pytest.skip(f"the change {change.name!r} ({change.kind}) does not run again from a store the app keeps, as a "
                    "migration does (not applicable)")


@when('the app goes through the change "<change>" again', target_fixture="counted_again")
def go_through_change_again(world: World, change_name: str, history: HeldHistory) -> MigrationCounts:
    """The same change once more, as an operator running it again does: it carries none of the history over again
    (each memory already there, or deleted by its owner since), so nothing its owners deleted comes back."""
    change = declared_change(world, change_name)
    app, counts = world.app.go_through(change, None)
    world.use_app(app)
    assert counts is not None, f"the change {change.name!r} reported no counts"
    total = history.history.size
    assert (counts.read, counts.written) == (total, 0), (
        f"running the change {change.name!r} again read {counts.read} of the history's {total} memories and wrote "
        f"{counts.written} of them again: it must write none (each is there already, or its owner deleted it)")
    assert counts.skipped == total, (
        f"running the change {change.name!r} again read {total} memories, wrote none and says it skipped "
        f"{counts.skipped}: its counts must account for every memory it read\n{counts.output.strip()[-300:]}")
    assert not (wrong := embedded_again_wrongly(change, counts, history)), wrong
    return counts


WHY_SKIPPED = "(?P<why>deleted by its owner|of an owner it does not know)"


@then(parsers.re(f"^the change counted each memory {NAME} took back as {WHY_SKIPPED}, and every other as already "
                 "there$"))
def counted_again_taken_back(counted_again: MigrationCounts, history: HeldHistory, taken_back: TakenBack, name: str,
                             why: str) -> None:
    """Running the change again, it says why it skipped each memory it read: the ones the user took back for that
    reason, the others as already there; a tool that does not say why skips this check."""
    _counted_again(counted_again, history, len(taken_back.memory_ids), why, name)


@then(parsers.re(f"^the change counted every memory as {WHY_SKIPPED}$"))
def counted_again_every(counted_again: MigrationCounts, history: HeldHistory, why: str) -> None:
    """Running the change again, it says why it skipped each memory it read: every one for that reason."""
    _counted_again(counted_again, history, history.history.size, why, "every owner")


def _counted_again(counts: MigrationCounts, history: HeldHistory, taken: int, why: str, who: str) -> None:
    total = history.history.size
    if counts.deleted_by_owner is None or counts.unknown_owner is None:
        pytest.skip("the change's tool does not say why it skipped what it skipped (deleted by their owner, of an "
                    f"unknown owner): {counts.output.strip()[-200:]!r}")
    assert taken, f"{who} took back none of the {total} memories"
    deleted, unknown = (taken, 0) if why == "deleted by its owner" else (0, taken)
    said = (counts.already_present, counts.deleted_by_owner, counts.unknown_owner)
    assert said == (total - taken, deleted, unknown), (
        f"running the change again, after {who} took back {taken} of the {total} memories, it "
        f"counted {said[0]} already present, {said[1]} deleted by their owner and {said[2]} of an unknown owner, "
        f"where {total - taken}, {deleted} and {unknown} are what happened\n{counts.output.strip()[-300:]}")


@given('an app of its own, as it is before the change "<change>"')
def own_app_before_change(world: World, change_name: str, request: pytest.FixtureRequest) -> None:
    """The scenario goes on with a fresh app of its own as it is before the change.

    What users tell the app goes into the store it runs on: a change that moves memories in from a store the app no
    longer writes (a migration) has nothing of theirs to carry over, and skips."""
    change = declared_change(world, change_name)
    if change.kind == "migration":
        pytest.skip(f"the change {change.name!r} ({change.kind}) moves memories from a store the running app no "
                    "longer writes: what its users tell it does not go through the change (not applicable)")
    app_before(world, change, IndexKind(), request)


@dataclass(frozen=True)
class MistakenRun:
    """One run of the change with an operator's mistake, as it ended."""

    mistake: Mistake
    run: ToolRun


def listed_with_change(world: World, change_name: str, table: str) -> None:
    """Skips unless the target lists a `table` of the change ([changes."<name>".<table>]: mistakes, edges)."""
    change = declared_change(world, change_name)
    if not getattr(change, table):
        pytest.skip(f'{world.app.target.path.name} lists no {table} for the change {change.name!r}: '
                    f'[changes."{change.name}".{table}]')


@given('the operators of the change "<change>" are warned of mistakes they may make')
def warned_of_mistakes(world: World, change_name: str) -> None:
    """The target lists them with the change ([changes."<name>".mistakes]); a change without them skips."""
    listed_with_change(world, change_name, "mistakes")


@when('the operator runs the change "<change>" with each of those mistakes', target_fixture="mistaken_runs")
def runs_with_mistakes(world: World, change_name: str) -> list[MistakenRun]:
    """One run per mistake, in the order listed: the change's tool with the mistake's words added to its command, or
    the loader of the store the change reads given the mistake's file of records."""
    change = declared_change(world, change_name)
    return [MistakenRun(mistake, world.app.try_change(change, mistake)) for mistake in change.mistakes]


@then("each run is refused in one line that names what to fix")
def refused_in_one_line(mistaken_runs: list[MistakenRun]) -> None:
    """A failing exit status and one line on the error stream (no traceback), naming what the target says it must (or
    the very line it lists, where the app documents its words)."""
    wrong = []
    for mistaken in mistaken_runs:
        said = [line for line in mistaken.run.stderr.splitlines() if line.strip()]
        mistake = mistaken.mistake
        what = f"{mistake.name} ({mistake.given})"
        if mistaken.run.returncode == 0:
            wrong.append(f"{what}: the tool was not refused (exit status 0)")
        elif len(said) != 1:
            wrong.append(f"{what}: the tool said {len(said)} lines, not one; its last: {said[-3:]}")
        elif mistake.named not in said[0]:
            wrong.append(f"{what}: its refusal {said[0]!r} does not name {mistake.named!r}")
        elif mistake.said and said[0] != mistake.said:
            wrong.append(f"{what}: its refusal {said[0]!r} is not the documented {mistake.said!r}")
    assert not wrong, "a mistaken run of the change was not refused in one line that says what to fix:\n" + (
        "\n".join(wrong))


@given('the operators of the change "<change>" may run it with settings at the edges of what it takes')
def edges_declared(world: World, change_name: str) -> None:
    """The target lists them with the change ([changes."<name>".edges]); a change without them skips."""
    listed_with_change(world, change_name, "edges")


@dataclass(frozen=True)
class EdgeRun:
    """A run of the change's tool with a setting at its edge: what the tool said, and what its store then lacked or
    had besides the vector indexes the app promises for that setting (read before the next run rebuilds them)."""

    edge: Edge
    run: ToolRun
    indexes_wrong: list[str]


@when('the operator runs the change "<change>" with each of those settings', target_fixture="edge_runs")
def runs_at_edges(world: World, change_name: str) -> list[EdgeRun]:
    """One run per setting, in the order listed, on the same stores: the change's tool with the setting's words."""
    change = declared_change(world, change_name)
    runs = []
    for edge in change.edges:
        run = world.app.try_change_at_edge(change, edge)
        runs.append(EdgeRun(edge, run, promise_broken(world.app, edge.give) if run.returncode == 0 else []))
    return runs


@then("after each run the store holds exactly the vector indexes the app promises for its setting")
def edge_runs_keep_index_promise(edge_runs: list[EdgeRun]) -> None:
    """As its documentation promises for the setting (an HNSW graph in as many parts as --index-graph-rows makes,
    one row a part included): read after each run, not only the last."""
    wrong = [f"{e.edge.name} ({' '.join(e.edge.give)}):\n" + "\n".join(e.indexes_wrong)
             for e in edge_runs if e.indexes_wrong]
    assert not wrong, "a run of the change with a setting at its edge left other vector indexes than the app " \
                      "promises:\n" + "\n".join(wrong)


@then("each run ends well and accounts for every memory of the history")
def edge_runs_end_well(world: World, change_name: str, edge_runs: list[EdgeRun], history: HeldHistory) -> None:
    """Exit status 0, and counts that read every memory and wrote each, or found it already there (and embedded again
    those read with a vector of another model, where the tool says)."""
    change, total, wrong = declared_change(world, change_name), history.history.size, []
    for edge_run in edge_runs:
        edge, run = edge_run.edge, edge_run.run
        what = f"{edge.name} ({' '.join(edge.give)})"
        if run.returncode != 0:
            wrong.append(f"{what}: exit status {run.returncode}; it said {run.stderr.strip().splitlines()[-3:]}")
            continue
        counts = MigrationCounts.parse(run.stdout)
        if (counts.read, counts.written + counts.already_present) != (total, total):
            wrong.append(f"{what}: read {counts.read} of {total} memories, wrote {counts.written} and found "
                         f"{counts.already_present} already there")
        elif again := embedded_again_wrongly(change, counts, history):
            wrong.append(f"{what}: {again}")
    assert not wrong, "a run of the change with a setting at its edge did not end well:\n" + "\n".join(wrong)


@when('the operator runs the change "<change>" again, as it should be run')
def runs_as_it_should(world: World, change_name: str, history: HeldHistory) -> None:
    """After the refused runs: every memory of the history carried over, by this run or by one before it that got as
    far (its counts: each memory read, and written now or already there)."""
    change = declared_change(world, change_name)
    app, counts = world.app.go_through(change, None)
    world.use_app(app)
    assert counts is not None, f"the change {change.name!r} reported no counts"
    total = history.history.size
    assert (counts.read, counts.written + counts.already_present, counts.skipped) == (
        total, total, counts.already_present), (
        f"the change {change.name!r} run as it should, after the mistaken runs, read {counts.read} of {total} memories,"
        f" wrote {counts.written} and found {counts.already_present} already there, skipping {counts.skipped}: every "
        f"memory must be carried over once\n{counts.output.strip()[-300:]}")
    assert not (wrong := embedded_again_wrongly(change, counts, history)), wrong


# -- the loader of the store a migration reads, given a record it must refuse after a whole chunk --------------------
@dataclass(frozen=True)
class ChunkAndOneMore:
    """A chunk of records the loader takes (as many as its target declares, `load_chunk`) and then one it must refuse
    (its owner missing), as JSON Lines; and how the loader ended with them, once given."""

    chunk: int
    ids: tuple[str, ...]  # the chunk's records, in order
    refused_id: str
    lines: str
    embedder: str
    run: ToolRun | None = None
    held: frozenset[str] = frozenset()  # which of them the store then held

    @property
    def refused_line(self) -> int:
        return self.chunk + 1

    def given(self, run: ToolRun, held: set[str]) -> ChunkAndOneMore:
        return ChunkAndOneMore(self.chunk, self.ids, self.refused_id, self.lines, self.embedder, run,
                               frozenset(held & {*self.ids, self.refused_id}))


@given('the loader of the store the change "<change>" reads takes records in chunks its operators are told of',
       target_fixture="chunk_and_one_more")
def loader_chunks(world: World, change_name: str) -> ChunkAndOneMore:
    """A migration whose target declares its loader's chunk (`load_chunk`): that many records of an owner of the
    scenario's, then one without its owner; a change that reads no such store, or declares no chunk, skips."""
    change = declared_change(world, change_name)
    if change.kind != "migration" or "load_chunk" not in change.options:
        pytest.skip(f"the change {change.name!r} ({change.kind}) declares no chunk its loader takes records in "
                    f'([changes."{change.name}"] load_chunk)')
    world.app.require(Capability.MIGRATION_TOOLS)
    chunk, owner, embedder = int(change.options["load_chunk"]), f"{world.tag}-owner", change.options["embedder"]
    ids = tuple(f"{world.tag}-chunk-{n}" for n in range(chunk))
    lines = "".join(LegacyMemory(mid, owner, f"My locker number is {n}.", "2024-05-08T13:56:00+00:00")
                    .as_record(embedder) for n, mid in enumerate(ids))
    refused = f"{world.tag}-ownerless"
    lines += json.dumps({"id": refused, "text": "My bike is red.", "created_at": "2024-05-08T13:56:00+00:00"}) + "\n"
    return ChunkAndOneMore(chunk, ids, refused, lines, embedder)


@when("the operator gives that loader those records as a file", target_fixture="chunk_and_one_more")
def loader_given_a_file(world: World, chunk_and_one_more: ChunkAndOneMore, tmp_path: Path) -> ChunkAndOneMore:
    """The records written to a file, the loader given its path (`--file`)."""
    path = tmp_path / "records.jsonl"
    path.write_text(chunk_and_one_more.lines, encoding="utf-8")
    run = world.app.try_load_legacy_store("", chunk_and_one_more.embedder, ["--file", str(path)])
    return chunk_and_one_more.given(run, world.app.legacy_memory_ids())


@when("the operator streams the same records to that loader", target_fixture="chunk_and_one_more")
def loader_given_a_stream(world: World, chunk_and_one_more: ChunkAndOneMore) -> ChunkAndOneMore:
    """The records given on the loader's standard input."""
    run = world.app.try_load_legacy_store(chunk_and_one_more.lines, chunk_and_one_more.embedder)
    return chunk_and_one_more.given(run, world.app.legacy_memory_ids())


def _refusal(given: ChunkAndOneMore, how: str) -> str:
    """The loader's one line refusing the record after the chunk, naming its line (`:<n>:`)."""
    assert given.run is not None, f"the loader was given no records {how}"
    said = [line for line in given.run.stderr.splitlines() if line.strip()]
    assert given.run.returncode != 0 and len(said) == 1, (
        f"the loader given {given.chunk} records and one without its owner {how} ended with exit status "
        f"{given.run.returncode} and said {said[-3:] or given.run.stdout.strip()[-200:]!r}: it must refuse it in one "
        "line")
    assert f":{given.refused_line}:" in said[0], (
        f"the loader's refusal {said[0]!r} does not name the line of the record it refused ({given.refused_line})")
    return said[0]


@then("the loader refuses it in one line naming the record's line, and the store holds none of the records")
def file_refused_whole(chunk_and_one_more: ChunkAndOneMore) -> None:
    """A refused file loads nothing: not even the chunk before the refused record."""
    _refusal(chunk_and_one_more, "as a file")
    assert not chunk_and_one_more.held, (
        f"the loader refused the file, and the store holds {len(chunk_and_one_more.held)} of its records: a refused "
        "file must load nothing")


@then("the loader refuses it in one line naming the record's line and how many records it loaded before it, and the "
      "store holds exactly those")
def stream_refused_after_its_chunks(chunk_and_one_more: ChunkAndOneMore) -> None:
    """A stream cannot be read twice: the chunk before the refused record is loaded, the refusal says how many
    records that is, and the refused record is not loaded."""
    given = chunk_and_one_more
    said = _refusal(given, "on its standard input")
    assert re.search(rf"\b{given.chunk} records\b", said), (
        f"the loader's refusal {said!r} does not say it loaded the {given.chunk} records before it")
    assert given.held == frozenset(given.ids), (
        f"the loader said {said!r}, and the store holds {len(given.held)} of the streamed records"
        + (" (the refused one among them)" if given.refused_id in given.held else "")
        + f", not the {given.chunk} before the refused one")


@then('the app\'s store holds the vector index the app promises for the "<index kind>" index and that history, and it '
      'is valid')
def promised_index_for_history(world: World, change_name: str, index_kind: IndexKind) -> None:
    """The vector indexes of the app's store are those the app promises for that index kind, the history it now holds
    and the words the operator gave the change for it: each there, of its kind, usable by queries (valid), with the
    build options and the condition of a partial index the app promises, and none besides."""
    volume = declared_volume(world, declared_change(world, change_name), index_kind)
    wrong = promise_broken(world.app, volume.give)
    assert not wrong, (f"after the change with {' '.join(volume.give) or 'no words added'}, the app's store does not "
                       f"hold the vector index it promises for {index_kind.name!r}:\n" + "\n".join(wrong))
