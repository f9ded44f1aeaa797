"""Steps of replay_through_changes.feature that check a history after the change: every memory and every golden
question, compared with what the history says they must be (the replay's checks, made once per scenario: the
`replay` fixture); a history captured from the running app; a vector taken out by hand, which the replay must name;
and what a user told before the change, searched for after it."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import allure
import pytest
from pytest_bdd import given, parsers, then, when

from harness.app.index_use import Asked, against_full_scan, asked, index_method, scans_during
from harness.drivers.base import MovableClock, StoreReads
from harness.replay.answers import (
    Answered,
    AnswersBefore,
    ListedBefore,
    ask_again,
    ask_in_a_new_conversation,
    assert_answered,
    assert_listed_as_before,
    listing_rows,
    retention_edges,
    signed_in_owners,
)
from harness.replay.capture import capture
from harness.replay.checks import ReplayChecks
from harness.replay.run import Captured, HeldHistory, IndexKind, replay_checks
from harness.snapshots.questions import Question
from harness.suite import report
from harness.vocabulary.answers import AnswerCheck
from harness.vocabulary.language import normalise_key
from harness.vocabulary.recall import assert_recall_at_least, assert_same_recall
from steps.records import Talk
from steps.world import NAME, World


@pytest.fixture
def replay(world: World, history: HeldHistory) -> ReplayChecks:
    """Both checks of the replay, made when a step first asks for them, on the app as it is then (after the change)
    with the embedding model it runs then."""
    return replay_checks(world.app, history)


@dataclass(frozen=True)
class RemovedVector:
    """The memory whose vector a step took out of the app's store by hand, by its id in the history."""

    snapshot_id: str


def _captured(world: World, tmp_path: Path, questions: list[Question] | None, what: str) -> Captured:
    path = tmp_path / "captured.jsonl.gz"
    with allure.step(f"capture the app's memories and what it recalls now for {what}"):
        header = capture(world.app, path, questions=questions, sample=16, seed=world.data.seed, k=world.app.recall_k,
                         description=f"captured in scenario {world.tag}")
        report.attach_text("captured snapshot", f"{header.memories} memories of {header.owners} owners, "
                                                f"{header.probes} probes, {header.embedders[0]}")
    return Captured(path)


@given("the app's memory is captured as a snapshot, with questions sampled from it", target_fixture="captured")
def capture_snapshot(world: World, tmp_path: Path) -> Captured:
    """Captures the app's memories and what it answers now as a snapshot, with 16 questions sampled."""
    return _captured(world, tmp_path, None, "16 questions sampled from them")


@given("each of them has asked the assistant about each of their facts in a new conversation, and was answered with "
       "its newest statement", target_fixture="answers_before")
def asked_before(world: World, talk: Talk, answers: AnswerCheck) -> AnswersBefore:
    """Each user asks about every fact they told (its key once, in the order first told), in one new conversation;
    each answer must be the fact's newest statement, and is noted as what the user was answered before the change."""
    noted, wrong = [], []
    for name, said in talk.by.items():
        newest = {normalise_key(fact.key): fact for fact in said.told}  # the last statement of each fact
        session = world.actors[name].session
        replies = ask_in_a_new_conversation(session, [fact.question for fact in newest.values()])
        for fact, reply in zip(newest.values(), replies, strict=True):
            noted.append(Answered(session.account.id, name, fact.question, reply, fact.forgotten))
            if not answers.matches(reply, fact.answer):
                wrong.append(f"  {name} asked {fact.question!r}: expected {fact.answer!r}, got {reply!r}")
    assert not wrong, f"before the change, {len(wrong)} of {len(noted)} answers were wrong:\n" + "\n".join(wrong)
    return AnswersBefore(tuple(noted))


@given("each of them has listed their memories", target_fixture="listed_before")
def listed_before(world: World, talk: Talk) -> ListedBefore:
    """Each user's memories, oldest first, as the app's API lists them to the user now."""
    listed = []
    for name in talk.by:
        session = world.actors[name].session
        listed.append((session.account.id, name, tuple(m.text for m in session.memories())))
    return ListedBefore(tuple(listed))


