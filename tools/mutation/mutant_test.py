"""The test command cosmic-ray and StrykerJS run for each mutant, in the scratch copy where the mutant is written.

Which mutant is active: StrykerJS names it in $__STRYKER_ACTIVE_MUTANT__ (a mutant of the page's script; the suite's
browsers hand it to the page, harness.browser.chromium); cosmic-ray writes it into a module, which `git diff` of the
scratch copy shows. The run is the default acceptance run narrowed to the features that can reach the mutated file
(tools/mutation/areas.toml), on the target its area names (the model client's lines: memchat-model), and, for a
Python mutant, to those of them that ran its lines on the unmutated app
(tools.mutation.coverage_map; none: it survives unrun), stopped at its first failure, within a deadline. In CI's
sample (drawn from mutation-killed.toml) a mutant first runs the scenario that killed it when scored, alone, and its
area only when that scenario no longer kills it: the same verdict, minutes sooner. What
happened is appended to the work folder's outcomes.jsonl, keyed by the mutant, an error with its cause; the exit
status is what the tools count (0: survived, 1: not). `--baseline` runs one scenario on the unmutated app instead: did
it start (the run asks when a mutant kept the app from starting)?

    python -m tools.mutation.mutant_test [--baseline]       (run by the tools, from the scratch copy)
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from tools.mutation.coverage_map import MAP_FILE, features_running
from tools.mutation.population import enclosing_definition

if TYPE_CHECKING:
    from tools.suite_runs import RunResults, SuiteRun

ROOT = Path(__file__).resolve().parent.parent.parent
WORK = ROOT / "reports" / "mutation-work"
AREAS = Path(__file__).with_name("areas.toml")
STRYKER_ENV = "__STRYKER_ACTIVE_MUTANT__"
UNDER_STRYKER_ENV = "MEMTEST_UNDER_STRYKER"
TIMEOUT_ENV = "MEMTEST_MUTANT_TIMEOUT_S"
DEFAULT_TIMEOUT_S = 420.0


@dataclass(frozen=True)
class Area:
    """What a mutant runs: feature files, on a target of targets/ (None: the default run's)."""

    features: list[str]
    target: str | None = None


def area_for(path: str, lines: list[int] | None = None, source: str | None = None) -> Area:
    """The area of a mutant of `path`: the first whose pattern matches and, where it names `functions` or
    `lines_with`, one of whose `lines` of the unmutated `source` lies in one of those functions or holds one of those
    texts (an area that names neither takes every line; without lines or source, only such an area)."""
    for area in tomllib.loads(AREAS.read_text(encoding="utf-8"))["area"]:
        if not any(fnmatch.fnmatch(path, pattern) for pattern in area["files"]):
            continue
        functions, texts = area.get("functions", []), area.get("lines_with", [])
        if functions or texts:
            if lines is None or source is None:
                continue
            held = source.splitlines()
            if not any(enclosing_definition(source, line) in functions
                       or any(text in held[line - 1] for text in texts if 0 < line <= len(held)) for line in lines):
                continue
        return Area([f"features/{name}.feature" for name in area["features"]], area.get("target"))
    raise SystemExit(f"{path} is in no area of {AREAS.relative_to(ROOT)}: add it there (which features reach it)")


def features_for(path: str, lines: list[int] | None = None, source: str | None = None) -> list[str]:
    """The feature files a mutant of `path` runs (`area_for`)."""
    return area_for(path, lines, source).features


def python_mutant() -> tuple[str, str]:
    """The module cosmic-ray mutated in the scratch copy, and the diff (the mutant's key is its hash)."""
    diff = subprocess.run(["git", "diff", "--unified=0", "--", "memchat/*.py"], cwd=ROOT, capture_output=True,
                          text=True, check=True).stdout
    changed = [line[6:] for line in diff.splitlines() if line.startswith("+++ b/")]
    if len(changed) != 1:
        raise SystemExit(f"expected one mutated module in the scratch copy, found {changed or 'none'}")
    return changed[0], diff


def changed_lines(diff: str) -> list[int]:
    """The lines of the unmutated module a diff changes (for a pure insertion, the lines either side of it)."""
    lines: list[int] = []
    for start, count in re.findall(r"^@@ -(\d+)(?:,(\d+))? ", diff, flags=re.MULTILINE):
        first, n = int(start), 1 if count == "" else int(count)
        lines += range(first, first + n) if n else [first, first + 1]
    return lines


def change_key(module: str, diff: str) -> str:
    """A mutant of a module by what it changes: its removed and added lines, whatever the diff's format (git's,
    difflib's) and context."""
    changed = [line for line in diff.splitlines()
               if line.startswith(("+", "-")) and not line.startswith(("+++", "---"))]
    return f"cosmic-ray:{module}:{hashlib.sha1(chr(10).join(changed).encode()).hexdigest()}"


# What an error was: each one is reported with its cause, apart from the score.
NOT_PYTHON = "not valid Python"
NO_START = "the app did not start"
TIMED_OUT = "timed out"
AROUND = "a fixture failed around a scenario"
PYTEST_EXIT = "pytest exited abnormally"
NOT_RUN = "the tool ran no test for it"
# The app's own clean-up: every scenario's world deletes its users through the app's admin API afterwards (memchat's
# driver, DriverError "deleting user ..."); an app that refuses it misbehaved where a user of its admin API would see.
CLEAN_UP_REFUSED = re.compile(r"DriverError: deleting user ")


def record(outcome: dict) -> int:
    """Append a mutant's outcome to the work folder's outcomes; what the tools count (0 survived, 1 not)."""
    WORK.mkdir(parents=True, exist_ok=True)
    outcome.setdefault("cause", "")
    with (WORK / "outcomes.jsonl").open("a", encoding="utf-8") as out:
        out.write(json.dumps(outcome) + "\n")
    print(f"{outcome['tool']} mutant {outcome['key'][:40]!r} in {outcome['module']}: {outcome['status']} "
          f"({outcome['reason'][:160]})", flush=True)
    return 0 if outcome["status"] == "survived" else 1


def verdict(results: RunResults, returncode: int | None, tail: str) -> tuple[str, str, str]:
    """(status, cause, reason) of one mutant's run; the cause names an error's kind ("" for the others). A scenario
    that failed kills the mutant, and so does a clean-up the app refused (its admin API would not delete a scenario's
    users). An app that did not start is an error here: the run settles it against the unmutated app's start
    (run.settle_no_starts)."""
    first = results.messages.get(results.failed[0], "") if results.failed else ""
    around = [(node, results.messages.get(node, "")) for node in results.errors]
    if "AppLaunchError" in first:  # a scenario that starts an app of its own
        return "error", NO_START, f"{NO_START}: {first}"
    if results.failed:
        return "killed", "", f"{results.failed[0]}: {first}"
    no_start = next((message for _, message in around if "AppLaunchError" in message), None)
    if no_start is not None:  # the app the scenarios share
        return "error", NO_START, f"{NO_START}: {no_start}"
    refused = next(((node, message) for node, message in around if CLEAN_UP_REFUSED.search(message)), None)
    if refused is not None:
        return "killed", "", f"{refused[0]}: the app refused its own clean-up (its admin API): {refused[1]}"
    if returncode == 0:
        return "survived", "", f"{len(results.passed)} scenarios passed"
    if around:
        return "error", AROUND, f"{around[0][0]} errored around the scenario: {around[0][1]}"
    return "error", PYTEST_EXIT, f"pytest exited {returncode}: {tail}"


def unmutated_source(path: str) -> str | None:
    """`path` as the scratch copy's commit holds it, before any mutant was written (None: not there)."""
    shown = subprocess.run(["git", "show", f"HEAD:{path}"], cwd=ROOT, capture_output=True, text=True)
    return shown.stdout if shown.returncode == 0 else None


def run(key: str, tool: str, path: str, lines: list[int] | None = None) -> int:
    """Run the features that reach `path` (and, where the coverage map is measured, run `lines` of it), on their
    area's target; record and return the outcome (0 survived, 1 killed or error)."""
    area = area_for(path, lines, unmutated_source(path) if lines is not None else None)
    features = area.features
    coverage = WORK / MAP_FILE
    if lines is not None and coverage.exists():
        features = features_running(json.loads(coverage.read_text(encoding="utf-8")), path, lines, features,
                                    area.target)
        if not features:
            on = f" on --target {area.target}" if area.target else ""
            return record({"key": key, "tool": tool, "module": path, "status": "survived", "seconds": 0.0,
                           "reason": f"no feature runs line {', '.join(map(str, sorted(set(lines))))} of {path} on "
                                     f"the unmutated app{on} (coverage): not run", "log": ""})
    # Fresh byte code for the mutated file: two mutants of one line written within a second would share the
    # timestamp and size Python checks a cached .pyc by.
    shutil.rmtree(ROOT / "memchat" / "__pycache__", ignore_errors=True)
    label = hashlib.sha1(key.encode()).hexdigest()[:12]
    on_target = ["--target", area.target] if area.target else []
    started = time.perf_counter()
    first = scenarios_first(path)
    if first:  # CI's sample: the scenarios that killed the mutants of this file when they were scored, on their own
        status, cause, reason, suite = _judge(f"{label}-first", [*first, *on_target, "-x"])
        if status == "killed" or cause == NO_START:
            return record({"key": key, "tool": tool, "module": path, "status": status, "cause": cause,
                           "reason": reason[:400], "seconds": round(time.perf_counter() - started, 1),
                           "log": str(suite.log_file.relative_to(ROOT))})
        # Not killed by them (or they are no longer there): the mutant runs its whole area, as any mutant does.
    status, cause, reason, suite = _judge(label, [*features, *on_target, "-x"])
    return record({"key": key, "tool": tool, "module": path, "status": status, "cause": cause,
                   "reason": reason[:400], "seconds": round(time.perf_counter() - started, 1),
                   "log": str(suite.log_file.relative_to(ROOT))})


def _judge(label: str, args: list[str]) -> tuple[str, str, str, SuiteRun]:
    """One acceptance run of `args` on the mutated app within the deadline: (status, cause, reason, the run)."""
    suite = _suite_run(label, args)
    deadline = float(os.environ.get(TIMEOUT_ENV, DEFAULT_TIMEOUT_S))
    try:
        suite.run(timeout=deadline)
        return (*verdict(suite.results, suite.returncode, suite.tail(3)), suite)
    except subprocess.TimeoutExpired:
        return "error", TIMED_OUT, f"timed out after {deadline:.0f} s", suite


FIRST_FILE = "scenarios-first.json"


def scenarios_first(path: str) -> list[str]:
    """The scenarios a run drawn from mutation-killed.toml runs first for a mutant of `path`: those that killed the
    drawn mutants of that file in the scored draw (their pytest node ids, written by the run); none otherwise."""
    found = WORK / FIRST_FILE
    if not found.exists():
        return []
    return list(json.loads(found.read_text(encoding="utf-8")).get(path, []))


def _suite_run(label: str, args: list[str]) -> SuiteRun:
    """The default acceptance run of `args` as a mutant's run makes it (its evidence under the work folder)."""
    from tools.suite_runs import SuiteRun  # (pytest's import is slow: not for the mutants this run skips)

    env = {"PYTHONPATH": str(ROOT), "PYTHONDONTWRITEBYTECODE": ""}
    # No shrinking of a failing generated session and no browser traces: killed is any failure, and a shorter
    # reproduction takes minutes, a trace a tenth of the run's CPU.
    return SuiteRun(label, [*args, "-q", "--shrink-seconds", "0", "--tracing", "off",
                            "-n", os.environ.get("MEMTEST_MUTANT_WORKERS", "2"),
                            "--alluredir", str(WORK / "allure" / label), "--output", str(WORK / "playwright" / label)],
                    results_file=WORK / "results" / f"{label}.jsonl", log_file=WORK / "logs" / f"{label}.log",
                    env=env)


BASELINE_FILE = "baseline.json"
BASELINE_RUN = ["features/in_session_memory.feature", "-m", "smoke"]  # one scenario: the app the scenarios share


def baseline() -> int:
    """Whether the unmutated app starts, as the mutants' runs start it: one scenario on the code as it is (run by
    the mutation run after the tools put every mutant back), written to the work folder's baseline.json as
    {"started": bool, "reason": str}. 0 when it started."""
    suite = _suite_run("baseline", BASELINE_RUN)
    deadline = float(os.environ.get(TIMEOUT_ENV, DEFAULT_TIMEOUT_S))
    try:
        suite.run(timeout=deadline)
        status, cause, reason = verdict(suite.results, suite.returncode, suite.tail(3))
        started = cause != NO_START and bool(suite.results.passed or suite.results.failed)
        if not started and cause != NO_START:
            reason = f"no scenario ran ({reason})"
    except subprocess.TimeoutExpired:
        started, reason = False, f"timed out after {deadline:.0f} s"
    WORK.mkdir(parents=True, exist_ok=True)
    (WORK / BASELINE_FILE).write_text(json.dumps({"started": started, "reason": reason[:400]}), encoding="utf-8")
    return 0 if started else 1


def main(argv: list[str] | None = None) -> int:
    if (sys.argv[1:] if argv is None else argv) == ["--baseline"]:
        return baseline()
    js_mutant = os.environ.get(STRYKER_ENV)
    if js_mutant is not None:
        wanted = json.loads((WORK / "stryker-sample.json").read_text(encoding="utf-8"))
        if js_mutant not in wanted:  # not drawn: the run is someone else's sample
            return 0
        return run(f"stryker:{wanted[js_mutant]}:{js_mutant}", "stryker", wanted[js_mutant])  # run.js_key's
    if os.environ.get(UNDER_STRYKER_ENV):
        return 0  # StrykerJS's initial run, with no mutant active: the unmutated app's run is the baseline's
    path, diff = python_mutant()
    key = change_key(path, diff)
    broken = compile_error(ROOT / path)
    if broken:  # e.g. an operator that takes the `**` of `{**params}` for a power: the app could never start
        return record({"key": key, "tool": "cosmic-ray", "module": path, "status": "error", "cause": NOT_PYTHON,
                       "seconds": 0.0, "reason": f"the mutant is {NOT_PYTHON} ({broken}): not run", "log": ""})
    return run(key, "cosmic-ray", path, changed_lines(diff))


def compile_error(path: Path) -> str:
    """Why the mutated file does not compile, in a line; "" when it does."""
    try:
        compile(path.read_text(encoding="utf-8"), str(path), "exec")
    except SyntaxError as e:
        return f"{e.msg}, line {e.lineno}"
    return ""


if __name__ == "__main__":
    sys.exit(main())
