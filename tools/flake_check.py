"""Flake check: run the clean acceptance suite several times in random order and list every scenario that failed.

Each run is `pytest features -n 2 -p randomly --randomly-seed=S`: pytest.ini switches pytest-randomly off with
`-p no:randomly` in addopts, and a later `-p randomly` on the command line switches it on again (pytest 9 unblocks a
plugin named by -p after an earlier no:). The tool checks that the order really changed: the plugin tools.suite_runs
records the order each process runs its items in.

Every run keeps its Allure results (allure-results/), Playwright traces and screenshots of failures (playwright/),
pytest output, JUnit XML and records under reports/flake-check/run-<i>/; the folders of the runs in which something
failed are named in the console output and in reports/flake-check.md.

Writes reports/flake-check.json ({"runs": N, "flaky": {node id: failures}}) and reports/flake-check.md; exits 1 when
any scenario failed in any run (or a run broke).

    python tools/flake_check.py --runs 10 [-n 2]
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from tools.suite_runs import SuiteRun, collect, format_table, rel, short_id

ROOT = Path(__file__).resolve().parent.parent

REPORTS = ROOT / "reports"
OUT = REPORTS / "flake-check"
JSON_PATH = REPORTS / "flake-check.json"
MD_PATH = REPORTS / "flake-check.md"


# -- pure parts --------------------------------------------------------------------------------------------------------
def aggregate_flaky(failures_per_run: Sequence[Sequence[str]]) -> dict[str, int]:
    """node id -> in how many runs it failed (each run counts once), for every node id that failed at least once;
    most failures first, then by node id."""
    counts = Counter(node for run in failures_per_run for node in set(run))
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def flake_report(runs: int, flaky: dict[str, int]) -> dict:
    return {"runs": runs, "flaky": dict(flaky)}


@dataclass
class RunSummary:
    index: int
    seed: int
    passed: int
    failed: list[str]
    returncode: int | None
    wall_s: float
    folder: str
    reordered: bool | None  # None: the order could not be read


def render_markdown(report: dict, summaries: Sequence[RunSummary], workers: int) -> str:
    lines = ["# Flake check", "",
             f"{report['runs']} run(s) of the clean suite, each `pytest features -n {workers} -p randomly "
             f"--randomly-seed=SEED`.", ""]
    if report["flaky"]:
        lines += ["| Scenario | Failed in | Runs that failed it |", "|---|---|---|"]
        for node, count in report["flaky"].items():
            where = ", ".join(f"`{s.folder}` (seed {s.seed})" for s in summaries if node in s.failed)
            kind = "every run" if count == report["runs"] else f"{count} of {report['runs']}"
            lines.append(f"| `{node}` | {kind} | {where} |")
        lines += ["", "The failing runs' Allure results are kept in `<run folder>/allure-results` (Playwright traces "
                      "in `<run folder>/playwright`)."]
    else:
        lines.append("No scenario failed in any run.")
    lines += ["", "| Run | Seed | Passed | Failed | Exit | Wall (s) | Order shuffled | Folder |",
              "|---|---|---|---|---|---|---|---|"]
    for s in summaries:
        shuffled = {True: "yes", False: "**no**", None: "?"}[s.reordered]
        lines.append(f"| {s.index} | {s.seed} | {s.passed} | {len(s.failed)} | {s.returncode} | {s.wall_s:.0f} | "
                     f"{shuffled} | `{s.folder}` |")
    lines.append("")
    lines.append("Replay a run's order: `pytest features -n 2 -p randomly --randomly-seed=SEED`.")
    return "\n".join(lines) + "\n"


# -- running -----------------------------------------------------------------------------------------------------------
def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=10, help="how many runs (default 10)")
    ap.add_argument("-n", "--workers", type=int, default=2, help="xdist workers per run (default 2)")
    ap.add_argument("--seed", type=int, help="seed of the seeds (default: random); run i uses a seed drawn from it")
    args = ap.parse_args(argv)
    if args.runs < 1 or args.workers < 1:
        ap.error("--runs and -n must be at least 1")

    started = time.perf_counter()

    def say(text: str) -> None:
        print(f"[{time.perf_counter() - started:6.1f}s] {text}", flush=True)

    seeds = random.Random(args.seed)
    default_order = collect(["features"])
    shutil.rmtree(OUT, ignore_errors=True)
    OUT.mkdir(parents=True)
    say(f"{args.runs} run(s) of {len(default_order)} scenarios, -n {args.workers}, random order")

    summaries: list[RunSummary] = []
    broken: list[str] = []
    for i in range(1, args.runs + 1):
        folder = OUT / f"run-{i}"
        seed = seeds.randrange(1, 2**31)
        run = SuiteRun(f"run-{i}", ["features", "-n", str(args.workers), "-p", "randomly", f"--randomly-seed={seed}",
                                    "-q", "--tb=short", "--alluredir", str(folder / "allure-results"),
                                    "--clean-alluredir", "--output", str(folder / "playwright")],
                       results_file=folder / "results.jsonl", log_file=folder / "pytest.log",
                       junit_file=folder / "junit.xml")
        say(f"run {i}/{args.runs}: seed {seed}")
        run.run()
        res = run.results
        failed = res.failed_or_errored
        orders = [o for o in res.orders.values() if o]
        reordered = None if not orders else any(o != default_order for o in orders)
        if not run.finished_normally:
            broken.append(f"run {i} exited {run.returncode} (see {rel(run.log_file)})")
        summaries.append(RunSummary(i, seed, len(res.passed), failed, run.returncode, run.wall_s, rel(folder),
                                    reordered))
        say(f"run {i}: {len(res.passed)} passed, {len(failed)} failed, exit {run.returncode}, {run.wall_s:.1f} s"
            + ("" if reordered else " (WARNING: the order was not shuffled)" if reordered is False else ""))
        for node in failed:
            say(f"  failed: {node}: {res.messages.get(node, '')[:300]}")
        if failed:
            say(f"  its Allure results: {rel(folder / 'allure-results')}")

    flaky = aggregate_flaky([s.failed for s in summaries])
    report = flake_report(args.runs, flaky)
    JSON_PATH.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    MD_PATH.write_text(render_markdown(report, summaries, args.workers), encoding="utf-8")

    print()
    print(format_table(["run", "seed", "passed", "failed", "exit", "wall s", "shuffled", "folder"],
                       [[s.index, s.seed, s.passed, len(s.failed), s.returncode, f"{s.wall_s:.0f}",
                         {True: "yes", False: "NO", None: "?"}[s.reordered], s.folder] for s in summaries]))
    if flaky:
        print("\nscenarios that failed at least once:")
        print(format_table(["scenario", "failed in", "runs (Allure results kept there)"],
                           [[short_id(n), f"{c}/{args.runs}",
                             ", ".join(s.folder for s in summaries if n in s.failed)] for n, c in flaky.items()]))
    not_shuffled = [s.index for s in summaries if s.reordered is False]
    if not_shuffled:
        print(f"\nWARNING: runs {not_shuffled} ran in the default order: pytest-randomly was not active")
    for line in broken:
        print(f"broken: {line}")
    print(f"\nwrote {rel(JSON_PATH)} and {rel(MD_PATH)}; total wall time {time.perf_counter() - started:.1f} s")
    if flaky or broken or not_shuffled:
        print("flake check NOT clean")
        return 1
    print(f"no scenario failed in {args.runs} random-order run(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
