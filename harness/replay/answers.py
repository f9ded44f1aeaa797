"""What the assistant answers a history's owners, before a change and after it: each user who told the app their
facts asks about each of them before the change, and the owner of the history captured from them asks the same
questions after it; each answer must be the one given before, owner by owner and question by question.

A history of many owners is asked a seeded sample of its questions (at most ASKED_AT_MOST), so that a replay run on
every merge request stays quick.
"""

from __future__ import annotations

import csv
import io
import random
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from harness.app.app_handle import AppHandle
from harness.drivers.base import UserSession
from harness.replay.run import HeldHistory
from harness.suite import report

ASKED_AT_MOST = 60  # questions asked of a history's owners after a change: a seeded sample past it


@dataclass(frozen=True)
class Answered:
    """One question an owner asked the assistant, and what it answered."""

    owner: str  # the owner's id in the captured history: the app's id of the user who told the facts
    name: str  # who that user is in the scenario (Ana)
    question: str
    answer: str
    forgotten: str  # what the assistant answers it once the fact is forgotten


@dataclass(frozen=True)
class AnswersBefore:
    """What each user was answered before the change, in the order they asked."""

    answered: tuple[Answered, ...]

    def sample(self, seed: int, most: int = ASKED_AT_MOST) -> tuple[Answered, ...]:
        """Every answer, or a seeded sample of `most` of them (in the order they were asked)."""
        if len(self.answered) <= most:
            return self.answered
        chosen = sorted(random.Random(seed).sample(range(len(self.answered)), most))
        return tuple(self.answered[n] for n in chosen)


def ask_in_a_new_conversation(session: UserSession, questions: Sequence[str]) -> list[str]:
    """Each question in turn, in one new conversation of the user's; the assistant's answers, in order."""
    conversation = session.start_conversation()
    return [session.send(conversation, question).text for question in questions]


@dataclass(frozen=True)
class AnswerComparison:
    who: str  # the owner as the failure names them: their name and their id in the history the app holds now
    question: str
    expected: str
    actual: str
    same: bool  # as the scenario judges answers (exactly the one before; or, for a forgotten fact, its words)

    HEADER = ("owner", "question", "expected", "answered", "verdict")

    def row(self) -> tuple[str, str, str, str, str]:
        return (self.who, self.question, self.expected, self.actual, "ok" if self.same else "DIFFERS")


@dataclass(frozen=True)
class Owners:
    """Owners of the history as the app holds it after the change, each signed in with their account of the replay:
    each one's session, and how a table names them (their name in the scenario, their id in the app, their address)."""

    sessions: Mapping[str, UserSession]
    labels: Mapping[str, str]

    def who(self, owner: str, name: str) -> str:
        return f"{name} ({self.labels[owner]})"


@contextmanager
def signed_in_owners(app: AppHandle, held: HeldHistory, owners: Sequence[str]) -> Iterator[Owners]:
    """Each owner signed in (their sessions closed after); one line naming those without an account of the replay
    (an owner no golden question asks for cannot sign in)."""
    owners = list(dict.fromkeys(owners))
    missing = [o for o in owners if o not in held.accounts]
    assert not missing, f"the owners {missing} of the history have no account to sign in with after the change"
    sessions: dict[str, UserSession] = {}
    try:
        for owner in owners:
            sessions[owner] = app.session(held.accounts[owner])
        yield Owners(sessions, {o: f"{held.history.user_id(o)}, {held.accounts[o].email}" for o in owners})
    finally:
        for session in sessions.values():
            session.close()


def ask_again(owners: Owners, asked: Sequence[Answered], expected: Callable[[Answered], str],
              same: Callable[[str, str], bool]) -> list[AnswerComparison]:
    """Each owner asks their questions again, in one new conversation of their own; each answer compared with what
    `expected` says it must be, as `same` judges."""
    by_owner: dict[str, list[Answered]] = {}
    for answered in asked:
        by_owner.setdefault(answered.owner, []).append(answered)
    comparisons = []
    for owner, mine in by_owner.items():
        who = owners.who(owner, mine[0].name)
        replies = ask_in_a_new_conversation(owners.sessions[owner], [a.question for a in mine])
        comparisons += [AnswerComparison(who, a.question, expected(a), reply, same(reply, expected(a)))
                        for a, reply in zip(mine, replies, strict=True)]
    return comparisons


