"""Sharding the acceptance suite across CI machines, and one report from the shards.

    python tools/shards.py run --shards 3 [--jobs 1] [-- PYTEST_ARGS]   all shards here, then merge and check (ci-sim)
    python tools/shards.py check --junit A.xml B.xml ... [--report DIR] [-- PYTEST_ARGS]   the union is the suite
    python tools/shards.py merge --results DIR ... --report OUT [--history FILE]   one Allure report, with history

Shards are pytest-split's (`--splits N --group I`, durations from ci/durations.json, refreshed by `make durations`).
The check reads the shards' JUnit files: every scenario that `pytest features --collect-only` selects (with the same
PYTEST_ARGS) ran in exactly one shard, and nothing else ran. The merge builds one report with Allure 3 from all the
shards' results folders, carrying its history file (allurerc's historyPath) from the previous pipeline when one is
given; the check with --report also counts the report's tests: each scenario exactly once.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from tools.suite_runs import ROOT, collect, rel

ALLURE = ROOT / ".tools" / "allure" / "node_modules" / ".bin" / "allure"
ALLURERC = ROOT / "allurerc.json"


def junit_address(nodeid: str) -> tuple[str, str]:
    """(classname, name) as pytest's JUnit XML writes a node id (its mangle_test_address)."""
    path, bracket, params = nodeid.partition("[")
    names = path.split("::")
    names[0] = re.sub(r"\.py$", "", names[0].replace("/", "."))
    names[-1] += bracket + params
    return ".".join(names[:-1]), names[-1]


def junit_cases(path: Path) -> list[tuple[str, str]]:
    return [(case.get("classname", ""), case.get("name", "")) for case in ET.parse(path).getroot().iter("testcase")]


def union_problems(collected: Sequence[str], junit_files: Sequence[Path]) -> list[str]:
    """What keeps the shards' union from being exactly the collected suite: lost, run twice, or not in the suite."""
    ran = Counter(case for path in junit_files for case in junit_cases(path))
    expected = {junit_address(n): n for n in collected}
    problems = [f"lost (in no shard): {n}" for address, n in expected.items() if address not in ran]
    problems += [f"run {count} times: {'::'.join(a)}" for a, count in ran.items() if count > 1]
    problems += [f"not in the collected suite: {'::'.join(a)}" for a in ran if a not in expected]
    return problems


def check(junit_files: Sequence[Path], pytest_args: Sequence[str], label: str, report: Path | None = None) -> int:
    missing = [str(p) for p in junit_files if not p.is_file()]
    if missing:
        print(f"{label}: no JUnit file {', '.join(missing)} (did every shard run?)", file=sys.stderr)
        return 1
    collected = collect(["features", *pytest_args])
    problems = union_problems(collected, junit_files)
    if report is not None:
        problems += report_problems(report, len(collected))
    for problem in problems:
        print(f"{label}: {problem}", file=sys.stderr)
    if problems or not collected:
        print(f"{label}: the union of {len(junit_files)} shards is not the suite of {len(collected)} scenarios",
              file=sys.stderr)
        return 1
    print(f"{label}: {len(collected)} scenarios in {len(junit_files)} shards, union ok")
    return 0


def merge(results: Sequence[Path], report: Path, history: Path | None) -> int:
    """One Allure 3 report from the shards' results folders. With `history`, the report's history file is read from
    there (when a previous pipeline left one) and written back there with this run appended."""
    if not ALLURE.exists():
        print(f"merge: Allure 3 is not installed: run make {ALLURE.relative_to(ROOT)}", file=sys.stderr)
        return 1
    missing = [str(p) for p in results if not p.is_dir()]
    if missing:
        print(f"merge: no results folder {', '.join(missing)} (did every shard run?)", file=sys.stderr)
        return 1
    config = json.loads(ALLURERC.read_text(encoding="utf-8"))
    if history is not None:
        history.parent.mkdir(parents=True, exist_ok=True)
        config["historyPath"] = str(history.resolve())
    shutil.rmtree(report, ignore_errors=True)  # allure generate leaves an earlier report's files in place
    report.parent.mkdir(parents=True, exist_ok=True)
    rc = report.parent / f"{report.name}.allurerc.json"
    rc.write_text(json.dumps(config, indent=2), encoding="utf-8")
    proc = subprocess.run([str(ALLURE), "generate", *map(str, results), "-o", str(report), "--config", str(rc)],
                          cwd=ROOT, capture_output=True, text=True)
    if proc.returncode != 0:
        print(f"merge: allure generate failed: {(proc.stdout + proc.stderr).strip()}", file=sys.stderr)
        return 1
    print(f"merge: {len(report_tests(report))} scenarios from {len(results)} shards in {rel(report)}/index.html"
          + (f"; history of {len(history.read_text().splitlines())} runs in {rel(history)}" if history else ""))
    return 0


