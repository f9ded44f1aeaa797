"""Which features run each line of the reference app: measured once per mutation run, on the unmutated app.

A Python mutant changes some lines of one module. A feature that never runs those lines behaves the same with the
mutant as without it, so it cannot kill it; a mutant whose lines no feature runs survives without a run. Each feature
of the areas (tools/mutation/areas.toml) runs once, as the mutants' runs do, with coverage.py measuring every process
of memchat the suite starts (the server and each tool): started by a `sitecustomize` on their PYTHONPATH
(coverage's own subprocess support, COVERAGE_PROCESS_START), each writing its own data file, with the warm start off
(a process forked from a warm interpreter would not start coverage). The map is
`{"module": {"line": ["feature", ...]}}`, the features in the areas' order (`feature@target` for a feature an area
runs on another target than the default: the model client's lines run only on memchat-model), written to the work
folder.
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

MAP_FILE = "coverage-map.json"
SITECUSTOMIZE = "import coverage\ncoverage.process_startup()\n"


def _rc(data_file: Path) -> str:
    return f"""[run]
parallel = true
data_file = {data_file}
source = memchat
concurrency = thread
"""


def statement_heads(source: str) -> dict[int, int]:
    """Each line of a module to the first line of the innermost statement it belongs to. Coverage records a statement
    by the lines Python reports running, and a string or a call continued over several lines may report only its
    first: a mutant in a continuation line runs wherever that first line runs."""
    heads: dict[int, int] = {}

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.stmt):
                decorators = getattr(child, "decorator_list", [])
                first = min([child.lineno, *(d.lineno for d in decorators)])
                for line in range(first, (child.end_lineno or child.lineno) + 1):
                    heads[line] = child.lineno  # an inner statement, visited after, takes its own lines back
            visit(child)

    visit(ast.parse(source))
    return heads


def _lines_run(path: Path, executed: set[int]) -> list[int]:
    """The lines of the module at `path` that ran: those reported, and every line of a statement whose first line
    ran."""
    heads = statement_heads(path.read_text(encoding="utf-8"))
    return sorted(executed | {line for line, head in heads.items() if head in executed})


def run_name(feature: str, target: str | None = None) -> str:
    """A feature's run in the map: its name, and `@target` when it ran on a target other than the default."""
    return Path(feature).stem + (f"@{target}" if target else "")


def measure(root: Path, features: list[str] | list[tuple[str, str | None]], work: Path,
            timeout_s: float) -> dict[str, dict[str, list[str]]]:
    """Run each feature (or each (feature, target) pair: on that target, None the default) on the unmutated app in
    `root` under coverage; the lines of memchat each one ran."""
    import coverage  # (only the measuring run needs it)

    folder = work / "coverage"
    shutil.rmtree(folder, ignore_errors=True)
    (folder / "startup").mkdir(parents=True)
    (folder / "startup" / "sitecustomize.py").write_text(SITECUSTOMIZE, encoding="utf-8")
    by_line: dict[str, dict[str, list[str]]] = {}
    for run in features:
        feature, target = run if isinstance(run, tuple) else (run, None)
        name = run_name(feature, target)
        data = folder / name / ".coverage"
        data.parent.mkdir()
        rc = folder / name / "coveragerc"
        rc.write_text(_rc(data), encoding="utf-8")
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), str(folder / "startup")]),
               "COVERAGE_PROCESS_START": str(rc), "MEMTEST_WARM_START": "0", "PYTHONDONTWRITEBYTECODE": "1"}
        started = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "pytest", feature, *(["--target", target] if target else []),
                               "-q", "-n", "2", "-p", "no:cacheprovider",
                               "-p", "no:randomly", "--alluredir", str(folder / name / "allure"),
                               "--output", str(folder / name / "playwright")],
                              cwd=root, env=env, capture_output=True, text=True, timeout=timeout_s)
        if proc.returncode != 0:
            # every failure's message, where the line below has room for three; kept beside the project's reports, as
            # the scratch copy goes when the run ends
            log = Path(__file__).resolve().parents[2] / "reports" / f"mutation-coverage-{name}.log"
            log.parent.mkdir(parents=True, exist_ok=True)
            log.write_text(proc.stdout + proc.stderr, encoding="utf-8")
            tail = " | ".join((proc.stdout + proc.stderr).strip().splitlines()[-3:])
            raise SystemExit(f"the unmutated app's run of {feature}{f' on --target {target}' if target else ''} "
                             f"under coverage failed (exit {proc.returncode}): "
                             f"{tail}; a mutant cannot be judged against a run that fails without it (its output: "
                             f"{log})")
        combined = coverage.Coverage(data_file=str(data))
        combined.combine([str(data.parent)], keep=False)
        measured = combined.get_data()
        for path in measured.measured_files():
            module = str(Path(path).resolve().relative_to(root.resolve()))
            for line in _lines_run(Path(path), set(measured.lines(path) or [])):
                by_line.setdefault(module, {}).setdefault(str(line), []).append(name)
        print(f"mutation: coverage of the unmutated app under {feature}{f' on {target}' if target else ''}: "
              f"{sum(len(measured.lines(p) or []) for p in measured.measured_files())} lines of "
              f"{len(measured.measured_files())} modules ({time.perf_counter() - started:.0f} s)", flush=True)
    (work / MAP_FILE).write_text(json.dumps(by_line, sort_keys=True), encoding="utf-8")
    return by_line


def features_running(by_line: dict[str, dict[str, list[str]]], module: str, lines: list[int],
                     ordered: list[str], target: str | None = None) -> list[str]:
    """The features (of `ordered`, in its order) that ran any of `lines` of `module` on `target` (None: the
    default)."""
    ran = {name for line in lines for name in by_line.get(module, {}).get(str(line), [])}
    return [feature for feature in ordered if run_name(feature, target) in ran]
