"""Pairs of actions whose order matters, derived from what the moves declare: (a, b) where a part of the model's
state that a writes is one that b acts on or that the reads after b compare (delete a memory, then ask; edit a
memory, then start a conversation; turn memory off, then tell; clear all memories, then restart the app).

A pair is covered when b, acted out for a user (or on her data), found a's write the latest of a part it observes,
and what b observes was compared: its own answer or refusal for the parts it acts on, the read after it for the
parts that read compares. A session tracks the pairs its plan draws (the generator's test holds the default seeds
to them) and the pairs its run covered (its JSON's `pairs`)."""

from __future__ import annotations

from collections.abc import Iterable
from itertools import product
from typing import TYPE_CHECKING, Any

from harness.sessions.actions import Action
from harness.sessions.moves import KINDS, RULES, rule_of

if TYPE_CHECKING:
    from harness.sessions.rules import Rule

Pair = tuple[str, str]


def name(pair: Pair) -> str:
    """A pair as reports print it."""
    return f"{pair[0]} -> {pair[1]}"


def derived(rules: Iterable[Rule[Any]] = RULES) -> list[Pair]:
    """Every ordered pair of action kinds (a, b) where what a writes is what b acts on or the reads after b compare,
    in the order the kinds are drawn in."""
    order = [kind.name for kind in KINDS]
    by_kind = {kind.name: rule for rule in rules for kind in rule.kinds}
    kinds = [k for k in order if k in by_kind] + sorted(set(by_kind) - set(order))
    return [(a, b) for a, b in product(kinds, kinds)
            if by_kind[a].writes & (by_kind[b].acts_on | by_kind[b].reads)]


class PairTracker:
    """Which kind of action last wrote each part of each user's state, and the derived pairs covered so far, each
    with the number of the action b that first covered it."""

    def __init__(self, users: Iterable[str], pairs: Iterable[Pair] | None = None) -> None:
        self.users = list(users)
        self.pairs = set(derived() if pairs is None else pairs)
        self.last: dict[tuple[str, str], str] = {}  # (user, part) -> the kind that last wrote it
        self.covered: dict[Pair, int] = {}

    def acted(self, number: int, action: Action, read_after: bool) -> None:
        """Action b acted out and compared: what it acts on (its own answer, refusal or page), and the parts the
        read after it compares where that read was made (`read_after`); then what it writes, as the latest."""
        rule = rule_of(action)
        observed = rule.acts_on | (rule.reads if read_after else frozenset())
        for user in self._of(action):
            for part in observed:
                writer = self.last.get((user, part))
                if writer and (writer, action.kind) in self.pairs:
                    self.covered.setdefault((writer, action.kind), number)
        for user in self._of(action):
            for part in rule.writes:
                self.last[(user, part)] = action.kind

    def _of(self, action: Action) -> list[str]:
        """The users whose state the action acts on: its user (and a victim's, for a hostile move), or everyone's."""
        if not action.user:
            return self.users
        return [action.user, *([victim] if (victim := getattr(action, "victim", "")) else [])]

    def report(self) -> dict[str, list[str]]:
        """The pairs covered, by the action that first covered each, then those not covered."""
        covered = sorted(self.covered, key=self.covered.__getitem__)
        return {"covered": [name(p) for p in covered],
                "uncovered": [name(p) for p in derived() if p in self.pairs and p not in self.covered]}

    def text(self) -> str:
        """The report as Allure shows it: the covered pairs by the action that first covered each."""
        covered = [f"{n:>4}. {name(p)}" for p, n in sorted(self.covered.items(), key=lambda c: c[1])]
        left = self.report()["uncovered"]
        return "\n".join([f"Pairs of actions covered ({len(self.covered)} of {len(self.pairs)} derived), by the "
                          "action b that first covered each:", *covered,
                          *([f"Not covered ({len(left)}):", *(f"      {p}" for p in left)] if left else [])])


def read_after(action: Action, number: int, read_after_turns: Iterable[int], full_check_every: int) -> bool:
    """Whether the runner reads the user's state after this action: after every move but a turn, and after a turn
    where the plan says (its read_after) or a full check is due."""
    return (rule_of(action).checked_after or number in set(read_after_turns)
            or number % full_check_every == 0)


def drawn(actions: list[Action], users: Iterable[str], read_after_turns: Iterable[int],
          full_check_every: int) -> PairTracker:
    """The pairs a plan covers when every action is acted out and matches the model."""
    tracker, after = PairTracker(users), set(read_after_turns)
    for number, action in enumerate(actions, 1):
        tracker.acted(number, action, read_after(action, number, after, full_check_every))
    return tracker