def retention_edges(spans: Sequence[tuple[float, float]], days: float, margin: timedelta = timedelta(minutes=1),
                    ) -> tuple[datetime, datetime]:
    """When every memory made within `spans` (of the suite's monotonic clock) is still kept: `margin` before the
    first reaches `days` of retention; and when every one is forgotten: `margin` after the last has (wall-clock UTC
    times, which an app's clock follows until it is moved)."""
    wall = time.time() - time.monotonic()
    retention = timedelta(days=days)
    first, last = min(s for s, _ in spans) + wall, max(e for _, e in spans) + wall
    return (datetime.fromtimestamp(first, UTC) + retention - margin,
            datetime.fromtimestamp(last, UTC) + retention + margin)


def as_csv(comparisons: Sequence[AnswerComparison]) -> str:
    """The whole table, for the report (Allure renders a CSV attachment as a table)."""
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(AnswerComparison.HEADER)
    writer.writerows(c.row() for c in comparisons)
    return buf.getvalue()


def as_text(comparisons: Sequence[AnswerComparison], limit: int = 12) -> str:
    """The answers that differ as aligned text (the first `limit`), for the assertion message."""
    rows = [AnswerComparison.HEADER, *(c.row() for c in comparisons if not c.same)][:limit + 1]
    shown = [[repr(cell) if n in (1, 2, 3) and r is not rows[0] else cell for n, cell in enumerate(r)] for r in rows]
    widths = [max(len(r[i]) for r in shown) for i in range(len(shown[0]))]
    return "\n".join("  " + "  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip()
                     for r in shown)


def assert_answered(comparisons: Sequence[AnswerComparison], what: str) -> None:
    """Fails unless every answer is the one expected, with the expected-vs-actual table attached whole and the
    answers that differ in the message; `what`: what the owners were answered otherwise than expected ("after the
    change than before it")."""
    report.attach_table(f"answers: expected vs answered {what}", as_csv(comparisons))
    differ = [c for c in comparisons if not c.same]
    owners = {c.who for c in differ}
    assert not differ, (f"{len(owners)} of {len({c.who for c in comparisons})} owners were answered otherwise {what} "
                        f"({len(differ)} of {len(comparisons)} questions):\n" + as_text(comparisons))


@dataclass(frozen=True)
class ListedBefore:
    """Each user's memories as they listed them before the change: (owner, name, texts oldest first), in the order
    the users listed them."""

    listed: tuple[tuple[str, str, tuple[str, ...]], ...]


def listing_rows(who: str, before: Sequence[str], after: Sequence[str]) -> list[tuple[str, str, str, str, str]]:
    """The owner's list before and after, place by place: (owner, place, listed before, listed after, verdict)."""
    return [(who, str(n + 1), repr(before[n]) if n < len(before) else "-", repr(after[n]) if n < len(after) else "-",
             "ok" if n < len(before) and n < len(after) and before[n] == after[n] else "DIFFERS")
            for n in range(max(len(before), len(after)))]


LISTING_HEADER = ("owner", "place", "listed before the change", "listed after it", "verdict")


def assert_listed_as_before(rows: Sequence[tuple[str, str, str, str, str]]) -> None:
    """Fails unless every place of every owner's list holds what it held before, with the whole table attached and
    the places that differ in the message."""
    buf = io.StringIO()
    csv.writer(buf).writerows([LISTING_HEADER, *rows])
    report.attach_table("memories listed: before vs after the change", buf.getvalue())
    differ = [r for r in rows if r[4] != "ok"]
    shown = [LISTING_HEADER, *differ[:12]]
    widths = [max(len(r[i]) for r in shown) for i in range(len(LISTING_HEADER))]
    assert not differ, (f"{len({r[0] for r in differ})} of {len({r[0] for r in rows})} owners list other memories, "
                        f"or in another order, after the change than before it ({len(differ)} of {len(rows)} places):\n"
                        + "\n".join("  " + "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
                                    for r in shown))