@given("the app's memory is captured as a snapshot, with the questions they asked", target_fixture="captured")
def capture_with_their_questions(world: World, answers_before: AnswersBefore, tmp_path: Path) -> Captured:
    """Captures the app's memories and what it recalls now for each question the users asked (so that each of them
    is an owner of the snapshot who can sign in after the change)."""
    questions = [Question(a.owner, a.question) for a in answers_before.answered]
    return _captured(world, tmp_path, questions, f"the {len(questions)} questions its users asked")


@then("every historical memory is recalled for its owner and for nobody else")
def every_memory_recalled(history: HeldHistory, replay: ReplayChecks) -> None:
    """Every memory is there, its owner's, with its text and vector, recalled by its own text; no other owner's hit."""
    leaks, lost = replay.leaks(history.history), len(replay.memories.lost)
    assert not lost and not leaks, (
        f"{replay.figures()}\n" + (replay.lost_memories() if not replay.memories.ok else "")
        + (f"\nand {len(leaks)} hits of another owner:\n" + "\n".join(leaks[:15]) if leaks else ""))


@then("every historical memory keeps its conversation and its creation and expiry times")
def every_field_kept(world: World, replay: ReplayChecks) -> None:
    """Every memory keeps its conversation, creation and expiry times, as far as the app keeps them."""
    if not replay.memories.kept_fields:
        pytest.skip(f"{world.app.target.name} keeps none of a memory's conversation, creation and expiry times "
                    f"that the suite can read: not applicable")
    assert not replay.memories.changed, f"{replay.figures()}\n{replay.changed_memories()}"


@then("every golden question recalls the expected memories, in order, with the expected scores")
def golden_questions(replay: ReplayChecks) -> None:
    """Every golden question (probe) of the history recalls its expected memories, in order, with their scores."""
    failing = replay.probes.failing
    assert not failing, (f"{len(failing)} of {len(replay.probes.outcomes)} golden questions recalled differently\n"
                         f"{replay.figures()}\nthe worst:\n{replay.probes.worst_as_text()}")


@then('every golden question, asked for as many memories as a search returns, recalls what a full scan of its '
      'owner\'s memories ranks, through the "<index kind>" index')
def golden_questions_at_most(world: World, history: HeldHistory, index_kind: IndexKind, change_name: str) -> None:
    """Every golden question asked again by its owner for the most memories one search returns (the target's [limits]
    search_results), each compared with a full scan of the owner's memories in the app's store (ties in either
    order); and the app's own index-scan counter shows each search went through an index of that kind (a kind without
    an index: nothing to count). The same memories, unless the target declares the index approximate for this history
    (its `recall` below 1, as the app documents it): then only memories the scan ranks, with its scores and in its
    order, and at least that share of them over all the questions. The app (the scenario's own) is stopped before the
    count is read: this step comes last."""
    app, replayed = world.app, history.history
    volume = app.target.change(change_name).volume_for(index_kind.name)
    share = volume.recall if volume is not None else 1.0
    most = app.target.limits.search_results
    if most is None:
        pytest.skip(f"{app.target.path.name} declares no [limits] search_results: the most memories a search returns")
    by_owner: dict[str, list[str]] = {}
    for probe in replayed.probes:
        by_owner.setdefault(probe.owner, []).append(probe.query)
    questions = [q for mine in by_owner.values() for q in mine]  # in the order they are asked
    vectors = app.embed(questions)
    searched = sum(1 for vector in vectors if vector is not None)  # one without content words has nothing to search
    searches: list[Asked] = []

    def ask() -> int:
        for owner, mine in by_owner.items():
            session = app.session(history.accounts[owner])
            try:
                searches.extend(asked(session, owner, replayed.user_id(owner), mine, most))
            finally:
                session.close()
        return searched

    method = index_method(index_kind)
    with allure.step(f"ask {len(questions)} golden questions for {most} memories each"):
        used, _ = scans_during(app, method, ask, f"{index_kind.name} index scans") if method else (0, ask())
    with allure.step("scan each owner's memories for the same questions"):
        comparisons = against_full_scan(app, searches, most, vectors)
    if share < 1:
        assert_recall_at_least(comparisons, share, f"golden questions asked for {most} memories")
    else:
        assert_same_recall(comparisons, f"golden questions asked for {most} memories")
    assert method is None or used >= searched, (
        f"the {index_kind.name} index was scanned {used} times for the {searched} golden questions with words to "
        "search for: not every search went through it")