def report_tests(report: Path) -> list[dict]:
    return [json.loads(p.read_text(encoding="utf-8")) for p in (report / "data" / "test-results").glob("*.json")]


def report_problems(report: Path, scenarios: int) -> list[str]:
    """The merged report holds each scenario once: as many tests as scenarios, none with a retry (Allure folds results
    of one scenario, by historyId, into one test with retries)."""
    tests = report_tests(report)
    problems = [f"the report holds {len(tests)} tests for {scenarios} scenarios"] if len(tests) != scenarios else []
    problems += [f"in the report more than once (as retries): {t['fullName']}" for t in tests if t.get("retriesCount")]
    return problems


def run_shards(shards: int, jobs: int, out: Path, pytest_args: Sequence[str]) -> int:
    """ci-sim: each shard a separate pytest process with its own results, as on separate CI machines."""
    for old in [*out.glob("shard-*"), out / "allure"]:  # not out/history: it carries over between runs
        if old.exists():  # a first run (a fresh clone) has none
            shutil.rmtree(old)

    def shard(group: int) -> tuple[int, int, float]:
        place = out / f"shard-{group}"
        place.mkdir(parents=True)
        command = [sys.executable, "-m", "pytest", "features", "-p", "no:cacheprovider", "-q",
                   "--splits", str(shards), "--group", str(group), "--junitxml", str(place / "junit.xml"),
                   "--alluredir", str(place / "allure-results"), "--clean-alluredir",
                   "--output", str(place / "playwright"), *pytest_args]
        started = time.perf_counter()
        with (place / "pytest.log").open("w", encoding="utf-8") as log:
            rc = subprocess.run(command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT).returncode
        return group, rc, time.perf_counter() - started

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        finished = list(pool.map(shard, range(1, shards + 1)))
    for group, rc, seconds in finished:
        print(f"ci-sim: shard {group}/{shards} exit {rc} in {seconds:.0f} s ({rel(out)}/shard-{group}/pytest.log)")
    groups = range(1, shards + 1)
    status = merge([out / f"shard-{g}" / "allure-results" for g in groups], out / "allure",
                   out / "history" / "history.jsonl")
    status |= check([out / f"shard-{g}" / "junit.xml" for g in groups], pytest_args, "ci-sim", report=out / "allure")
    return status or max(rc for _, rc, _ in finished)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    pytest_args = argv[argv.index("--") + 1:] if "--" in argv else []
    argv = argv[:argv.index("--")] if "--" in argv else argv
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run")
    run.add_argument("--shards", type=int, default=3)
    run.add_argument("--jobs", type=int, default=1, help="shards at once (1: one after another)")
    run.add_argument("--out", type=Path, default=ROOT / "reports" / "ci-sim")
    chk = sub.add_parser("check")
    chk.add_argument("--junit", type=Path, nargs="+", required=True)
    chk.add_argument("--label", default="shards")
    chk.add_argument("--report", type=Path, default=None, help="also check the merged Allure report")
    mrg = sub.add_parser("merge")
    mrg.add_argument("--results", type=Path, nargs="+", required=True)
    mrg.add_argument("--report", type=Path, default=ROOT / "reports" / "allure")
    mrg.add_argument("--history", type=Path, default=None)
    args = parser.parse_args(argv)
    if args.command == "run":
        if args.shards < 1 or args.jobs < 1:
            parser.error("--shards and --jobs take a whole number from 1")
        return run_shards(args.shards, args.jobs, args.out, pytest_args)
    if args.command == "check":
        return check(args.junit, pytest_args, args.label, args.report)
    return merge(args.results, args.report, args.history)


if __name__ == "__main__":
    sys.exit(main())
