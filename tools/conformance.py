"""The conformance table: every scenario (and example) against every target in targets/, from each target's latest
full run, with each target's kill matrix.

A target's run is its JUnit XML under reports/: `reports/<target>/junit.xml`; for a target named `<app>-<variant>`
whose runs live with its app's, `reports/<app>/junit-<variant>.xml` (make test-open-webui writes both of its
configurations so); for the default target, the main job's `reports/junit.xml`. A target without one is run first:
`make test-<target>` where the Makefile has it, else `pytest features --target <target>` into `reports/<target>/`.
A cell is passed, skipped (with its one-line reason), known defect (a strict expected failure, with its line), failed
(with its first line), or not run (the target's run has no such test: an example of a change it does not declare).
The app and its version come from the run's Allure environment (beside its JUnit), the date from the JUnit; the kill
matrix from reports/kill-matrix[-<target>].json, or "not run".

Writes reports/conformance/index.html, conformance.md and conformance.json; exits 1 when a run failed to produce
its JUnit, 0 otherwise (failed cells are what the table is for).

    python tools/conformance.py [--targets memchat,letta] [--no-run]
"""

from __future__ import annotations

import argparse
import html
import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from harness.app.target import DEFAULT_TARGET, TargetError, load_target
from harness.suite.known_defects import OBSERVED
from harness.suite.scenarios import FEATURES, feature_scenarios, node_title

ROOT = Path(__file__).resolve().parent.parent
REPORTS = ROOT / "reports"
OUT = REPORTS / "conformance"
TARGETS = ROOT / "targets"
STATUSES = ("passed", "skipped", "known defect", "failed")
NOT_RUN = "not run"
DECLARED, OBSERVED_LINE = "declared: ", "observed: "  # the first lines of a known defect that failed otherwise


@dataclass(frozen=True)
class Cell:
    status: str  # one of STATUSES
    line: str = ""  # the reason, defect or failure, one line
    observed: str = ""  # a known defect's (or a failed one's): the step it failed at and the message's first line


@dataclass
class TargetRun:
    name: str
    app: str = ""
    run_at: str = ""
    junit: str = ""
    kill_matrix: dict | str = NOT_RUN
    results: dict[str, Cell] = field(default_factory=dict)
    problem: str = ""  # why there is no run to read


# -- where a target's runs are -----------------------------------------------------------------------------------------
def junit_places(name: str, default: bool) -> list[Path]:
    places = [REPORTS / name / "junit.xml"]
    if "-" in name:
        app, variant = name.rsplit("-", 1)
        places.append(REPORTS / app / f"junit-{variant}.xml")
    if default:
        places.append(REPORTS / "junit.xml")
    return places


def allure_environment(junit: Path) -> dict[str, str]:
    """The Allure environment written beside a JUnit file by the same run (its allure-results[-variant] folder)."""
    suffix = junit.stem.removeprefix("junit")
    properties = junit.parent / f"allure-results{suffix}" / "environment.properties"
    if not properties.is_file():
        return {}
    pairs = (line.partition("=") for line in properties.read_text(encoding="utf-8").splitlines())
    return {key: value for key, _, value in pairs if key}


def kill_matrix_of(name: str, default: bool) -> dict | str:
    path = REPORTS / ("kill-matrix.json" if default else f"kill-matrix-{name}.json")
    if not path.is_file():
        return NOT_RUN
    matrix = json.loads(path.read_text(encoding="utf-8"))
    faults = matrix.get("faults", {})
    return {"date": datetime.fromtimestamp(path.stat().st_mtime, UTC).isoformat(timespec="seconds"),
            "killed": sum(1 for f in faults.values() if f.get("killed")), "faults": len(faults),
            "clean": matrix.get("clean", {})}


# -- reading a run -----------------------------------------------------------------------------------------------------
def first_line(text: str | None) -> str:
    return next((line.strip() for line in (text or "").splitlines() if line.strip()), "")


def node_id(case: ET.Element) -> str:
    """The pytest node id of a JUnit test case of a feature (`features.x.feature` + `test_y[z]`)."""
    classname = case.get("classname", "")
    path = classname.removesuffix(".feature").replace(".", "/") + ".feature" if classname.endswith(".feature") \
        else classname.replace(".", "/") + ".py"
    return f"{path}::{case.get('name', '')}"


