"""The pure parts of the kill matrix, the flake check and the bench: no pytest children, no browsers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.app.fault_catalogue import CatalogueError, Fault
from harness.suite.scenarios import ScenarioRef
from tools import bench_phases, bench_suite, flake_check, kill_matrix
from tools.suite_runs import aggregate_records, junit_totals, parse_collect_only, read_results, short_id

A = "features/in_session_memory.feature::test_a_fact_told_earlier_in_the_conversation_is_recalled[order number-4417]"
B = "features/cross_session_persistence.feature::test_everything_is_still_there_after_closing_and_reopening_the_browser"
C = "features/multi_user_isolation.feature::test_another_users_conversation_cannot_be_opened_by_its_address"

IN_SESSION = "in_session_memory.feature"
CROSS = "cross_session_persistence.feature"
CATALOGUE = [
    Fault("unload-write-lost", "pending write flushed on beforeunload", "",
          (ScenarioRef(CROSS, "Everything is still there after closing and reopening the browser"),)),
    Fault("history-idor", "conversation served | no owner check", "", ()),
    Fault("write-race", "queue keeps the latest turn", "", ()),
]


# -- which scenarios a fault must fail ---------------------------------------------------------------------------------
def test_an_outline_named_for_a_fault_means_every_example_the_run_selects() -> None:
    outline = Fault("context-dropped", "", "",
                    (ScenarioRef(IN_SESSION, "A fact told earlier in the conversation is recalled"),))
    other = A.replace("[order number-4417]", "[home city-North Jasonia]")
    assert kill_matrix.expected_scenarios(outline, [B, A, C, other]) == [A, other]


def test_a_named_scenario_the_default_run_leaves_out_stops_the_matrix_in_one_line() -> None:
    with pytest.raises(CatalogueError) as info:
        kill_matrix.expected_scenarios(CATALOGUE[0], [A, C])
    assert "unload-write-lost" in str(info.value) and "not in the default run" in str(info.value)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(("expected", "failed", "killed"), [
    ([A, B], [A, B], True),
    ([A, B], [B, A], True),  # order does not matter
    ([A, B], [A], False),  # one expected scenario passed: the fault survives
    ([A], [A, C], True),  # an extra failure does not undo the kill (it is reported apart)
    ([], [], False),  # nothing meant to catch it: not killed
    ([], [A], False),
    ([A], [], False),
])
def test_is_killed(expected: list[str], failed: list[str], killed: bool) -> None:
    assert kill_matrix.is_killed(expected, failed) is killed


def test_fault_entry_orders_failed_like_expected_and_keeps_extras_last() -> None:
    entry = kill_matrix.fault_entry([A, B], [C, B, A])
    assert entry == {"expected": [A, B], "failed": [A, B, C], "killed": True}


def test_select_faults_keeps_catalogue_order_and_rejects_unknown_names() -> None:
    assert [f.name for f in kill_matrix.select_faults(CATALOGUE, None)] == [f.name for f in CATALOGUE]
    assert [f.name for f in kill_matrix.select_faults(CATALOGUE, "write-race, unload-write-lost")] == [
        "unload-write-lost", "write-race"]
    with pytest.raises(ValueError, match="no-such-fault"):
        kill_matrix.select_faults(CATALOGUE, "write-race,no-such-fault")


# -- matrix json and markdown -----------------------------------------------------------------------------------------
def _matrix() -> dict:
    return kill_matrix.build_matrix(27, 0, {
        "unload-write-lost": kill_matrix.fault_entry([B], [B]),
        "history-idor": kill_matrix.fault_entry([C, A], [C]),
        "write-race": kill_matrix.fault_entry([], []),
    })


def test_matrix_has_exactly_the_documented_shape() -> None:
    matrix = json.loads(json.dumps(_matrix()))
    assert set(matrix) == {"clean", "faults"}
    assert matrix["clean"] == {"passed": 27, "failed": 0}
    for entry in matrix["faults"].values():
        assert set(entry) == {"expected", "failed", "killed"}
        assert isinstance(entry["killed"], bool)
    assert matrix["faults"]["history-idor"] == {"expected": [C, A], "failed": [C], "killed": False}


def test_problems_name_survivors_faults_without_scenarios_red_clean_runs_and_broken_runs() -> None:
    found = kill_matrix.problems(_matrix(), broken_runs=["write-race"])
    assert any(p.startswith("history-idor survives: 1 of 2") and A in p for p in found)
    assert any("write-race: the target file names no scenario for it under [faults]" in p for p in found)
    assert any("run write-race broke" in p for p in found)
    assert not any(p.startswith("unload-write-lost") for p in found)
    red = kill_matrix.build_matrix(26, 1, {"unload-write-lost": kill_matrix.fault_entry([B], [B])})
    assert kill_matrix.problems(red) == ["the clean app fails 1 scenario(s); a kill means nothing then"]
    green = kill_matrix.build_matrix(27, 0, {"unload-write-lost": kill_matrix.fault_entry([B], [B])})
    assert kill_matrix.problems(green) == []


def test_markdown_table_has_a_row_per_fault_and_the_clean_line() -> None:
    md = kill_matrix.render_markdown(_matrix(), {f.name: f.bug_class for f in CATALOGUE},
                                     notes={"clean": ["JUnit counts 1 tests, the plugin 0"]}, wall_s=181.4)
    lines = md.splitlines()
    assert "Clean app: 27 passed, 0 failed (green)." in lines
    assert "| Fault | Bug class | Expected scenarios | Failed | Killed |" in lines
    rows = [ln for ln in lines if ln.startswith("| `")]
    assert [r.split("`")[1] for r in rows] == ["unload-write-lost", "history-idor", "write-race"]
    idor = rows[1]
    assert "conversation served \\| no owner check" in idor  # a | in a cell must not split the row
    assert idor.count(" | ") == 4  # five cells, pipes in the text escaped
    assert short_id(C) in idor and short_id(A) in idor
    assert "1/2 (passed: " + short_id(A) + ")" in idor
    assert idor.rstrip().endswith("| **no** |")
    assert rows[0].rstrip().endswith("| 1/1 | yes |")
    assert "(none named)" in rows[2]
    assert "Faults killed: 1 of 3." in lines
    assert "- clean: JUnit counts 1 tests, the plugin 0" in lines
    assert "Wall time: 181 s." in lines


def test_console_table_ends_with_the_clean_line() -> None:
    table = kill_matrix.console_table(_matrix(), {f.name: f.bug_class for f in CATALOGUE}).splitlines()
    assert table[0].split() == ["fault", "bug", "class", "expected", "failed", "killed"]
    assert table[2].split()[-2:] == ["1/1", "yes"]
    assert table[3].split()[-2:] == ["1/2", "NO"]
    assert table[-1].startswith("clean") and "0 failed" in table[-1]


# -- records of the tools.suite_runs plugin ---------------------------------------------------------------------------
def _rec(node: str, when: str, outcome: str, **extra: object) -> dict:
    return {"nodeid": node, "when": when, "outcome": outcome, "duration": 0.5, **extra}


def test_aggregate_records_tells_failures_from_errors_and_skips() -> None:
    records = [
        {"collected": [A, B, C], "worker": "gw0"},
        _rec(A, "setup", "passed"), _rec(A, "call", "failed", message="AssertionError: wrong answer"),
        _rec(A, "teardown", "failed", message="teardown broke too"),
        _rec(B, "setup", "failed", message="app did not start"), _rec(B, "teardown", "passed"),
        _rec(C, "setup", "passed"), _rec(C, "call", "passed"), _rec(C, "teardown", "passed"),
        {"nodeid": C, "protocol_s": 2.5},
        _rec("x::skipped", "setup", "skipped"), _rec("x::skipped", "teardown", "passed"),
    ]
    res = aggregate_records(records)
    assert res.failed == [A]
    assert res.errors == [B]
    assert res.passed == [C]
    assert res.skipped == ["x::skipped"]
    assert res.failed_or_errored == [A, B]
    assert res.messages[A] == "AssertionError: wrong answer"
    assert res.protocol_s == {C: 2.5}
    assert res.phase_s[C] == 1.5
    assert res.orders == {"gw0": [A, B, C]}


def test_read_results_of_a_missing_file_is_empty(tmp_path: Path) -> None:
    res = read_results(tmp_path / "none.jsonl")
    assert res.failed == [] and res.passed == []


def test_read_results_reads_json_lines(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in [_rec(A, "call", "failed"), _rec(C, "call", "passed")]) + "\n")
    res = read_results(path)
    assert (res.failed, res.passed) == ([A], [C])


def test_parse_collect_only_keeps_node_ids_exactly() -> None:
    out = f"{A}\n{B}\n\n3/27 tests collected (24 deselected) in 0.02s\n"
    assert parse_collect_only(out) == [A, B]
    assert parse_collect_only("no tests collected (27 deselected) in 0.02s\n") == []


def test_junit_totals_sum_the_testsuites(tmp_path: Path) -> None:
    path = tmp_path / "j.xml"
    path.write_text('<testsuites><testsuite name="pytest" tests="3" failures="1" errors="1" skipped="0">'
                    "</testsuite></testsuites>")
    assert junit_totals(path) == {"tests": 3, "failures": 1, "errors": 1, "skipped": 0}
    assert junit_totals(tmp_path / "missing.xml")["tests"] == 0


def test_junit_totals_name_a_file_that_is_not_junit(tmp_path: Path) -> None:
    empty = tmp_path / "empty.xml"
    empty.write_text("")
    with pytest.raises(ValueError, match=r"empty\.xml is not a JUnit XML report .*--junitxml"):
        junit_totals(empty)


def test_short_id() -> None:
    assert short_id(A) == "in_session_memory::a_fact_told_earlier_in_the_conversation_is_recalled[order number-4417]"


# -- flake aggregation ------------------------------------------------------------------------------------------------
def test_aggregate_flaky_counts_runs_not_reports() -> None:
    flaky = flake_check.aggregate_flaky([[A], [], [A, B, A], [B], [A]])
    assert flaky == {A: 3, B: 2}
    assert list(flaky) == [A, B]  # most failures first
    assert flake_check.aggregate_flaky([[], []]) == {}


def test_flake_report_shape_and_markdown() -> None:
    report = flake_check.flake_report(3, flake_check.aggregate_flaky([[A], [], [A, C]]))
    assert json.loads(json.dumps(report)) == {"runs": 3, "flaky": {A: 2, C: 1}}
    summaries = [
        flake_check.RunSummary(1, 11, 26, [A], 1, 90.0, "reports/flake-check/run-1", True),
        flake_check.RunSummary(2, 22, 27, [], 0, 91.0, "reports/flake-check/run-2", True),
        flake_check.RunSummary(3, 33, 25, [A, C], 1, 92.0, "reports/flake-check/run-3", False),
    ]
    md = flake_check.render_markdown(report, summaries, workers=2)
    row_a = next(ln for ln in md.splitlines() if ln.startswith(f"| `{A}`"))
    assert "2 of 3" in row_a and "run-1" in row_a and "run-3" in row_a and "run-2" not in row_a
    assert "| 3 | 33 | 25 | 2 | 1 | 92 | **no** | `reports/flake-check/run-3` |" in md
    clean = flake_check.render_markdown(flake_check.flake_report(2, {}), summaries[1:2], workers=2)
    assert "No scenario failed in any run." in clean


# -- bench ------------------------------------------------------------------------------------------------------------
def test_merge_bench_replaces_suite_and_keeps_other_keys() -> None:
    existing = {"memchat": {"p50_ms": 3.0}, "suite": {"old": 1}}
    suite = {"serial_s": 120.0, "n2_s": 80.0, "bare_ratio": 1.5, "storage_state_ms": 250.0, "form_login_ms": 600.0}
    merged = bench_suite.merge_bench(existing, suite)
    assert merged == {"memchat": {"p50_ms": 3.0}, "suite": suite}
    assert existing["suite"] == {"old": 1}  # not modified in place
    assert bench_suite.merge_bench(None, suite) == {"suite": suite}
    assert bench_suite.merge_bench(["not", "a", "dict"], suite) == {"suite": suite}


def test_repetition_times_in_repetition_order() -> None:
    node = bench_suite.SCENARIO
    protocol = {f"{node}[rep2]": 3.0, f"{node}[rep0]": 9.0, f"{node}[rep10]": 4.0, f"{node}[rep1]": 5.0,
                f"{node}x[rep0]": 99.0}
    assert bench_suite.repetition_times(protocol, node) == [9.0, 5.0, 3.0, 4.0]
    assert bench_suite.repetition_times({node: 7.0}, node) == [7.0]


def test_merge_bench_writes_the_machine_when_given() -> None:
    machine = {"cpus": 2, "chromium": "Chromium 156 (debian headless shell)"}
    assert bench_suite.merge_bench({}, {"serial_s": 1.0}, None, machine)["machine"] == machine


def test_bare_script_phases_are_the_scenario_steps() -> None:
    """Each bare phase is compared with the suite's step of the same name: the names are the feature's own lines."""
    feature = (bench_suite.ROOT / "features" / "cross_session_persistence.feature").read_text(encoding="utf-8")
    block = feature.split("Scenario: Everything is still there after closing and reopening the browser")[1]
    lines = [line.strip() for line in block.split("Scenario:")[0].splitlines() if line.strip()]
    assert list(bench_suite.STEPS) == lines


def test_suite_phases_from_allure_results(tmp_path) -> None:  # noqa: ANN001
    for n, start in enumerate((2000, 1000)):  # written out of order: sorted by start time
        steps = [{"name": "Given a", "start": start, "stop": start + 300 + n * 100},
                 {"name": "When b", "start": start + 400, "stop": start + 600}]
        (tmp_path / f"{n}-result.json").write_text(__import__("json").dumps({"start": start, "steps": steps}))
    runs = bench_phases.suite_phases(tmp_path, [1.0, 2.0])
    assert runs[0]["Given a"] == 0.4 and runs[1]["Given a"] == 0.3  # the one that started first is the first
    assert round(runs[0][bench_phases.OUTSIDE_STEPS], 3) == 0.4 and round(runs[1][bench_phases.OUTSIDE_STEPS], 3) == 1.5


def test_phase_rows_medians_without_the_warm_up() -> None:
    suite = [{"Given a": 9.0, bench_phases.OUTSIDE_STEPS: 9.0}, {"Given a": 1.0, bench_phases.OUTSIDE_STEPS: 0.5},
             {"Given a": 3.0, bench_phases.OUTSIDE_STEPS: 0.5}]
    bare = [{bench_phases.OUTSIDE_STEPS: 5.0, "Given a": 5.0}, {"Given a": 1.0, bench_phases.OUTSIDE_STEPS: 0.1},
            {"Given a": 1.0, bench_phases.OUTSIDE_STEPS: 0.1}]
    rows = bench_phases.phase_rows(suite, bare)
    assert [r["phase"] for r in rows] == ["Given a", bench_phases.OUTSIDE_STEPS]
    assert rows[0] == {"phase": "Given a", "suite_ms": 2000, "bare_ms": 1000, "extra_ms": 1000}
    assert rows[1]["extra_ms"] == 400


def test_phases_add_up_each_name() -> None:
    phases = bench_phases.Phases()
    with phases("a"):
        pass
    with phases("a"):
        pass
    assert list(phases.seconds) == ["a"] and phases.seconds["a"] >= 0