@when("one memory's vector is removed from the app's store by hand", target_fixture="removed")
def remove_one_vector(world: World, history: HeldHistory) -> RemovedVector:
    """Removes the vector of one memory of the history, drawn by the scenario's seed, from the app's store."""
    replayed = history.history
    embeddable = [i for i, ok in enumerate(replayed.embeddable) if ok]
    victim = replayed.ids[embeddable[world.fake.random_int(0, len(embeddable) - 1)]]
    world.app.part(StoreReads).remove_vector(world.app.running, replayed.memory_id(victim))
    return RemovedVector(victim)


@then("the replay names exactly that memory as lost, and only it")
def replay_names_the_removed_one(removed: RemovedVector, replay: ReplayChecks) -> None:
    """The replay names that memory as lost, and no other."""
    named = [line.split()[0] for line in replay.memories.lost]
    assert named == [removed.snapshot_id], (f"the vector of {removed.snapshot_id} was removed by hand; the replay "
                                            f"named {named[:10] or 'nothing'}\n{replay.figures()}")


# -- what a user told before the change, after it ----------------------------------------------------------------
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


@then("each owner of the captured history, asking the assistant the same questions in a new conversation, is answered "
      "exactly as before")
def answered_as_before(world: World, history: HeldHistory, answers_before: AnswersBefore) -> None:
    """Each owner of the history as the app holds it after the change asks what the user it was captured from asked
    before the change (a seeded sample, for a large history): every answer the same, the whole table in the report."""
    asked = answers_before.sample(world.data.seed)
    with signed_in_owners(world.app, history, [a.owner for a in asked]) as owners, \
            allure.step(f"{len(owners.sessions)} owners ask {len(asked)} questions again"):
        comparisons = ask_again(owners, asked, lambda before: before.answer, str.__eq__)
    assert_answered(comparisons, "after the change than before it")


@then("each of them lists the same memories after the change, exactly as written and in the same order")
def listed_as_before(world: World, history: HeldHistory, listed_before: ListedBefore) -> None:
    """Each owner of the history as the app holds it after the change lists their memories: place by place, the
    texts the user it was captured from listed before the change."""
    with signed_in_owners(world.app, history, [owner for owner, _, _ in listed_before.listed]) as owners:
        rows = [row for owner, name, before in listed_before.listed
                for row in listing_rows(owners.who(owner, name), before,
                                        [m.text for m in owners.sessions[owner].memories()])]
    assert_listed_as_before(rows)


@then("each of them is answered as before until the retention of their memories ends, and that the assistant does "
      "not remember once it has")
def answered_until_retention_ends(world: World, history: HeldHistory, talk: Talk, answers_before: AnswersBefore,
                                  answers: AnswerCheck) -> None:
    """The app's clock moved to a minute before the first of their memories reaches the retention its target declares
    ([limits] retention_days): each owner asks the same questions and is answered as before; then to a minute after the
    last one has: each is answered that the assistant does not remember. Each memory kept its expiry through the
    change, to the minute (the edges from when each memory was made, as the suite noted it)."""
    days = world.app.target.limits.retention_days
    if days is None:
        pytest.skip(f"{world.app.target.path.name} declares no retention period ([limits] retention_days)")
    spans = [span for said in talk.by.values() for _, span in said.made]
    assert spans, "no memory of the scenario's users was noted with when it was made"
    still_kept, forgotten = retention_edges(spans, days)
    asked, moved, clock = answers_before.sample(world.data.seed), timedelta(0), world.app.part(MovableClock)
    for moment, target, expected in (("a minute before their retention ends", still_kept, lambda a: a.answer),
                                     ("a minute after it has ended", forgotten, lambda a: a.forgotten)):
        step = target - (datetime.now(UTC) + moved)  # the app's clock: the wall clock and what it was moved by
        clock.advance_clock(world.app.running, step / timedelta(days=1))
        moved += step
        with signed_in_owners(world.app, history, [a.owner for a in asked]) as owners, \
                allure.step(f"{len(owners.sessions)} owners ask {len(asked)} questions {moment}"):
            comparisons = ask_again(owners, asked, expected, answers.matches)
        assert_answered(comparisons, f"{moment} ({target:%Y-%m-%d %H:%M} UTC by the app's clock)")
