"""Kill matrix: does every documented fault of the app make the scenarios written to catch it fail?

Runs the whole acceptance suite once on the clean app, and for every fault in the app's catalogue (its driver's:
the reference app's regressions, or a third-party app's misconfigurations) the scenarios the target file names for
it under [faults] (harness.app.fault_catalogue), found by collection, against the app with that fault on:

    pytest <the node ids of those scenarios> --target <target> --faults <name>

A scenario is named by feature file and title; an outline means every example the run selects; a title no feature
has stops the matrix with one line naming it. Up to --jobs child pytest processes run at once, each serial, each
with its own Allure results, Playwright output, JUnit XML and log under reports/kill-matrix/. Which scenarios failed
is read from the records of the small plugin tools.suite_runs (exact pytest node ids; JUnit XML mangles them). A
fault is killed when it has expected scenarios and every one of them failed.

Writes reports/kill-matrix.json and .md (reports/kill-matrix-<target>.json and .md for another target than the
default); exits 1 if the clean run has a failure, a fault survives (an expected scenario passed, or a fault has no
scenario), or a run broke; 2 on a usage error.

    python tools/kill_matrix.py [--target open-webui] [--faults a,b] [--jobs 2]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from harness.app.app_tools import ToolFailed
from harness.app.fault_catalogue import CatalogueError, Fault, fault_catalogue
from harness.app.target import DEFAULT_TARGET, TargetError, load_target
from harness.drivers import load_driver
from harness.drivers.base import DriverError
from harness.suite.scenarios import nodes_of
from tools.suite_runs import SuiteRun, collect, format_table, junit_totals, rel, short_id

ROOT = Path(__file__).resolve().parent.parent

REPORTS = ROOT / "reports"
CLEAN = "clean"


@dataclass(frozen=True)
class Places:
    """Where one target's matrix and its runs' evidence go."""

    target: str  # the target file, passed to every child run

    @property
    def suffix(self) -> str:
        name = Path(self.target).stem
        return "" if Path(self.target).resolve() == DEFAULT_TARGET.resolve() else f"-{name}"

    @property
    def out(self) -> Path:
        return REPORTS / f"kill-matrix{self.suffix}"

    @property
    def json_path(self) -> Path:
        return REPORTS / f"kill-matrix{self.suffix}.json"

    @property
    def md_path(self) -> Path:
        return REPORTS / f"kill-matrix{self.suffix}.md"


# -- pure parts -------------------------------------------------------------------------------------------------------
def is_killed(expected: Sequence[str], failed: Sequence[str]) -> bool:
    """Killed: the fault has scenarios meant to catch it, and every one of them failed."""
    return bool(expected) and set(expected) <= set(failed)


def select_faults(catalogue: Sequence[Fault], wanted: str | None) -> list[Fault]:
    """The catalogue's entries named in `wanted` (comma-separated; None or empty: all), in catalogue order."""
    if not wanted:
        return list(catalogue)
    names = [n.strip() for n in wanted.split(",") if n.strip()]
    known = {f.name for f in catalogue}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ValueError(f"unknown fault(s) {', '.join(unknown)}; the catalogue has: {', '.join(sorted(known))}")
    return [f for f in catalogue if f.name in names]


def expected_scenarios(fault: Fault, collected: Sequence[str]) -> list[str]:
    """The collected node ids of the scenarios named for the fault; a named scenario the run does not select (one
    whose every example is opt-in, e.g. @scale) is an error, since it would prove nothing."""
    unselected = [ref for ref in fault.scenarios if not nodes_of([ref], collected)]
    if unselected:
        raise CatalogueError(f"{fault.name}: the scenario {unselected[0]} is not in the default run (all its "
                             "examples are opt-in); name one that is")
    return nodes_of(fault.scenarios, collected)


def fault_entry(expected: Sequence[str], failed: Sequence[str]) -> dict:
    """One fault's line of the matrix; failed in the order of expected, then any unexpected failures."""
    ordered = [n for n in expected if n in set(failed)] + [n for n in failed if n not in set(expected)]
    return {"expected": list(expected), "failed": ordered, "killed": is_killed(expected, failed)}