def cell_of(case: ET.Element) -> Cell:
    for child in case:
        if child.tag in ("failure", "error"):
            message = child.get("message") or child.text or ""
            if message.startswith(DECLARED):  # a known defect that failed otherwise than declared
                lines = message.splitlines()
                observed = next((line for line in lines if line.startswith(OBSERVED_LINE)), "")
                return Cell("failed", lines[0], observed.removeprefix(OBSERVED_LINE))
            return Cell("failed", first_line(message))
        if child.tag == "skipped":
            reason = first_line(child.get("message"))
            if child.get("type") == "pytest.xfail":
                line, _, observed = reason.partition(OBSERVED)
                return Cell("known defect", line, observed)
            return Cell("skipped", reason.removeprefix("Skipped: "))
    return Cell("passed")


def read_junit(path: Path) -> tuple[str, dict[str, Cell]]:
    """(when the run started, each feature test's cell); a file that is not JUnit XML raises ValueError."""
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as e:
        raise ValueError(f"{path} is not a JUnit XML report ({e})") from None
    suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
    started = next((s.get("timestamp", "") for s in suites if s.get("timestamp")), "")
    cells = {}
    for suite in suites:
        for case in suite.iter("testcase"):
            nodeid = node_id(case)
            if nodeid.startswith("features/"):
                cells[nodeid] = cell_of(case)
    return started, cells


def run_target(name: str, default: bool) -> None:
    """The target's full run, as its make target does it, or the suite's features against it."""
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    if f"\ntest-{name}:" in makefile:
        command = ["make", f"test-{name}"]
    else:
        out = REPORTS / name
        command = [sys.executable, "-m", "pytest", "features", "--target", name, "-m", "not more_seeds", "-n",
                   os.environ.get("N", "2"), "-p", "no:cacheprovider", f"--junitxml={out / 'junit.xml'}",
                   f"--alluredir={out / 'allure-results'}", "--clean-alluredir", f"--output={out / 'playwright'}"]
    print(f"conformance: {name} has no run yet: {' '.join(command[2:] if command[0] == sys.executable else command)}",
          flush=True)
    subprocess.run(command, cwd=ROOT, check=False)


def read_target(name: str, run: bool) -> TargetRun:
    default = (TARGETS / f"{name}.toml").resolve() == DEFAULT_TARGET.resolve()
    found = next((p for p in junit_places(name, default) if p.is_file()), None)
    if found is None and run:
        run_target(name, default)
        found = next((p for p in junit_places(name, default) if p.is_file()), None)
    result = TargetRun(name, kill_matrix=kill_matrix_of(name, default))
    if found is None:
        result.problem = f"no run: none of {', '.join(str(p.relative_to(ROOT)) for p in junit_places(name, default))}"
        return result
    result.junit = str(found.relative_to(ROOT))
    result.run_at, result.results = read_junit(found)
    result.app = allure_environment(found).get("App", "")
    return result


# -- the table ---------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Row:
    node: str
    feature: str
    title: str
    example: str


def rows_of(runs: list[TargetRun]) -> list[Row]:
    """Every test any target ran, in the order of the feature files and their scenarios."""
    order: dict[tuple[str, str], int] = {}
    for path in sorted(FEATURES.glob("*.feature")):
        for scenario in feature_scenarios(path):
            order[(path.name, scenario.title)] = len(order)
    rows = []
    for node in dict.fromkeys(n for run in runs for n in run.results):
        ref = node_title(node)
        example = node.partition("[")[2].removesuffix("]")
        feature, title = (ref.feature, ref.title) if ref else (node.partition("::")[0], node.partition("::")[2])
        rows.append(Row(node, feature, title, example))
    return sorted(rows, key=lambda r: (order.get((r.feature, r.title), len(order)), r.feature, r.example))


def cell_text(cell: Cell | None) -> str:
    if cell is None:
        return NOT_RUN
    text = f"{cell.status}: {cell.line}" if cell.line else cell.status
    return f"{text} (observed: {cell.observed})" if cell.observed else text


