"""Where a scenario's time goes: the same phases timed through the suite and in the bare Playwright script.

The suite's phases are its Gherkin steps, read from the Allure results of each repetition (their start and stop),
plus what is outside the steps (fixtures: setup and teardown, and the report); the bare script times its own code
under the same step names. `phase_rows` lines them up, median of the timed repetitions (the first is a warm-up).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from tools.suite_runs import median

OUTSIDE_STEPS = "outside the steps (fixtures, report; bare: user clean-up)"


class Phases:
    """Seconds per named phase of one run, in the order they first ran."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    @contextmanager
    def __call__(self, name: str) -> Iterator[None]:
        started = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[name] = self.seconds.get(name, 0.0) + time.perf_counter() - started


def suite_phases(allure_dir: Path, protocol_s: Sequence[float]) -> list[dict[str, float]]:
    """Each repetition's step seconds by step name, in repetition order (by start time), with the time of its
    runtest protocol outside the steps."""
    results = []
    for path in allure_dir.glob("*-result.json"):
        result = json.loads(path.read_text(encoding="utf-8"))
        results.append(result)
    results.sort(key=lambda r: r.get("start", 0))
    if len(results) != len(protocol_s):
        raise RuntimeError(f"{allure_dir} holds {len(results)} Allure results for {len(protocol_s)} repetitions; "
                           "run the bench again with a clean reports/bench")
    runs = []
    for result, total in zip(results, protocol_s, strict=True):
        steps: dict[str, float] = {}
        for step in result.get("steps", []):
            steps[step["name"]] = steps.get(step["name"], 0.0) + (step["stop"] - step["start"]) / 1000
        steps[OUTSIDE_STEPS] = max(0.0, total - sum(steps.values()))
        runs.append(steps)
    return runs


def phase_rows(suite_runs: Sequence[dict[str, float]], bare_runs: Sequence[dict[str, float]]) -> list[dict]:
    """One row per phase: the median ms of the timed repetitions (warm-up left out) in each, and the difference."""
    timed_suite, timed_bare = suite_runs[1:] or suite_runs, bare_runs[1:] or bare_runs
    names = list(dict.fromkeys([*(n for run in timed_suite for n in run), *(n for run in timed_bare for n in run)]))
    names.sort(key=lambda n: n == OUTSIDE_STEPS)  # the steps in scenario order, then what is outside them
    rows = []
    for name in names:
        suite_ms = median([run.get(name, 0.0) for run in timed_suite]) * 1000
        bare_ms = median([run.get(name, 0.0) for run in timed_bare]) * 1000
        rows.append({"phase": name, "suite_ms": round(suite_ms), "bare_ms": round(bare_ms),
                     "extra_ms": round(suite_ms - bare_ms)})
    return rows
