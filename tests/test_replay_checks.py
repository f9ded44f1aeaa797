"""harness.replay.checks: what counts as lost and what is a property of the data; the probe figures."""

from __future__ import annotations

import pytest

from harness.drivers.base import OwnTextResult
from harness.recall import Hit, RecallComparison
from harness.replay.checks import ProbeCheck, ProbeOutcome, _verdict


def _result(**change: object) -> OwnTextResult:
    values = {"memory_id": "t-m1", "owner_id": "t-ana", "text": "My cat is Miso.", "has_vector": True,
              "own_score": 1.0, "best_other_score": 0.4, **change}
    return OwnTextResult(**values)  # type: ignore[arg-type]


@pytest.mark.parametrize(("result", "embeddable", "expired", "verdict"), [
    (_result(), True, False, "recalled"),
    (_result(best_other_score=None), True, False, "recalled"),
    (_result(best_other_score=1.0), True, False, "tied with an identical text"),
    (_result(best_other_score=1.0, own_score=0.98, best_other_id="t-m0"), True, False, "outranked"),
    (_result(has_vector=False, own_score=None, best_other_score=None), True, False, "no vector"),
    (_result(has_vector=False, own_score=None, best_other_score=None), False, False, "cannot be embedded"),
    (_result(own_score=None), True, False, "unreachable"),
    (_result(own_score=None), True, True, "expired"),
    (_result(owner_id=None), True, False, "missing"),
    (None, True, False, "missing"),
    (_result(owner_id="t-ana1"), True, False, "owner changed"),
    (_result(text="My cat is Miso"), True, False, "text changed"),
])
def test_each_memory_gets_one_verdict(result: OwnTextResult | None, embeddable: bool, expired: bool,
                                      verdict: str) -> None:
    assert _verdict(result, "t-ana", "My cat is Miso.", embeddable, expired) == verdict


def _outcome(expected: list[Hit], actual: list[Hit], tied: list[Hit] | None = None) -> ProbeOutcome:
    return ProbeOutcome(RecallComparison("q?", "ana", expected, actual, candidates=expected + (tied or [])), 3)


def test_a_tie_beyond_k_in_the_place_of_the_kth_is_as_good() -> None:
    expected = [Hit("a", 0.9), Hit("b", 0.5)]
    outcome = _outcome(expected, [Hit("a", 0.9), Hit("c", 0.5)], tied=[Hit("c", 0.5)])
    assert outcome.comparison.matches
    assert (outcome.recall, outcome.ndcg, sum(outcome.faults().values())) == (1.0, 1.0, 0)


def test_figures_count_what_differs() -> None:
    expected = [Hit("a", 0.9), Hit("b", 0.7), Hit("c", 0.5)]
    lost_one = _outcome(expected, [Hit("a", 0.9), Hit("c", 0.5), Hit("x", 0.4)])
    empty = _outcome(expected, [])
    nothing_expected = _outcome([], [])
    check = ProbeCheck([lost_one, empty, nothing_expected])
    figures = check.figures()
    assert figures["probes"] == 3 and figures["differing"] == 2
    assert figures["recall@3"] == round((2 / 3 + 0) / 2, 4)
    assert figures["empty results"] == 1
    assert figures["missing ids"] == 1 + 3 and figures["unexpected ids"] == 1
    assert figures["rank moves"] == 1  # c came second instead of third
    assert [o.comparison for o in check.worst()] == [empty.comparison, lost_one.comparison]
    assert "MISMATCH" in check.worst_as_text() and check.worst_as_csv().startswith("owner,query,recall@3")