def build_matrix(clean_passed: int, clean_failed: int, faults: dict[str, dict]) -> dict:
    return {"clean": {"passed": clean_passed, "failed": clean_failed}, "faults": dict(faults)}


def problems(matrix: dict, broken_runs: Sequence[str] = ()) -> list[str]:
    """Every reason for a non-zero exit, one line each."""
    found = []
    if matrix["clean"]["failed"]:
        found.append(f"the clean app fails {matrix['clean']['failed']} scenario(s); a kill means nothing then")
    for name, entry in matrix["faults"].items():
        if not entry["expected"]:
            found.append(f"{name}: the target file names no scenario for it under [faults]")
        elif not entry["killed"]:
            survived = [n for n in entry["expected"] if n not in set(entry["failed"])]
            found.append(f"{name} survives: {len(survived)} of {len(entry['expected'])} expected scenario(s) did not "
                         f"fail: {', '.join(survived)}")
    found += [f"run {label} broke (see its log)" for label in broken_runs]
    return found


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|")


def render_markdown(matrix: dict, bug_classes: dict[str, str], *, notes: dict[str, list[str]] | None = None,
                    wall_s: float | None = None, places: Places = Places(str(DEFAULT_TARGET))) -> str:
    """A readable table: fault, bug class, expected scenarios, failed, killed; the clean line first."""
    notes = notes or {}
    clean = matrix["clean"]
    killed = sum(1 for e in matrix["faults"].values() if e["killed"])
    lines = ["# Kill matrix", "",
             f"Clean app: {clean['passed']} passed, {clean['failed']} failed"
             f" ({'green' if not clean['failed'] else 'RED'}).",
             f"Faults killed: {killed} of {len(matrix['faults'])}.", "",
             "| Fault | Bug class | Expected scenarios | Failed | Killed |",
             "|---|---|---|---|---|"]
    for name, entry in matrix["faults"].items():
        expected = "<br>".join(_md_cell(short_id(n)) for n in entry["expected"]) or "(none named)"
        failed_set = set(entry["failed"])
        count = f"{sum(1 for n in entry['expected'] if n in failed_set)}/{len(entry['expected'])}"
        survived = [short_id(n) for n in entry["expected"] if n not in failed_set]
        if survived:
            count += " (passed: " + ", ".join(_md_cell(s) for s in survived) + ")"
        lines.append(f"| `{name}` | {_md_cell(bug_classes.get(name, ''))} | {expected} | {count} | "
                     f"{'yes' if entry['killed'] else '**no**'} |")
    found = problems(matrix)
    if found or any(notes.values()):
        lines += ["", "## Findings", ""]
        lines += [f"- {p}" for p in found]
        for label, items in notes.items():
            lines += [f"- {label}: {item}" for item in items]
    out = places.out
    lines += ["", f"Per run: Allure results in `{rel(out / 'allure')}/<fault|clean>`, Playwright traces and "
                  f"screenshots in `{rel(out / 'playwright')}/<...>`, JUnit XML in `{rel(out / 'junit')}`, pytest "
                  f"output in `{rel(out / 'logs')}`."]
    if wall_s is not None:
        lines.append(f"Wall time: {wall_s:.0f} s.")
    return "\n".join(lines) + "\n"


def console_table(matrix: dict, bug_classes: dict[str, str]) -> str:
    rows = []
    for name, entry in matrix["faults"].items():
        failed_set = set(entry["failed"])
        hit = sum(1 for n in entry["expected"] if n in failed_set)
        bug = bug_classes.get(name, "")
        rows.append([name, bug if len(bug) <= 60 else bug[:57] + "...", len(entry["expected"]),
                     f"{hit}/{len(entry['expected'])}", "yes" if entry["killed"] else "NO"])
    clean = matrix["clean"]
    rows.append([CLEAN, "(no fault: the whole suite)", clean["passed"] + clean["failed"],
                 f"{clean['failed']} failed", "-"])
    return format_table(["fault", "bug class", "expected", "failed", "killed"], rows)


