"""The long form of the generated sessions, for nightly use: RUNS seeds, each a child pytest of the long-form scenario
(hundreds of actions by several users), JOBS at a time. Prints a table of every run (result, time) and what was drawn
in all (action kinds, character classes, value shapes, edges, facts told) and writes reports/long-sessions/summary.json;
fails if any run failed.

    python tools/long_sessions.py --runs 20 [--first-seed 1] [--jobs 2] [--target NAME] [--faults a,b]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

from tools.suite_runs import ROOT, SuiteRun, format_table, rel

OUT = ROOT / "reports" / "long-sessions"
COUNTED = ("action kinds", "character classes", "value shapes", "boundaries", "facts told")  # a plan's counts
SUMMARIES = ROOT / "reports" / "generated-sessions"


def run_seed(seed: int, target: str | None, faults: str | None) -> dict:
    args = ["features/generated_sessions.feature", "-m", "long_form", "--long-form", "--seed", str(seed),
            "--alluredir", str(OUT / f"allure-results-{seed}"), "--clean-alluredir",
            "--output", str(OUT / f"playwright-{seed}")]
    args += ["--target", target] if target else []
    args += ["--faults", faults] if faults else []
    run = SuiteRun(f"seed {seed}", args, OUT / f"results-{seed}.jsonl", OUT / f"seed-{seed}.log").run()
    found = sorted(SUMMARIES.glob(f"*-seed{seed}-*.json"), key=lambda p: p.stat().st_mtime)
    summary = json.loads(found[-1].read_text()) if found and run.finished_normally else {}
    return {"seed": seed, "exit": run.returncode, "wall_s": round(run.wall_s, 1), "log": rel(run.log_file),
            **summary}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--first-seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--target")
    parser.add_argument("--faults")
    opts = parser.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    for old in SUMMARIES.glob("*-seed*-*.json"):
        old.unlink()
    seeds = range(opts.first_seed, opts.first_seed + opts.runs)
    with ThreadPoolExecutor(max_workers=max(1, opts.jobs)) as pool:
        runs = list(pool.map(lambda s: run_seed(s, opts.target, opts.faults), seeds))
    drawn: dict[str, Counter[str]] = {what: Counter() for what in COUNTED}
    for r in runs:
        for what, counter in drawn.items():
            counter.update(r.get(what, {}))
    rows = [(r["seed"], "passed" if r.get("passed") else f"FAILED (exit {r['exit']})", r.get("actions", "?"),
             r.get("seconds", "?"), r["wall_s"], r["log"]) for r in runs]
    print(format_table(("seed", "result", "actions", "session s", "wall s", "log"), rows))
    print()
    for what, counter in drawn.items():
        print(f"{what}:", json.dumps(dict(sorted(counter.items())), ensure_ascii=False))
    for r in runs:
        if not r.get("passed"):
            print(f"\nseed {r['seed']}: {r.get('difference') or 'the run broke, see ' + r['log']}")
    passed = sum(1 for r in runs if r.get("passed"))
    (OUT / "summary.json").write_text(json.dumps({"runs": runs, "passed": passed,
                                                  **{what: dict(c) for what, c in drawn.items()}}, indent=2,
                                                 ensure_ascii=False) + "\n")
    print(f"\nlong sessions: {passed} of {len(runs)} passed; {rel(OUT / 'summary.json')}")
    return 0 if passed == len(runs) else 1


if __name__ == "__main__":
    sys.exit(main())
