"""harness.vocabulary.recall: the brute-force reference ranking and the expected-versus-actual comparison."""

from __future__ import annotations

import csv
import io

import numpy as np
import pytest

from harness.vocabulary.recall import SCORE_TOLERANCE, Hit, RecallComparison, as_csv, as_text, brute_force


def _unit(*xs: float) -> np.ndarray:
    v = np.asarray(xs, dtype=np.float64)
    return v / np.linalg.norm(v)


QUERY = _unit(1.0, 0.0)
VECTORS = {  # inserted out of id order on purpose
    "d": _unit(0.0, 1.0),    # 0.0
    "c": _unit(0.6, -0.8),   # 0.6, ties with b
    "a": _unit(1.0, 0.0),    # 1.0
    "b": _unit(0.6, 0.8),    # 0.6
    "e": _unit(-1.0, 0.0),   # -1.0
}


# ------------------------------------------------------------------------------------------ brute_force


def test_brute_force_orders_by_score_then_id() -> None:
    hits = brute_force(VECTORS, QUERY, k=10, threshold=-1.0)
    assert [h.id for h in hits] == ["a", "b", "c", "d", "e"]
    assert [h.score for h in hits] == pytest.approx([1.0, 0.6, 0.6, 0.0, -1.0])
    assert all(isinstance(h.score, float) for h in hits)


def test_brute_force_drops_rows_below_threshold_and_keeps_rows_at_it() -> None:
    assert [h.id for h in brute_force(VECTORS, QUERY, k=10, threshold=0.5)] == ["a", "b", "c"]
    at = brute_force(VECTORS, QUERY, k=10, threshold=float(VECTORS["b"] @ QUERY))
    assert [h.id for h in at] == ["a", "b", "c"]
    assert brute_force(VECTORS, QUERY, k=10, threshold=1.01) == []


def test_brute_force_cuts_at_k_after_the_tie_break() -> None:
    assert [h.id for h in brute_force(VECTORS, QUERY, k=2, threshold=0.0)] == ["a", "b"]
    assert [h.id for h in brute_force(VECTORS, QUERY, k=1, threshold=0.0)] == ["a"]
    assert brute_force(VECTORS, QUERY, k=0, threshold=0.0) == []
    assert brute_force({}, QUERY, k=5, threshold=0.0) == []


# ------------------------------------------------------------------------------------------ RecallComparison

EXPECTED = [Hit("m1", 0.90), Hit("m2", 0.80), Hit("m3", 0.80), Hit("m4", 0.50)]


def _cmp(actual: list[Hit], expected: list[Hit] = EXPECTED, **kw: object) -> RecallComparison:
    return RecallComparison("what is my cat called?", "ana", list(expected), list(actual), **kw)


def test_identical_rankings_match() -> None:
    c = _cmp(list(EXPECTED))
    assert c.matches
    assert [r[-1] for r in c.rows()] == ["ok"] * 4


def test_float32_noise_within_tolerance_matches() -> None:
    noisy = [Hit(h.id, h.score + SCORE_TOLERANCE / 2) for h in EXPECTED]
    assert _cmp(noisy).matches


def test_score_off_by_more_than_tolerance_does_not_match() -> None:
    actual = [EXPECTED[0], Hit("m2", 0.80 + 2 * SCORE_TOLERANCE), EXPECTED[2], EXPECTED[3]]
    c = _cmp(actual)
    assert not c.matches
    assert [r[-1] for r in c.rows()] == ["ok", "MISMATCH", "ok", "ok"]


def test_swap_of_rows_tied_within_tolerance_matches() -> None:
    actual = [EXPECTED[0], Hit("m3", 0.8004), Hit("m2", 0.7999), EXPECTED[3]]
    assert _cmp(actual).matches


def test_swap_of_rows_not_tied_does_not_match() -> None:
    swapped = [EXPECTED[0], EXPECTED[3], EXPECTED[2], EXPECTED[1]]  # m2 0.80 <-> m4 0.50
    assert not _cmp(swapped).matches
    # Same scores in place but ids exchanged between untied rows: the ids must not slip through.
    ids_swapped = [Hit("m1", 0.90), Hit("m4", 0.80), Hit("m3", 0.80), Hit("m2", 0.50)]
    c = _cmp(ids_swapped)
    assert not c.matches
    assert [r[-1] for r in c.rows()] == ["ok", "MISMATCH", "ok", "MISMATCH"]


def test_missing_row_does_not_match() -> None:
    c = _cmp(EXPECTED[:3])
    assert not c.matches
    assert c.rows()[3] == ["4", "m4", "0.5000", "-", "-", "MISMATCH"]


def test_extra_row_does_not_match() -> None:
    c = _cmp([*EXPECTED, Hit("m5", 0.40)])
    assert not c.matches
    assert c.rows()[4] == ["5", "-", "-", "m5", "0.4000", "MISMATCH"]
    assert [r[-1] for r in c.rows()[:4]] == ["ok"] * 4


def test_empty_against_empty_matches() -> None:
    assert _cmp([], expected=[]).matches


def test_tie_with_a_row_beyond_top_k_needs_the_candidates() -> None:
    expected = [Hit("m1", 0.90), Hit("m2", 0.80)]                      # top-2 of the reference ranking
    candidates = [*expected, Hit("m3", 0.8003), Hit("m4", 0.50)]       # m3 ties with m2 but fell beyond k
    actual = [Hit("m1", 0.90), Hit("m3", 0.8003)]                      # the store broke the tie the other way
    assert _cmp(actual, expected, candidates=candidates).matches
    assert not _cmp(actual, expected).matches
    # The candidates do not excuse a row that ties with nothing.
    assert not _cmp([Hit("m1", 0.90), Hit("m4", 0.80)], expected, candidates=candidates).matches


