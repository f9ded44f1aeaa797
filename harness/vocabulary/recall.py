"""Expected-versus-actual recall: the reference ranking (brute-force cosine), a readable comparison table, and the
check that fails with that table attached."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from harness.suite import report

SCORE_TOLERANCE = 1e-3  # float32 vectors in the database against float64 here


@dataclass(frozen=True)
class Hit:
    """One memory in a ranking, best first: what a search returned or what it must return."""

    id: str
    score: float
    text: str = ""  # as the app returned it; expectations carry ids and scores only


def brute_force(vectors: dict[str, np.ndarray], query: np.ndarray, k: int, threshold: float) -> list[Hit]:
    """Exact top-k by cosine over every given row (unit vectors), above `threshold`, ties broken by id."""
    scored = [Hit(mid, float(vec @ query)) for mid, vec in vectors.items()]
    scored.sort(key=lambda h: (-h.score, h.id))
    return [h for h in scored if h.score >= threshold][:k]


@dataclass(frozen=True)
class RecallComparison:
    query: str
    owner: str
    expected: list[Hit]
    actual: list[Hit]
    tolerance: float = SCORE_TOLERANCE
    candidates: list[Hit] | None = None  # the full reference ranking, when rows beyond top-k may tie with it

    def _same_at(self, rank: int) -> bool:
        if rank >= len(self.expected) or rank >= len(self.actual):
            return False
        exp, act = self.expected[rank], self.actual[rank]
        if act.id in {h.id for h in self.actual[:rank]}:
            return False  # one memory returned twice must not hide a lost one
        if abs(exp.score - act.score) > self.tolerance:
            return False
        if exp.id == act.id:
            return True
        # Rows tied within the tolerance may come in either order; they must still be the same rows.
        pool = self.candidates if self.candidates is not None else self.expected
        tied = {h.id for h in pool if abs(h.score - exp.score) <= self.tolerance}
        return act.id in tied

    @property
    def matches(self) -> bool:
        return len(self.expected) == len(self.actual) and all(map(self._same_at, range(len(self.expected))))

    def _in_ranking(self, rank: int) -> bool:
        """For an approximate index: the hit at `rank` is one the full scan ranks (the owner's, above the threshold),
        with its score, returned once, and in the scan's order after the hit before it."""
        act = self.actual[rank]
        pool = self.candidates if self.candidates is not None else self.expected
        scanned = next((h for h in pool if h.id == act.id), None)
        if scanned is None or abs(scanned.score - act.score) > self.tolerance:
            return False
        if act.id in {h.id for h in self.actual[:rank]}:
            return False
        return rank == 0 or self.actual[rank - 1].score >= act.score - self.tolerance

    @property
    def recalled(self) -> int:
        """How many of the expected memories the search returned (a row tied with the last expected one counts for
        it: either may come at the cut)."""
        returned = {h.id for h in self.actual}
        expected = {h.id for h in self.expected}
        found = len(returned & expected)
        if self.expected:
            last = self.expected[-1].score
            found += sum(1 for h in self.actual if h.id not in expected and abs(h.score - last) <= self.tolerance)
        return min(found, len(self.expected))

    @property
    def within_ranking(self) -> bool:
        """Every hit returned is one the full scan ranks, with its score and in its order, and no more of them than
        were asked for: what an approximate index may return (it may leave some out)."""
        return len(self.actual) <= len(self.expected) and all(map(self._in_ranking, range(len(self.actual))))

    def rows(self) -> list[list[str]]:
        out = []
        for rank in range(max(len(self.expected), len(self.actual))):
            exp = self.expected[rank] if rank < len(self.expected) else None
            act = self.actual[rank] if rank < len(self.actual) else None
            out.append([str(rank + 1), exp.id if exp else "-", f"{exp.score:.4f}" if exp else "-",
                        act.id if act else "-", f"{act.score:.4f}" if act else "-",
                        "ok" if self._same_at(rank) else "MISMATCH"])
        return out

    HEADER = ["rank", "expected id", "expected score", "actual id", "actual score", "verdict"]


def assert_recall_at_least(comparisons: Sequence[RecallComparison], share: float, what: str) -> None:
    """For an index the app documents as approximate: fails, with the table attached, unless every search returned
    only memories the full scan ranks, with their scores and in its order, and all of them together recalled at
    least `share` of what the scans rank."""
    expected = sum(len(c.expected) for c in comparisons)
    recalled = sum(c.recalled for c in comparisons)
    outside = [c for c in comparisons if not c.within_ranking]
    differing = [c for c in comparisons if not c.matches]
    report.attach_text("recall through an approximate index",
                       f"{what}: {recalled} of the {expected} memories a full scan ranks recalled, at least "
                       f"{share:.0%} promised; {len(differing)} of {len(comparisons)} searches differ from the scan")
    if differing:
        report.attach_table(f"recall: expected vs actual ({len(differing)} of {len(comparisons)} differ)",
                            as_csv(differing))
    assert not outside, (f"{len(outside)} of {len(comparisons)} {what} returned memories a full scan of the owner's "
                         "memories does not rank so (another's, below the threshold, another score or order):\n"
                         + as_text(outside))
    assert recalled >= share * expected, (
        f"{what} recalled {recalled} of the {expected} memories a full scan ranks ({recalled / expected:.1%}), less "
        f"than the {share:.0%} the index promises:\n" + as_text(differing))


def as_csv(comparisons: Sequence[RecallComparison]) -> str:
    """One table for all compared queries; Allure renders CSV attachments as tables."""
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(["owner", "query", *RecallComparison.HEADER])
    for c in comparisons:
        for row in c.rows():
            writer.writerow([c.owner, c.query, *row])
    return buf.getvalue()


def as_text(comparisons: Sequence[RecallComparison], limit: int = 8) -> str:
    """The failing comparisons as aligned text, for the assertion message."""
    lines = []
    for c in [c for c in comparisons if not c.matches][:limit]:
        lines.append(f"{c.owner} asked {c.query!r}:")
        table = [RecallComparison.HEADER, *c.rows()]
        widths = [max(len(r[i]) for r in table) for i in range(len(table[0]))]
        lines += ["  " + "  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)) for r in table]
    return "\n".join(lines)


def assert_same_recall(comparisons: Sequence[RecallComparison], what: str) -> None:
    """Fails, with the expected-vs-actual table attached and the worst of it in the message, unless every
    comparison matches."""
    failing = [c for c in comparisons if not c.matches]
    if failing:
        report.attach_table(f"recall: expected vs actual ({len(failing)} of {len(comparisons)} differ)",
                            as_csv(failing))
    assert not failing, f"{len(failing)} of {len(comparisons)} {what} recalled differently:\n" + as_text(failing)
