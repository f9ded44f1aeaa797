"""harness.replay.answers: the sample of questions a large history is asked, and the expected-vs-actual tables a
failure shows."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

import pytest

from harness.replay.answers import (
    AnswerComparison,
    Answered,
    AnswersBefore,
    assert_answered,
    assert_listed_as_before,
    listing_rows,
    retention_edges,
)
from harness.suite import report


@pytest.fixture(autouse=True)
def _no_report(monkeypatch: pytest.MonkeyPatch) -> None:
    """The tables are attached to the Allure report of a scenario; here there is none."""
    monkeypatch.setattr(report, "attach_table", lambda name, csv_text: None)


def _asked(count: int) -> AnswersBefore:
    return AnswersBefore(tuple(Answered(f"u{n % 3}", f"User{n % 3}", f"What is my code {n}?", f"Your code {n} is {n}.",
                                        f"I don't remember your code {n}.") for n in range(count)))


def test_a_small_history_is_asked_every_question_and_a_large_one_a_seeded_sample_in_the_order_asked() -> None:
    small, large = _asked(15), _asked(200)
    assert small.sample(seed=7) == small.answered
    drawn = large.sample(seed=7, most=60)
    assert len(drawn) == 60 and len(set(drawn)) == 60
    assert [large.answered.index(a) for a in drawn] == sorted(large.answered.index(a) for a in drawn)
    assert drawn == large.sample(seed=7, most=60) and drawn != large.sample(seed=8, most=60)


def test_a_different_answer_fails_naming_the_owner_the_question_and_both_answers() -> None:
    same = AnswerComparison("Ana (t-u1, a@x)", "What is my will?", "Your will is with Brandt.",
                            "Your will is with Brandt.", True)
    other = AnswerComparison("Ben (t-u2, b@x)", "What is my locker code?", "Your locker code is 5150.",
                             "I don't remember your locker code.", False)
    with pytest.raises(AssertionError) as failed:
        assert_answered([same, other], "after the change than before it")
    message = str(failed.value)
    assert message.startswith("1 of 2 owners were answered otherwise after the change than before it (1 of 2 ")
    assert all(part in message for part in ("Ben (t-u2, b@x)", "'What is my locker code?'",
                                            "'Your locker code is 5150.'", "\"I don't remember your locker code.\""))
    assert "Ana" not in message
    assert_answered([same], "after the change than before it")


def test_a_list_differs_where_a_text_changed_or_a_memory_is_missing_or_moved() -> None:
    assert [r[4] for r in listing_rows("Ana", ["a", "b "], ["a", "b "])] == ["ok", "ok"]
    assert [r[4] for r in listing_rows("Ana", ["a", "b "], ["a", "b"])] == ["ok", "DIFFERS"]
    assert [r[4] for r in listing_rows("Ana", ["a", "b"], ["b", "a"])] == ["DIFFERS", "DIFFERS"]
    rows = listing_rows("Ana", ["a", "b"], ["a"])
    assert rows[1] == ("Ana", "2", "'b'", "-", "DIFFERS")
    with pytest.raises(AssertionError, match=r"1 of 1 owners list other memories, or in another order, after the "
                                             r"change than before it \(1 of 2 places\)"):
        assert_listed_as_before(rows)


def test_the_retention_edges_are_a_margin_before_the_first_memory_expires_and_after_the_last() -> None:
    now = time.monotonic()
    kept, forgotten = retention_edges([(now - 10.0, now - 9.0), (now - 4.0, now - 2.0)], 365)
    wall_now = datetime.now(UTC)
    assert abs(kept - (wall_now - timedelta(seconds=10) + timedelta(days=365, minutes=-1))) < timedelta(seconds=1)
    assert abs(forgotten - (wall_now - timedelta(seconds=2) + timedelta(days=365, minutes=1))) < timedelta(seconds=1)
