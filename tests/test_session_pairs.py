"""Pairs of actions whose order matters (harness/sessions/pairs.py): derived from the moves' declarations, covered
only when b follows a for the same user (or on her data) and what b observes was compared, and the default run held
to the pairs it was recorded to cover."""

from __future__ import annotations

import functools

from harness.app.target import load_target
from harness.sessions import pair_coverage
from harness.sessions.generator import FULL_CHECK_EVERY, generate
from harness.sessions.moves import RULES
from harness.sessions.moves.ask import Ask
from harness.sessions.moves.delete_memory import DeleteMemory
from harness.sessions.moves.memory_off import TurnMemoryOff
from harness.sessions.moves.tamper import TamperWith
from harness.sessions.moves.tell import Tell
from harness.sessions.pairs import PairTracker, derived, drawn, name
from harness.sessions.runner import GeneratedSession, SessionOutcome
from harness.suite.options import ROOT


def _tell(user: str) -> Tell:
    return Tell(user, key="gate code", value="4711", sentence="My gate code is 4711.")


def _ask(user: str) -> Ask:
    return Ask(user, key="gate code", question="What is my gate code?")


def test_a_pair_is_derived_exactly_where_the_first_writes_what_the_second_acts_on_or_reads_after() -> None:
    by_kind = {kind.name: rule for rule in RULES for kind in rule.kinds}
    pairs = set(derived())
    for a, b in ((a, b) for a in by_kind for b in by_kind):
        shared = by_kind[a].writes & (by_kind[b].acts_on | by_kind[b].reads)
        assert ((a, b) in pairs) == bool(shared), (a, b, sorted(shared))
    assert ("tell", "ask") in pairs and ("delete a memory", "ask") in pairs and ("turn memory off", "tell") in pairs
    assert not any(a == "restart the app" for a, _ in pairs)  # it writes nothing of anyone's


def test_a_pair_is_covered_only_for_the_same_user_and_by_the_latest_write() -> None:
    tracker = PairTracker(["Ana", "Ben"])
    tracker.acted(1, _tell("Ana"), read_after=False)
    tracker.acted(2, _ask("Ben"), read_after=False)
    assert ("tell", "ask") not in tracker.covered  # Ben asked, Ana told
    tracker.acted(3, TurnMemoryOff("Ana"), read_after=True)
    tracker.acted(4, _ask("Ana"), read_after=False)
    assert tracker.covered[("turn memory off", "ask")] == 4
    assert tracker.covered[("tell", "ask")] == 4  # (her conversation's turns: the tell's, still the latest)


def test_a_pair_through_the_read_after_b_is_covered_only_where_that_read_was_made() -> None:
    tracker = PairTracker(["Ana"])
    tracker.acted(1, _ask("Ana"), read_after=False)
    tracker.acted(2, DeleteMemory("Ana", text="My gate code is 4711.", key="gate code"), read_after=False)
    assert ("ask", "delete a memory") not in tracker.covered  # the deletion acts on memories, the question wrote none
    tracker.acted(3, _ask("Ana"), read_after=False)
    tracker.acted(4, DeleteMemory("Ana", text="My gate code is 4711.", key="gate code"), read_after=True)
    assert tracker.covered[("ask", "delete a memory")] == 4  # her conversations and turns read after it


def test_a_hostile_move_covers_pairs_on_its_victims_data() -> None:
    tracker = PairTracker(["Ana", "Ben"])
    tracker.acted(1, _tell("Ana"), read_after=False)
    tracker.acted(2, TamperWith("Ben", victim="Ana"), read_after=True)
    assert ("tell", "tamper with another user's data") in tracker.covered
    report = tracker.report()
    assert report["covered"][0] == "tell -> tamper with another user's data"
    assert len(report["covered"]) + len(report["uncovered"]) == len(derived())
    assert tracker.text().startswith(f"Pairs of actions covered (1 of {len(derived())} derived)")


@functools.cache
def _default_run() -> set[tuple[str, str]]:
    return pair_coverage.covered_by(pair_coverage.default_plans(load_target(ROOT / "targets" / "memchat.toml")))


def test_the_default_run_still_draws_every_pair_it_was_recorded_to_cover() -> None:
    lost = pair_coverage.recorded() - _default_run()
    assert not lost, (f"the default run's generated sessions no longer cover {len(lost)} pair(s) of actions they "
                      f"covered: {', '.join(sorted(map(name, lost)))}; draw them again (harness/sessions/generator.py) "
                      "or, where the loss is meant, record the default run again: python -m "
                      "harness.sessions.pair_coverage --write")


def test_the_recorded_pairs_are_derived_ones_and_the_default_run_covers_no_unrecorded_pair() -> None:
    recorded = pair_coverage.recorded()
    assert recorded <= set(derived()), sorted(recorded - set(derived()))
    gained = _default_run() - recorded
    assert not gained, (f"the default run covers {len(gained)} pair(s) not recorded yet: "
                        f"{', '.join(sorted(map(name, gained)))}; record them: python -m "
                        "harness.sessions.pair_coverage --write")


def test_a_sessions_json_gives_the_pairs_its_run_covered_and_those_it_did_not() -> None:
    plan = generate("7", 12, 2)
    tracker = drawn(plan.actions, plan.users, plan.read_after, FULL_CHECK_EVERY)
    session = GeneratedSession(plan, runner=None)  # type: ignore[arg-type]
    pairs = SessionOutcome(session, None, 1.0, [], (), {}, tracker).summary("memchat")["pairs"]
    assert pairs["covered"] == [name(p) for p in sorted(plan.pairs, key=plan.pairs.__getitem__)]
    assert set(pairs["uncovered"]) == {name(p) for p in derived()} - set(pairs["covered"])
