"""harness.replay.checks: what counts as lost and what is a property of the data; the probe figures."""

from __future__ import annotations

import pytest

from harness.drivers.base import OwnTextResult
from harness.replay.checks import MemoryCheck, ProbeCheck, ProbeOutcome, _as_written, _field_changes, _verdict
from harness.replay.history import ReplayHistory
from harness.snapshots import Header
from harness.vocabulary.recall import Hit, RecallComparison


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
    assert figures["expecting nothing (they check that nothing is recalled)"] == 1
    assert figures["recall@3"] == round((2 / 3 + 0) / 2, 4)
    assert figures["empty results"] == 1
    assert figures["missing ids"] == 1 + 3 and figures["unexpected ids"] == 1
    assert figures["rank moves"] == 1  # c came second instead of third
    assert [o.comparison for o in check.worst()] == [empty.comparison, lost_one.comparison]
    assert "MISMATCH" in check.worst_as_text() and check.worst_as_csv().startswith("owner,query,recall@3")


def _history() -> ReplayHistory:
    history = ReplayHistory("t", Header("", ["e1"], "e1", 0.25, 5, 1, 0, 1))
    history.ids, history.owners, history.texts = ["m1"], ["ana"], ["My cat is Miso."]
    history.conversations, history.created_at = ["c1"], ["2024-01-02T03:04:05+00:00"]
    history.expires_at = ["2034-01-02T03:04:05Z"]
    return history


ALL = ("conversation", "created_at", "expires_at")


@pytest.mark.parametrize(("stored", "changes"), [
    ({"conversation": "t-c1", "created_at": "2024-01-02T05:04:05+02:00", "expires_at": "2034-01-02T03:04:05+00:00"},
     []),  # the same instants in another zone
    ({"conversation": None, "created_at": "2024-01-02T03:04:05+00:00", "expires_at": "2034-01-02T03:04:05+00:00"},
     [("conversation", "c1", None)]),
    ({"conversation": "t-c2", "created_at": "2026-12-01T10:00:00+00:00", "expires_at": None},
     [("conversation", "c1", "c2"), ("created_at", "2024-01-02T03:04:05+00:00", "2026-12-01T10:00:00+00:00"),
      ("expires_at", "2034-01-02T03:04:05Z", None)]),
])
def test_every_kept_field_is_compared(stored: dict, changes: list) -> None:
    assert _field_changes(_history(), 0, stored, ALL) == changes


def test_a_creation_time_the_legacy_store_wrote_otherwise_is_named_as_written() -> None:
    history = _history()
    history.header = Header("", ["e1"], "e1", 0.25, 5, 1, 0, 1, "Europe/Berlin")
    history.legacy_created_at = ["2024-01-02T04:04:05"]
    assert _as_written(history, 0, "created_at") == (" (the legacy store wrote '2024-01-02T04:04:05', local time in "
                                                     "Europe/Berlin)")
    history.legacy_created_at = ["2024-01-02T08:34:05+05:30"]
    assert _as_written(history, 0, "created_at") == " (the legacy store wrote '2024-01-02T08:34:05+05:30')"
    assert _as_written(history, 0, "expires_at") == ""
    history.legacy_created_at = [None]
    assert _as_written(history, 0, "created_at") == ""


def test_a_field_the_app_does_not_keep_is_not_applicable_never_passed() -> None:
    assert _field_changes(_history(), 0, {}, ()) == []
    summary = MemoryCheck(checked=1, kept_fields=("created_at",)).fields_summary()
    assert summary == ("fields of the memories found: created_at 0 changed; not applicable (the app does not keep "
                       "them): conversation, expires_at")


def test_a_history_imported_under_the_apps_own_ids_is_checked_by_them() -> None:
    history = _history()
    assert history.memory_id("m1") == "t-m1" and history.snapshot_id("t-m1") == "m1"
    history.keep_app_ids({"t-m1": "3f2a-uuid"})
    assert history.memory_id("m1") == "3f2a-uuid" and history.snapshot_id("3f2a-uuid") == "m1"


def test_a_time_is_the_same_within_the_apps_clock_resolution_and_a_wrong_conversion_is_not() -> None:
    from harness.replay.checks import same_time

    told, kept = "2023-03-17T02:05:04.604919+00:00", "2023-03-17T02:05:04+00:00"
    assert same_time(told, kept, 1.0) and not same_time(told, kept)  # whole seconds kept; exact where declared 0
    assert not same_time("2023-03-17T02:05:04+01:00", "2023-03-17T02:05:04+00:00", 1.0)  # an hour: a changed time
    # a time whose zone the app dropped is a changed time, reported as one, not a crash of the comparison
    assert not same_time("2023-03-17T02:05:04+00:00", "2023-03-17T02:05:04", 1.0)
