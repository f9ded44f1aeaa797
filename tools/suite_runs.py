"""What the kill matrix, the flake check and the bench share: running the acceptance suite as a child pytest process
and reading back, per scenario, what happened.

Loaded into such a child as a plugin (`-p tools.suite_runs`), this module appends one JSON line per test report
(phase, outcome, duration) and one per finished test (the wall time of its whole runtest protocol) to the file named
by $MEMTEST_RESULTS_FILE. Node ids are pytest's own (`features/x.feature::test_y[a-b]`), exactly as
`pytest --collect-only -q` prints them; JUnit XML mangles them into classname/name. With $MEMTEST_REPEAT=N every
collected scenario runs N times in one session (as pytest-repeat does: an extra parametrization), for timing.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
RESULTS_ENV = "MEMTEST_RESULTS_FILE"
REPEAT_ENV = "MEMTEST_REPEAT"
REPEAT_FIXTURE = "memtest_repeat_index"
PLUGIN = "tools.suite_runs"


# -- the plugin (runs inside the child pytest) ------------------------------------------------------------------------
def _append(record: dict) -> None:
    path = os.environ.get(RESULTS_ENV)
    if not path:
        return
    line = json.dumps(record) + "\n"
    # One short O_APPEND write per record: lines from the controller and the workers never interleave.
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line.encode())
    finally:
        os.close(fd)


def _crash_message(report: pytest.TestReport) -> str:
    crash = getattr(report.longrepr, "reprcrash", None)
    if crash is not None:
        return str(crash.message)
    text = report.longreprtext.strip()
    return text.splitlines()[-1] if text else ""


_IS_WORKER = False


def pytest_configure(config: pytest.Config) -> None:
    global _IS_WORKER
    _IS_WORKER = hasattr(config, "workerinput")


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if _IS_WORKER:  # xdist sends every worker's reports to the controller, which records them once
        return
    record = {"nodeid": report.nodeid, "when": report.when, "outcome": report.outcome,
              "duration": round(report.duration, 4)}
    if report.failed:
        record["message"] = _crash_message(report)[:500]
    _append(record)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None):  # noqa: ANN201 - a hook wrapper
    started = time.perf_counter()
    try:
        return (yield)
    finally:
        _append({"nodeid": item.nodeid, "protocol_s": round(time.perf_counter() - started, 4)})


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The order the items will run in, after any reordering (pytest-randomly), from whichever process collects."""
    worker = getattr(config, "workerinput", {}).get("workerid", "main")
    _append({"collected": [item.nodeid for item in items], "worker": worker})


def _repeat_count() -> int:
    try:
        return max(1, int(os.environ.get(REPEAT_ENV, "1")))
    except ValueError:
        return 1


@pytest.fixture
def memtest_repeat_index(request: pytest.FixtureRequest) -> int:
    return request.param


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    count = _repeat_count()
    if count > 1:
        metafunc.fixturenames.append(REPEAT_FIXTURE)
        metafunc.parametrize(REPEAT_FIXTURE, range(count), indirect=True, ids=[f"rep{i}" for i in range(count)])


# -- reading what a child run recorded --------------------------------------------------------------------------------
@dataclass
class RunResults:
    """Outcomes per node id, in the order pytest reported them."""

    failed: list[str] = field(default_factory=list)  # the scenario itself failed (JUnit <failure>)
    errors: list[str] = field(default_factory=list)  # a fixture failed around it (JUnit <error>)
    passed: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    messages: dict[str, str] = field(default_factory=dict)  # node id -> first failure message
    protocol_s: dict[str, float] = field(default_factory=dict)  # node id -> runtest protocol wall time
    phase_s: dict[str, float] = field(default_factory=dict)  # node id -> setup + call + teardown durations
    orders: dict[str, list[str]] = field(default_factory=dict)  # process ("main", "gw0"...) -> run order

    @property
    def failed_or_errored(self) -> list[str]:
        return self.failed + [n for n in self.errors if n not in self.failed]