# -- running ----------------------------------------------------------------------------------------------------------
@dataclass
class Job:
    label: str  # a fault's name, or "clean"
    expected: list[str] = field(default_factory=list)  # node ids that must fail with the fault on
    run: SuiteRun | None = None
    error: str = ""  # why the job could not run at all


def suite_run(label: str, selection: Sequence[str], places: Places) -> SuiteRun:
    out = places.out
    # No shrinking of a failing generated session and no browser traces: the matrix asks whether a scenario fails,
    # and a shorter reproduction (up to two minutes a session) or a trace (a tenth to a fifth of a run's CPU, kept
    # for every failure a fault causes) is for someone reading a failure.
    args = [*selection, "--target", places.target, "-q", "--tb=short", "--shrink-seconds", "0", "--tracing", "off",
            "--alluredir", str(out / "allure" / label), "--clean-alluredir",
            "--output", str(out / "playwright" / label)]
    return SuiteRun(label, args, results_file=out / "results" / f"{label}.jsonl",
                    log_file=out / "logs" / f"{label}.log", junit_file=out / "junit" / f"{label}.xml")


def run_job(job: Job, places: Places, say: Callable[[str], None]) -> Job:
    try:
        if job.label == CLEAN:
            selection: list[str] = ["features"]
        else:
            if not job.expected:
                say(f"{job.label}: the target names no scenario for it; nothing to run")
                return job
            selection = [*job.expected, "--faults", job.label]
        say(f"start {job.label}" + (f" ({len(job.expected)} expected scenario(s))" if job.expected else ""))
        job.run = suite_run(job.label, selection, places).run()
        res = job.run.results
        say(f"done  {job.label}: {len(res.passed)} passed, {len(res.failed)} failed, {len(res.errors)} errors, "
            f"exit {job.run.returncode}, {job.run.wall_s:.1f} s")
    except Exception as e:  # noqa: BLE001 - one broken job must not stop the others; it is reported
        job.error = f"{type(e).__name__}: {e}"
        say(f"FAIL  {job.label}: {job.error}")
    return job


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--target", help="the app: a name in targets/ or a target file (default: the reference app)")
    ap.add_argument("--faults", help="comma-separated fault names to run (default: the whole catalogue)")
    ap.add_argument("--jobs", type=int, default=2, help="child pytest processes at once (default 2)")
    ap.add_argument("--clean-from-junit", type=Path, metavar="FILE",
                    help="take the clean run from this JUnit file of the whole suite on the same code and app, just "
                         "run (e.g. by `make test` in CI), instead of running it again")
    args = ap.parse_args(argv)
    if args.jobs < 1:
        ap.error("--jobs must be at least 1")

    started = time.perf_counter()
    lock = threading.Lock()

    def say(text: str) -> None:
        with lock:
            print(f"[{time.perf_counter() - started:6.1f}s] {text}", flush=True)

    try:
        target = load_target(args.target)
        catalogue = fault_catalogue(load_driver(target))
        selected = select_faults(catalogue, args.faults)
        collected = collect(["features", "--target", str(target.path)])
        expected = {f.name: expected_scenarios(f, collected) for f in selected}
    except (TargetError, DriverError, ToolFailed, ValueError, RuntimeError) as e:
        print(f"kill-matrix: {e}", file=sys.stderr)
        return 2
    bug_classes = {f.name: f.bug_class for f in catalogue}

    places = Places(str(target.path))
    shutil.rmtree(places.out, ignore_errors=True)
    places.out.mkdir(parents=True)
    clean_totals = None
    if args.clean_from_junit is not None:
        try:
            clean_totals = junit_totals(args.clean_from_junit)
        except ValueError as e:
            print(f"kill-matrix: {e}, or drop --clean-from-junit", file=sys.stderr)
            return 2
        if not args.clean_from_junit.exists() or not clean_totals["tests"]:
            print(f"kill-matrix: {args.clean_from_junit} holds no test results; run the suite with --junitxml first, "
                  "or drop --clean-from-junit", file=sys.stderr)
            return 2
    say(f"{len(selected)} fault(s) from the catalogue, plus the clean run"
        + (f" (from {args.clean_from_junit})" if clean_totals else "") + f"; {args.jobs} pytest process(es) at once")
    # The clean run is the longest: start it first.
    jobs = ([] if clean_totals else [Job(CLEAN)]) + [Job(f.name, expected[f.name]) for f in selected]
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        done = list(pool.map(lambda j: run_job(j, places, say), jobs))

    notes: dict[str, list[str]] = {}
    broken: list[str] = []
    clean_job = Job(CLEAN) if clean_totals else done[0]
    fault_jobs = done if clean_totals else done[1:]
    for job in done:
        run = job.run
        if job.error:
            broken.append(job.label)
            notes.setdefault(job.label, []).append(job.error)
            continue
        if run is None:
            continue
        res = run.results
        if not run.finished_normally:
            broken.append(job.label)
            notes.setdefault(job.label, []).append(f"pytest exited {run.returncode}: {rel(run.log_file)}")
        if res.errors:
            notes.setdefault(job.label, []).append(
                "setup/teardown errors (not counted as failures): " + ", ".join(short_id(n) for n in res.errors))
        try:
            totals = junit_totals(run.junit_file) if run.junit_file else {}
        except ValueError as e:  # a run that was stopped leaves its report cut short: say so, count from the plugin
            totals = {}
            notes.setdefault(job.label, []).append(str(e))
        seen = len(res.passed) + len(res.failed) + len(res.errors) + len(res.skipped)
        if totals and totals["tests"] != seen:
            notes.setdefault(job.label, []).append(f"JUnit counts {totals['tests']} tests, the plugin {seen}")
        if job.label != CLEAN and job.expected:
            unexpected = [n for n in res.failed_or_errored if n not in job.expected]
            if unexpected:
                notes.setdefault(job.label, []).append("failed outside the expected: " + ", ".join(unexpected))

    clean_res = clean_job.run.results if clean_job.run else None
    if clean_totals:
        clean_failed = clean_totals["failures"] + clean_totals["errors"]
        clean_passed = clean_totals["tests"] - clean_failed - clean_totals["skipped"]
    else:
        clean_passed = len(clean_res.passed) if clean_res else 0
        clean_failed = len(clean_res.failed_or_errored) if clean_res else 0
    matrix = build_matrix(clean_passed, clean_failed,
                          {j.label: fault_entry(j.expected, j.run.results.failed if j.run and j.run.finished_normally
                                                else []) for j in fault_jobs})
    if not clean_totals and (clean_job.run is None or clean_job.error):
        matrix["clean"]["failed"] = max(1, matrix["clean"]["failed"])  # a clean run that did not run is not green
    wall = time.perf_counter() - started

    places.json_path.write_text(json.dumps(matrix, indent=2) + "\n", encoding="utf-8")
    places.md_path.write_text(render_markdown(matrix, bug_classes, notes=notes, wall_s=wall, places=places),
                              encoding="utf-8")

    print()
    print(console_table(matrix, bug_classes))
    found = problems(matrix, broken)
    if clean_res and clean_res.failed_or_errored:
        print("\nclean run failures:")
        for node in clean_res.failed_or_errored:
            print(f"  {node}: {clean_res.messages.get(node, '')}")
    for job in fault_jobs:
        entry = matrix["faults"][job.label]
        if job.run is not None and job.expected and not entry["killed"]:
            print(f"\n{job.label} survives; the end of its output ({rel(job.run.log_file)}):\n{job.run.tail(25)}")
    for label, items in notes.items():
        for item in items:
            print(f"note: {label}: {item}")
    print(f"\nwrote {rel(places.json_path)} and {rel(places.md_path)}; total wall time {wall:.1f} s")
    if found:
        print("\nkill matrix NOT clean:\n" + "\n".join(f"  - {p}" for p in found))
        return 1
    print("every fault killed; the clean app passes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