def test_a_row_returned_twice_within_a_tie_does_not_match() -> None:
    expected = [Hit("m1", 0.80), Hit("m2", 0.80)]
    assert not _cmp([Hit("m2", 0.80), Hit("m2", 0.80)], expected).matches


# ------------------------------------------------------------------------------------------ reports


def test_as_csv_has_one_header_and_a_row_per_rank_and_query() -> None:
    ok = _cmp(list(EXPECTED))
    bad = RecallComparison("where do I work?", "ben", [Hit("m9", 0.7)], [])
    rows = list(csv.reader(io.StringIO(as_csv([ok, bad]))))
    assert rows[0] == ["owner", "query", "rank", "expected id", "expected score", "actual id", "actual score",
                       "verdict"]
    assert len(rows) == 1 + 4 + 1
    assert rows[1] == ["ana", "what is my cat called?", "1", "m1", "0.9000", "m1", "0.9000", "ok"]
    assert rows[-1] == ["ben", "where do I work?", "1", "m9", "0.7000", "-", "-", "MISMATCH"]


def test_as_csv_of_nothing_is_the_header() -> None:
    assert list(csv.reader(io.StringIO(as_csv([])))) == [["owner", "query", *RecallComparison.HEADER]]


def test_as_text_shows_only_failing_comparisons() -> None:
    ok = RecallComparison("fine query", "ana", [Hit("m1", 0.9)], [Hit("m1", 0.9)])
    bad = RecallComparison("broken query", "ben", [Hit("m7", 0.9)], [Hit("m8", 0.9)])
    text = as_text([ok, bad])
    assert "fine query" not in text
    lines = text.splitlines()
    assert lines[0] == "ben asked 'broken query':"
    assert lines[1].split() == ["rank", "expected", "id", "expected", "score", "actual", "id", "actual", "score",
                                "verdict"]
    assert lines[2].split() == ["1", "m7", "0.9000", "m8", "0.9000", "MISMATCH"]
    assert len(lines) == 3
    # Columns are aligned: each cell starts where its header does.
    assert lines[2].index("m8") == lines[1].index("actual id")
    assert as_text([ok]) == ""


def test_as_text_limits_the_number_of_failing_comparisons() -> None:
    bad = [RecallComparison(f"q{i}", "ana", [Hit("m1", 0.9)], []) for i in range(5)]
    text = as_text(bad, limit=2)
    assert "'q0'" in text and "'q1'" in text and "'q2'" not in text


# ------------------------------------------------------------------------------------------ an approximate index

SCAN = [Hit("a", 0.9), Hit("b", 0.8), Hit("c", 0.7), Hit("d", 0.6)]


def _approx(actual: list[Hit], expected: list[Hit] = SCAN, candidates: list[Hit] | None = None) -> RecallComparison:
    return RecallComparison("q", "ana", expected, actual, candidates=candidates)


def test_a_search_that_leaves_the_first_out_is_within_the_ranking_and_recalls_the_rest() -> None:
    c = _approx(SCAN[1:])
    assert c.within_ranking and c.recalled == 3 and not c.matches


def test_a_row_the_scan_does_not_rank_is_outside_it() -> None:
    assert not _approx([Hit("a", 0.9), Hit("zz", 0.85)]).within_ranking  # another owner's memory


def test_a_row_with_another_score_or_out_of_order_is_outside_the_ranking() -> None:
    assert not _approx([Hit("a", 0.7)]).within_ranking
    assert not _approx([Hit("b", 0.8), Hit("a", 0.9)]).within_ranking


def test_a_row_returned_twice_is_outside_the_ranking() -> None:
    assert not _approx([Hit("a", 0.9), Hit("a", 0.9)]).within_ranking


def test_the_row_past_the_cut_may_stand_for_one_left_out() -> None:
    # the scan ranks c and e tied at 0.7, c inside the cut of 3; without the candidates e is outside
    c = _approx([SCAN[0], Hit("e", 0.7)], expected=SCAN[:3], candidates=[*SCAN[:3], Hit("e", 0.7)])
    assert c.within_ranking and c.recalled == 2
    assert not _approx([SCAN[0], Hit("e", 0.7)], expected=SCAN[:3]).within_ranking


def test_recall_at_least_passes_at_the_promised_share_and_fails_below_it(monkeypatch: pytest.MonkeyPatch) -> None:
    from harness.vocabulary import recall
    from harness.vocabulary.recall import assert_recall_at_least
    attached: list[str] = []
    monkeypatch.setattr(recall.report, "attach_text", lambda name, text: attached.append(text))
    monkeypatch.setattr(recall.report, "attach_table", lambda name, text: attached.append(name))
    whole, short = _approx(SCAN), _approx(SCAN[1:])
    assert_recall_at_least([whole, short], 7 / 8, "golden questions")
    with pytest.raises(AssertionError, match=r"recalled 7 of the 8 memories a full scan ranks \(87\.5%\), less than"):
        assert_recall_at_least([whole, short], 0.9, "golden questions")
    with pytest.raises(AssertionError, match="returned memories a full scan of the owner's memories does not rank"):
        assert_recall_at_least([whole, _approx([Hit("zz", 0.95)])], 0.1, "golden questions")
    assert attached[0] == "golden questions: 7 of the 8 memories a full scan ranks recalled, at least 88% promised; " \
        "1 of 2 searches differ from the scan"
