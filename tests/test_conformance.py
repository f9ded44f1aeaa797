"""The conformance table: a target's JUnit read into cells, rows in the feature files' order, the page's twins."""

from __future__ import annotations

from pathlib import Path

from tools.conformance import Cell, TargetRun, junit_places, markdown, read_junit, rows_of

JUNIT = """<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" timestamp="2026-12-04T10:00:00">
<testcase classname="features.in_session_memory.feature" name="test_a_correction_replaces_the_old_fact" />
<testcase classname="features.account_life_cycle.feature"
  name="test_a_deleted_account_leaves_nothing_behind_for_a_new_account_with_the_same_address">
  <skipped type="pytest.skip" message="Skipped: needs a web page&#10;and more" /></testcase>
<testcase classname="features.cross_session_persistence.feature"
  name="test_a_signin_lasts_at_least_a_working_day_and_is_kept_out_of_reach_of_the_page">
  <skipped type="pytest.xfail" message="the token is in local storage" /></testcase>
<testcase classname="features.in_session_memory.feature" name="test_facts_told_in_quick_succession_are_all_remembered">
  <failure message="AssertionError: Ana expected 'x'&#10;second line">trace</failure></testcase>
<testcase classname="tests.test_x" name="test_not_a_scenario" />
</testsuite></testsuites>"""


def test_a_run_is_read_as_one_cell_per_scenario_with_its_one_line(tmp_path: Path) -> None:
    path = tmp_path / "junit.xml"
    path.write_text(JUNIT, encoding="utf-8")
    started, cells = read_junit(path)
    assert started == "2026-12-04T10:00:00"
    assert cells == {
        "features/in_session_memory.feature::test_a_correction_replaces_the_old_fact": Cell("passed"),
        "features/account_life_cycle.feature::test_a_deleted_account_leaves_nothing_behind_for_a_new_account_with_the"
        "_same_address": Cell("skipped", "needs a web page"),
        "features/cross_session_persistence.feature::test_a_signin_lasts_at_least_a_working_day_and_is_kept_out_of_"
        "reach_of_the_page": Cell("known defect", "the token is in local storage"),
        "features/in_session_memory.feature::test_facts_told_in_quick_succession_are_all_remembered":
            Cell("failed", "AssertionError: Ana expected 'x'"),
    }


def test_rows_follow_the_feature_files_and_a_target_without_a_test_shows_it_not_run(tmp_path: Path) -> None:
    path = tmp_path / "junit.xml"
    path.write_text(JUNIT, encoding="utf-8")
    _, cells = read_junit(path)
    one = TargetRun("one", app="One 1.0", run_at="today", results=cells)
    other = TargetRun("other", results={"features/in_session_memory.feature::test_a_correction_replaces_the_old_fact":
                                        Cell("passed")})
    rows = rows_of([one, other])
    assert [r.feature for r in rows] == ["account_life_cycle.feature", "cross_session_persistence.feature",
                                         "in_session_memory.feature", "in_session_memory.feature"]
    assert rows[2].title == "A correction replaces the old fact"
    table = markdown([one, other], rows, "now")
    assert "| account_life_cycle.feature: A deleted account leaves nothing behind for a new account with the same " \
           "address | skipped: needs a web page | not run |" in table
    assert "| one | One 1.0 | today | 1 | 1 | 1 | 1 | not run |" in table


def test_a_variant_of_an_app_is_looked_for_beside_its_app() -> None:
    places = [str(p).split("reports/", 1)[1] for p in junit_places("open-webui-pgvector", default=False)]
    assert places == ["open-webui-pgvector/junit.xml", "open-webui/junit-pgvector.xml"]
    assert [str(p).split("reports/", 1)[1] for p in junit_places("memchat", default=True)] == [
        "memchat/junit.xml", "junit.xml"]


def test_a_known_defect_carries_what_was_observed_and_one_that_failed_otherwise_both_lines(tmp_path: Path) -> None:
    path = tmp_path / "junit.xml"
    path.write_text("""<testsuites><testsuite name="pytest">
<testcase classname="features.in_session_memory.feature" name="test_a_correction_replaces_the_old_fact">
  <skipped type="pytest.xfail" message="known defect of the app x: a cut | observed: 'Then y' (f:3): cut" /></testcase>
<testcase classname="features.in_session_memory.feature" name="test_facts_told_in_quick_succession_are_all_remembered">
  <failure message="declared: at the step 'Then y', with a message matching /cut/&#10;observed: 'When z' (f:2): \
blank&#10;&#10;frames">trace</failure></testcase>
</testsuite></testsuites>""", encoding="utf-8")
    _, cells = read_junit(path)
    assert list(cells.values()) == [
        Cell("known defect", "known defect of the app x: a cut", "'Then y' (f:3): cut"),
        Cell("failed", "declared: at the step 'Then y', with a message matching /cut/", "'When z' (f:2): blank")]