def aggregate_records(records: Iterable[dict]) -> RunResults:
    """Per node id: failed if its call failed, errored if only its setup or teardown did, skipped, else passed."""
    phases: dict[str, dict[str, str]] = {}
    results = RunResults()
    for rec in records:
        if "collected" in rec:
            results.orders[rec.get("worker", "main")] = rec["collected"]
            continue
        node = rec["nodeid"]
        if "protocol_s" in rec:
            results.protocol_s[node] = rec["protocol_s"]
            continue
        phases.setdefault(node, {})[rec["when"]] = rec["outcome"]
        results.phase_s[node] = round(results.phase_s.get(node, 0.0) + rec.get("duration", 0.0), 4)
        if rec["outcome"] == "failed" and node not in results.messages:
            results.messages[node] = rec.get("message", "")
    for node, seen in phases.items():
        if seen.get("call") == "failed":
            results.failed.append(node)
        elif "failed" in seen.values():
            results.errors.append(node)
        elif "skipped" in seen.values():
            results.skipped.append(node)
        else:
            results.passed.append(node)
    return results


def read_results(path: Path) -> RunResults:
    if not path.exists():
        return RunResults()
    lines = [ln for ln in path.read_text(encoding="utf-8").splitlines() if ln.strip()]
    return aggregate_records(json.loads(ln) for ln in lines)


def junit_totals(path: Path) -> dict[str, int]:
    """tests/failures/errors/skipped as the JUnit XML counts them (a cross-check of the plugin's records); a file that
    is not JUnit XML raises ValueError saying so."""
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    if not path.exists():
        return totals
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as e:  # empty, or cut short by a run that was stopped
        raise ValueError(f"{path} is not a JUnit XML report ({e}); write one with pytest --junitxml") from None
    suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
    for suite in suites:
        for key in totals:
            totals[key] += int(suite.get(key, 0))
    return totals


# -- running the suite ------------------------------------------------------------------------------------------------
def child_pytest(*args: str) -> list[str]:
    return [sys.executable, "-m", "pytest", *args]


def parse_collect_only(stdout: str) -> list[str]:
    """Node ids from `pytest --collect-only -q` output (one per line, before the summary)."""
    return [line.strip() for line in stdout.splitlines() if "::" in line and not line.startswith(("=", " "))]


def collect(args: Sequence[str]) -> list[str]:
    """The node ids `pytest --collect-only -q ARGS` selects; an error exit other than "nothing selected" raises."""
    proc = subprocess.run(child_pytest("--collect-only", "-q", "-p", "no:cacheprovider", *args), cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    if proc.returncode not in (0, 5):
        tail = (proc.stdout + proc.stderr).strip().splitlines()[-5:]
        raise RuntimeError(f"collecting {' '.join(args)} failed (exit {proc.returncode}): " + " | ".join(tail))
    return parse_collect_only(proc.stdout)


@dataclass
class SuiteRun:
    """One child pytest: its command, where its results and output go, and what came back."""

    label: str
    args: list[str]
    results_file: Path
    log_file: Path
    junit_file: Path | None = None
    env: dict[str, str] = field(default_factory=dict)
    returncode: int | None = None
    wall_s: float = 0.0

    def run(self, timeout: float = 3600) -> SuiteRun:
        for path in (self.results_file, self.log_file, self.junit_file):
            if path is not None:
                path.parent.mkdir(parents=True, exist_ok=True)
        self.results_file.unlink(missing_ok=True)
        command = child_pytest("-p", PLUGIN, "-p", "no:cacheprovider", *self.args)
        if self.junit_file is not None:
            command += ["--junitxml", str(self.junit_file)]
        env = {**os.environ, **self.env, RESULTS_ENV: str(self.results_file)}
        started = time.perf_counter()
        with self.log_file.open("w", encoding="utf-8") as log:
            log.write("$ " + " ".join(command) + "\n")
            log.flush()
            proc = subprocess.run(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, timeout=timeout)
        self.wall_s = time.perf_counter() - started
        self.returncode = proc.returncode
        return self

    @property
    def results(self) -> RunResults:
        return read_results(self.results_file)

    @property
    def finished_normally(self) -> bool:
        """pytest's exit codes 0 (all passed) and 1 (some failed); anything else means the run itself broke."""
        return self.returncode in (0, 1)

    def tail(self, lines: int = 15) -> str:
        if not self.log_file.exists():
            return ""
        return "\n".join(self.log_file.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])


def rel(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(ROOT))
    except ValueError:
        return str(path)


def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else float("nan")


def format_table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A plain-text table with aligned columns, for the console."""
    cells = [[str(c) for c in header]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def short_id(nodeid: str) -> str:
    """`features/a_b.feature::test_c[d]` -> `a_b::c[d]`, for tables."""
    path, _, name = nodeid.partition("::")
    return f"{Path(path).stem}::{name.removeprefix('test_')}"
