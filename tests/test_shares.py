"""harness/suite/shares.py: shares of the scenarios between an app's configurations, each scenario in exactly one
share but the generated sessions, which every share acts out."""

from __future__ import annotations

import pytest

from harness.suite.shares import share_of, shares
from tools.suite_runs import collect


def test_every_scenario_is_dealt_once_the_longest_first_to_the_least_loaded_share() -> None:
    durations = {"a": 9.0, "b": 5.0, "c": 4.0, "d": 1.0}
    assert shares(["d", "c", "b", "a"], durations, 2) == [["a", "d"], ["b", "c"]]  # d: a tie, the first


def test_a_scenario_with_no_recorded_duration_counts_as_the_mean() -> None:
    durations = {"a": 6.0, "b": 2.0}  # the mean, 4.0, for "new"
    assert shares(["a", "b", "new"], durations, 2) == [["a"], ["new", "b"]]


@pytest.mark.parametrize("text", ["2", "0/2", "3/2", "a/b", "1/"])
def test_a_share_not_i_of_n_is_a_usage_error_that_shows_one(text: str) -> None:
    with pytest.raises(pytest.UsageError, match=r"give I/N with 1 <= I <= N, for example --share 2/2"):
        share_of(text)


def test_the_shares_of_the_suite_hold_each_scenario_once_and_the_generated_session_in_both() -> None:
    whole = collect(["features", "-m", "not more_seeds"])
    first, second = (collect(["features", "-m", "not more_seeds", "--share", f"{i}/2"]) for i in (1, 2))
    both = set(first) & set(second)
    assert both and all(n.startswith("features/generated_sessions.feature::") for n in both), both
    assert sorted(set(first) | set(second)) == sorted(whole)
    assert len(first) + len(second) == len(whole) + len(both)
    per_feature = [{n.split("::")[0] for n in share} for share in (first, second)]
    assert per_feature[0] == per_feature[1] == {n.split("::")[0] for n in whole}, "a feature left out of a share"