def markdown(runs: list[TargetRun], rows: list[Row], made: str) -> str:
    lines = ["# Conformance: every scenario against every target", "",
             f"Made {made} by `make conformance` from each target's latest full run.", "",
             "| target | app | run | passed | skipped | known defects | failed | kill matrix |",
             "|---|---|---|---|---|---|---|---|"]
    for run in runs:
        counts = {s: sum(1 for c in run.results.values() if c.status == s) for s in STATUSES}
        lines.append(f"| {run.name} | {run.app or '?'} | {run.run_at or run.problem} | {counts['passed']} | "
                     f"{counts['skipped']} | {counts['known defect']} | {counts['failed']} | "
                     f"{kill_matrix_text(run.kill_matrix)} |")
    lines += ["", "| scenario | " + " | ".join(r.name for r in runs) + " |",
              "|---|" + "---|" * len(runs)]
    for row in rows:
        label = f"{row.feature}: {row.title}" + (f" [{row.example}]" if row.example else "")
        cells = [cell_text(run.results.get(row.node)).replace("|", "\\|") for run in runs]
        lines.append(f"| {label.replace('|', chr(92) + '|')} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def kill_matrix_text(entry: dict | str) -> str:
    if isinstance(entry, str):
        return entry
    clean = entry.get("clean", {})
    return (f"{entry['killed']} of {entry['faults']} faults killed, clean {clean.get('passed', '?')} passed "
            f"{clean.get('failed', '?')} failed ({entry['date']})")


def page(runs: list[TargetRun], rows: list[Row], made: str) -> str:
    colours = {"passed": "#d8f0d8", "skipped": "#eeeeee", "known defect": "#fbe9c6", "failed": "#f6cccc",
               NOT_RUN: "#ffffff"}
    head = "".join(f"<th>{html.escape(r.name)}<br><small>{html.escape(r.app or '?')}<br>"
                   f"{html.escape(r.run_at or r.problem)}<br>"
                   f"kill matrix: {html.escape(kill_matrix_text(r.kill_matrix))}</small></th>" for r in runs)
    body = []
    for row in rows:
        label = f"{row.feature}: {row.title}" + (f" [{row.example}]" if row.example else "")
        cells = []
        for run in runs:
            cell = run.results.get(row.node)
            status = cell.status if cell else NOT_RUN
            line = f"<br><small>{html.escape(cell.line)}</small>" if cell and cell.line else ""
            if cell and cell.observed:
                line += f"<br><small><b>observed:</b> {html.escape(cell.observed)}</small>"
            cells.append(f'<td style="background:{colours[status]}">{status}{line}</td>')
        body.append(f"<tr><th>{html.escape(label)}</th>{''.join(cells)}</tr>")
    return ("<!doctype html><meta charset=utf-8><title>Conformance</title>"
            "<style>body{font:14px sans-serif}table{border-collapse:collapse}td,th{border:1px solid #bbb;"
            "padding:4px;vertical-align:top;text-align:left}td{max-width:22em}</style>"
            f"<h1>Every scenario against every target</h1><p>Made {html.escape(made)} by <code>make conformance"
            f"</code> from each target's latest full run.</p><table><tr><th>scenario</th>{head}</tr>"
            + "".join(body) + "</table>\n")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--targets", help="comma-separated target names (default: every file in targets/)")
    ap.add_argument("--no-run", action="store_true", help="read the runs there are; run none")
    args = ap.parse_args(argv)
    default = DEFAULT_TARGET.resolve().stem
    names = args.targets.split(",") if args.targets else sorted((p.stem for p in TARGETS.glob("*.toml")),
                                                                key=lambda name: (name != default, name))
    for name in names:
        try:
            load_target(name)
        except TargetError as e:
            print(f"conformance: {e}", file=sys.stderr)
            return 2
    runs = [read_target(name, not args.no_run) for name in names]
    rows = rows_of(runs)
    made = datetime.now(UTC).isoformat(timespec="seconds")
    OUT.mkdir(parents=True, exist_ok=True)
    data = {"made": made, "targets": [{**asdict(run), "results": {n: asdict(c) for n, c in run.results.items()}}
                                      for run in runs],
            "scenarios": [asdict(row) for row in rows]}
    (OUT / "conformance.json").write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    (OUT / "conformance.md").write_text(markdown(runs, rows, made), encoding="utf-8")
    (OUT / "index.html").write_text(page(runs, rows, made), encoding="utf-8")
    print(f"conformance: {len(rows)} scenarios against {len(runs)} targets: {OUT.relative_to(ROOT)}/index.html")
    missing = [f"{run.name}: {run.problem}" for run in runs if run.problem]
    for line in missing:
        print(f"conformance: {line}", file=sys.stderr)
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
