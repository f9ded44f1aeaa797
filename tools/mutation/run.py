"""make mutation SAMPLE=N [SEED=s]: mutation testing of the reference app with cosmic-ray and StrykerJS.

In a scratch copy of the project (the tools write each mutant into the files, so the checkout is never touched):
1. every mutant either tool can make of memchat's memory code (tools/mutation/areas.toml names the files) and of its
   page's scripts is listed; code that runs only while a catalogue fault is on is left out (tools.mutation.population);
2. SAMPLE mutants are drawn with SEED, from each tool in proportion to its mutants (with --from FILE, only from the
   mutants FILE names: CI's sample, from mutation-killed.toml, the mutants the last scored draw killed, each of which
   runs first the scenario that killed it then, and its whole area only when that one passes);
3. each drawn mutant is named exactly (its column, its replacement, the text of its line) and those an entry of
   mutation-equivalents.toml names so are not run (equivalent, with its reason); cosmic-ray runs the other Python
   mutants and StrykerJS (its command runner) the JavaScript ones, each through tools.mutation.mutant_test: the
   default run narrowed to the features that reach the file (for a Python mutant, those that ran its lines on the
   unmutated app: tools.mutation.coverage_map, measured first), stopped at the first failure, within a deadline;
4. a mutant that kept the app from starting is killed when the unmutated app started in the same run (under coverage,
   or one scenario run after the mutants), else an error;
5. reports/mutation.json and reports/mutation.md: both scores, every survivor with its diff, every error with its
   cause.

Exits 0 when the killed share of the non-equivalent mutants is at least --min-score (default 90 %), 1 otherwise, 2 on
a usage error or a tool that is not installed (`make mutation` installs both). `--population` prints, instead, what
is left out of the population and counted equivalent by rule, each with its share of the mutants (docs/mutation.md).

    memtest-mutation --sample 100 [--seed 20261204] [--min-score 90] [--keep-scratch]
    memtest-mutation --sample 5 --seed ci --from mutation-killed.toml   # CI's sample: killed stays killed
    memtest-mutation --population
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from tools.mutation import coverage_map
from tools.mutation.killed import killing_scenarios, load_killed, named_mutants, stale_killed
from tools.mutation.mutant_test import (
    AREAS,
    BASELINE_FILE,
    FIRST_FILE,
    NO_START,
    NOT_RUN,
    TIMEOUT_ENV,
    UNDER_STRYKER_ENV,
    area_for,
    change_key,
)
from tools.mutation.population import (
    ANNOTATION,
    BY_RULE,
    EQUIVALENTS_FILE,
    Equivalent,
    Mutant,
    Population,
    app_modules,
    enclosing_definition,
    load_equivalents,
    named_exactly,
    stale_equivalents,
)
from tools.mutation.report import Outcome, write_reports

ROOT = Path(__file__).resolve().parent.parent.parent
COSMIC_RAY = ROOT / ".tools" / "cosmic-ray" / "bin"
STRYKER = ROOT / ".tools" / "stryker"
DEFAULT_SEED = "20261204"
# The coverage measurement (each feature once, about 5 minutes here) pays for itself from about this many Python
# mutants: each survivor otherwise runs every feature of its area (about 2 minutes), and one no feature reaches runs
# none.
COVERAGE_PAYS = 10
JS_FILES = ("memchat/static/chat.js", "memchat/static/memories.js", "memchat/static/common.js")
# The modules left out of the population, each with why (docs/mutation.md gives each one's share of the mutants).
NOT_MUTATED = {
    "memchat/__init__.py": "the package's version string",
    "memchat/__main__.py": "`python -m memchat`: it calls cli.main and exits with its code, skipping the "
                           "interpreter's teardown; a gap (an operator reads a tool's exit code), not an equivalence",
    "memchat/faults.py": "the catalogue of faults itself: names and descriptions a fault's test reads",
    "memchat/embedded.py": "the database servers `memchat serve` starts itself when given none; the suite gives the "
                           "app its own, so no feature starts them: a gap, not an equivalence",
    "memchat/bench.py": "the app's own latency bench (`python -m memchat.bench`), a developer's tool",
    "memchat/corpus.py": "the bench's generated memories and questions",
}


def python_modules(every: bool = False) -> list[str]:
    """memchat's modules that are mutated (`every`: those left out too)."""
    return sorted(str(p.relative_to(ROOT)) for p in app_modules(ROOT)
                  if every or str(p.relative_to(ROOT)) not in NOT_MUTATED)


def scratch_copy(where: Path) -> Path:
    """The project's files (tracked or not ignored, as they are in the work tree) in a git repository of their own,
    beside the same virtual environment and tools: the mutated module is what `git diff` shows there."""
    files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                           capture_output=True, check=True).stdout
    for name in filter(None, files.decode().split("\0")):
        source = ROOT / name
        if source.is_file():
            (where / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, where / name)
    for shared in (".venv", ".tools"):
        (where / shared).symlink_to(ROOT / shared)
    git = ["git", "-c", "user.name=memtest", "-c", "user.email=memtest@localhost"]
    subprocess.run(git + ["init", "-q"], cwd=where, check=True)
    subprocess.run(git + ["add", "-A"], cwd=where, check=True)
    subprocess.run(git + ["commit", "-q", "-m", "scratch copy for mutation testing"], cwd=where, check=True)
    return where


# -- cosmic-ray ------------------------------------------------------------------------------------------------------
def cosmic_ray_config(scratch: Path, timeout_s: float, modules_mutated: list[str] | None = None,
                      name: str = "cosmic-ray") -> Path:
    config = scratch / "reports" / "mutation-work" / f"{name}.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    modules = ", ".join(json.dumps(m) for m in (python_modules() if modules_mutated is None else modules_mutated))
    config.write_text(f"""[cosmic-ray]
module-path = [{modules}]
timeout = {timeout_s + 60}
excluded-modules = []
test-command = "{scratch / '.venv' / 'bin' / 'python'} -m tools.mutation.mutant_test"

[cosmic-ray.distributor]
name = "local"
""", encoding="utf-8")
    return config


def cosmic_ray(*args: str, cwd: Path) -> str:
    proc = subprocess.run([str(COSMIC_RAY / args[0]), *args[1:]], cwd=cwd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(args[:2])} failed (exit {proc.returncode}): "
                         + " | ".join((proc.stdout + proc.stderr).strip().splitlines()[-4:]))
    return proc.stdout


def run_showing_progress(what: str, command: list[str], cwd: Path, env: dict[str, str], total: int) -> None:
    """Run a tool over the mutants, printing each mutant's outcome as its test command records it."""
    log = cwd / "reports" / "mutation-work" / f"{what}.log"
    outcomes_file = cwd / "reports" / "mutation-work" / "outcomes.jsonl"
    shown = len(outcomes(cwd))
    with log.open("w", encoding="utf-8") as out:
        proc = subprocess.Popen(command, cwd=cwd, env={**os.environ, **env}, stdout=out, stderr=subprocess.STDOUT)
        while True:
            try:
                proc.wait(timeout=5)
                finished = True
            except subprocess.TimeoutExpired:
                finished = False
            lines = outcomes_file.read_text(encoding="utf-8").splitlines() if outcomes_file.exists() else []
            for line in lines[shown:]:
                record = json.loads(line)
                shown += 1
                print(f"  [{shown}/{total}] {record['status']:8} {record['module']} ({record['seconds']:.0f} s): "
                      f"{record['reason'][:110]}", flush=True)
            if finished:
                break
    if proc.returncode != 0:
        tail = log.read_text(encoding="utf-8", errors="replace").strip().splitlines()[-4:]
        raise SystemExit(f"{what} failed (exit {proc.returncode}): " + " | ".join(tail))


def python_mutants(scratch: Path, session: Path) -> list[Mutant]:
    listed = cosmic_ray("memtest-cr-session", "list", str(session), cwd=scratch)
    mutants = []
    for line in listed.splitlines():
        item = json.loads(line)
        mutants.append(Mutant("cosmic-ray", item["job"], item["module"], item["start"][0],
                              item["operator"].split("/", 1)[1], str(item["occurrence"]), column=item["start"][1]))
    return mutants


def cosmic_ray_replacements(scratch: Path, session: Path, mutants: list[Mutant]) -> dict[str, str]:
    """Each cosmic-ray mutant's replacement by its ref: the text its mutation writes in place of what it changes, as
    its diff shows (cosmic-ray mutates the module to tell: about 20 ms a mutant, so only for those drawn)."""
    refs = [m.ref for m in mutants if m.tool == "cosmic-ray"]
    if not refs:
        return {}
    wanted = session.with_name("cosmic-ray-named.json")
    wanted.write_text(json.dumps(refs), encoding="utf-8")
    listed = cosmic_ray("memtest-cr-session", "replacements", str(session), str(wanted), cwd=scratch)
    return {item["job"]: item["replacement"] for item in map(json.loads, listed.splitlines())}


# -- StrykerJS -------------------------------------------------------------------------------------------------------
def js_mutants(scratch: Path, scripts: Iterable[str] = JS_FILES) -> list[Mutant]:
    """Every StrykerJS mutant of each script, numbered as a StrykerJS run of that file alone numbers them."""
    mutants = []
    for name in scripts:
        proc = subprocess.run(["node", str(Path(__file__).with_name("list_js_mutants.mjs")), str(STRYKER), name],
                              cwd=scratch, capture_output=True, text=True)
        if proc.returncode != 0:
            raise SystemExit(f"listing the StrykerJS mutants of {name} failed: {proc.stderr.strip()[-300:]}")
        for item in json.loads(proc.stdout):
            mutants.append(Mutant("stryker", item["id"], name, item["line"], item["mutator"], item["replacement"],
                                  column=item["column"]))
    return mutants


def run_stryker(scratch: Path, mutants: list[Mutant], timeout_s: float, env: dict[str, str],
                total: int) -> dict[str, dict]:
    """StrykerJS's command runner over each script with a mutant drawn (only those run the suite: the test command
    passes the others at once); its JSON report's mutants by id."""
    work = scratch / "reports" / "mutation-work"
    found: dict[str, dict] = {}
    for name in sorted({m.module for m in mutants}):
        (work / "stryker-sample.json").write_text(json.dumps({m.ref: name for m in mutants if m.module == name}))
        report = work / f"stryker-{Path(name).stem}.json"
        config = work / f"stryker-{Path(name).stem}.conf.json"
        config.write_text(json.dumps({
            "testRunner": "command", "commandRunner": {"command": ".venv/bin/python -m tools.mutation.mutant_test"},
            "mutate": [name], "inPlace": True, "coverageAnalysis": "off", "concurrency": 1,
            "timeoutMS": int(timeout_s * 1000) + 60_000, "timeoutFactor": 1, "reporters": ["json"],
            "jsonReporter": {"fileName": str(report)}, "tempDirName": "reports/mutation-work/stryker-tmp",
            "cleanTempDir": "always", "plugins": [], "logLevel": "warn", "fileLogLevel": "off",
            "ignorePatterns": ["reports", ".venv", ".tools", "node_modules"]}, indent=2))
        run_showing_progress(f"stryker-{Path(name).stem}",
                             [str(STRYKER / "node_modules" / ".bin" / "stryker"), "run", str(config)], scratch,
                             {**env, UNDER_STRYKER_ENV: "1"}, total)
        if not report.exists():
            raise SystemExit(f"StrykerJS on {name} wrote no report ({report})")
        for file in json.loads(report.read_text(encoding="utf-8"))["files"].values():
            for mutant in file["mutants"]:
                found[js_key(name, mutant["id"])] = mutant  # ids are numbered per script: two scripts share them
    return found


def js_key(module: str, ref: str) -> str:
    """A StrykerJS mutant's key in the outcomes: its script and its id there."""
    return f"stryker:{module}:{ref}"


def js_diff(scratch: Path, mutant: Mutant, found: dict) -> str:
    """The mutant as a unified diff of its script (StrykerJS reports the replaced range and the replacement)."""
    location = found.get("location")
    if not location:
        return f"{mutant.operator}: {mutant.detail}"
    original = (ROOT / mutant.module).read_text(encoding="utf-8").splitlines(keepends=True)
    start, end = location["start"], location["end"]
    head = original[start["line"] - 1][:start["column"] - 1]
    tail = original[end["line"] - 1][end["column"] - 1:]
    mutated = original[:start["line"] - 1] + [head + mutant.detail + tail] + original[end["line"]:]
    return "".join(difflib.unified_diff(original, mutated, f"a/{mutant.module}", f"b/{mutant.module}", n=0))


# -- the run ---------------------------------------------------------------------------------------------------------
def outcomes(scratch: Path) -> dict[str, dict]:
    path = scratch / "reports" / "mutation-work" / "outcomes.jsonl"
    if not path.exists():
        return {}
    return {r["key"]: r for r in (json.loads(ln) for ln in path.read_text(encoding="utf-8").splitlines() if ln)}


def unmutated_start(scratch: Path, measured: bool, timeout_s: float) -> tuple[bool, str]:
    """Whether the unmutated app started in this run, and how that is known: it ran every feature of the areas under
    coverage, or one scenario run now on the scratch copy (every mutant put back by its tool)."""
    if measured:
        return True, "the unmutated app ran every feature of the mutants' areas under coverage in this run"
    print("mutation: a mutant kept the app from starting: does the unmutated app start? (one scenario)", flush=True)
    proc = subprocess.run([str(scratch / ".venv" / "bin" / "python"), "-m", "tools.mutation.mutant_test",
                           "--baseline"], cwd=scratch, capture_output=True, text=True,
                          env={**os.environ, TIMEOUT_ENV: str(timeout_s)})
    found = scratch / "reports" / "mutation-work" / BASELINE_FILE
    if not found.exists():
        tail = " | ".join((proc.stdout + proc.stderr).strip().splitlines()[-3:])
        return False, f"the unmutated app's run in this run broke (exit {proc.returncode}): {tail}"
    baseline = json.loads(found.read_text(encoding="utf-8"))
    if baseline["started"]:
        return True, "the unmutated app started in this run (one scenario on it after the mutants)"
    return False, f"the unmutated app did not start in this run either: {baseline['reason']}"


def settle_no_starts(results: list[Outcome], started: bool, how: str) -> list[Outcome]:
    """A mutant that kept the app from starting is killed when the unmutated app started in the same run (users
    would have no app at all); when it did not, no run judged the mutant: an error, with both said."""
    settled = []
    for o in results:
        if o.status == "error" and o.cause == NO_START:
            o = Outcome(o.mutant, "killed", f"{o.reason}; {how}", o.diff, o.seconds) if started else \
                Outcome(o.mutant, "error", f"{o.reason}; {how}", o.diff, o.seconds, NO_START)
        settled.append(o)
    return settled


def check_installed() -> None:
    missing = [str(p.relative_to(ROOT)) for p in (COSMIC_RAY / "cosmic-ray", COSMIC_RAY / "memtest-cr-session",
                                                   STRYKER / "node_modules" / ".bin" / "stryker") if not p.exists()]
    if missing:
        raise SystemExit(f"not installed: {', '.join(missing)}; run `make mutation` (it installs cosmic-ray and "
                         "StrykerJS into .tools/)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sample", type=int, help="how many mutants to draw")
    parser.add_argument("--population", action="store_true",
                        help="print what is left out of the population or counted equivalent by rule, with each "
                             "one's share of the mutants; run nothing")
    parser.add_argument("--seed", default=DEFAULT_SEED, help=f"the draw's seed (default {DEFAULT_SEED})")
    parser.add_argument("--min-score", type=float, default=90.0,
                        help="the least killed share of the non-equivalent mutants, in %% (default 90)")
    parser.add_argument("--timeout", type=float, default=420.0, help="seconds per mutant's run (default 420)")
    parser.add_argument("--keep-scratch", action="store_true", help="leave the scratch copy (its path is printed)")
    parser.add_argument("--coverage", choices=("auto", "always", "never"), default="auto",
                        help="narrow each Python mutant to the features that ran its lines, measured first on the "
                             f"unmutated app (about 5 minutes): auto does from {COVERAGE_PAYS} Python mutants on")
    parser.add_argument("--dry-run", action="store_true", help="print the drawn mutants, run none, write no report")
    parser.add_argument("--from", dest="from_file", type=Path,
                        help="draw only from the mutants this file names (mutation-killed.toml: those the last scored "
                             "draw killed, CI's sample); the project's score never comes from such a draw")
    args = parser.parse_args(argv)
    if not args.population and (args.sample is None or args.sample < 1):
        parser.error("--sample must be at least 1")
    check_installed()
    tomllib.loads(AREAS.read_text(encoding="utf-8"))  # a broken areas file stops here, not in the first mutant
    equivalents = load_equivalents(ROOT / EQUIVALENTS_FILE)
    stale = stale_equivalents(equivalents, ROOT)
    if args.from_file and (gone := stale_killed(load_killed(args.from_file), ROOT)):
        print(f"mutation: {len(gone)} entries of {args.from_file} name code no longer in their module: they name no "
              f"mutant ({', '.join(f'{k.module}:{k.line}' for k in gone)})", flush=True)
    if stale:
        print(f"mutation: {len(stale)} entries of {EQUIVALENTS_FILE} name a line that no longer holds their source: "
              f"they apply to no mutant ({', '.join(f'{e.module}:{e.line}' for e in stale)})", flush=True)
    started = time.perf_counter()
    scratch = scratch_copy(Path(tempfile.mkdtemp(prefix="memtest-mutation-")))
    print(f"mutation: scratch copy {scratch}", flush=True)
    try:
        if args.population:
            print(population_table(scratch))
            return 0
        results = mutate(scratch, args, equivalents)
    finally:
        if not args.keep_scratch:
            shutil.rmtree(scratch, ignore_errors=True)
    if args.dry_run:
        return 0
    score = write_reports(ROOT / "reports", args.sample, args.seed, round(time.perf_counter() - started, 1), results)
    print(f"mutation: {score.summary} (reports/mutation.md)", flush=True)
    return 0 if score.percent >= args.min_score else 1


def mutate(scratch: Path, args: argparse.Namespace, equivalents: list[Equivalent]) -> list[Outcome]:
    work = scratch / "reports" / "mutation-work"
    session = work / "cosmic-ray.sqlite"
    killed = load_killed(args.from_file) if args.from_file else []
    # A draw from a file's named mutants needs only the mutants of the modules it names: the whole app's population
    # (cosmic-ray's init of every module, StrykerJS's listing of every script) took CI's sample 16 minutes under load.
    named_modules = {k.module for k in killed}
    named_python = sorted(m for m in named_modules if m.endswith(".py"))
    config = cosmic_ray_config(scratch, args.timeout, named_python or None)
    cosmic_ray("cosmic-ray", "init", str(config), str(session), cwd=scratch)
    population = Population()
    population.add(python_mutants(scratch, session), scratch)
    population.add(js_mutants(scratch, [f for f in JS_FILES if f in named_modules] if killed else JS_FILES), scratch)
    if args.from_file:
        named = named_mutants(killed, population.mutants, scratch,
                              lambda ms: named_exactly(ms, scratch, cosmic_ray_replacements(scratch, session, ms)))
        print(f"mutation: {len(named)} mutants named by {args.from_file}", flush=True)
        population = Population(mutants=named, left_out=population.left_out, by_rule=population.by_rule)
    drawn = population.draw(args.sample, args.seed)
    drawn = named_exactly(drawn, scratch, cosmic_ray_replacements(scratch, session, drawn))
    if killed:  # each drawn mutant runs first the scenario that killed it when scored (mutant_test.scenarios_first)
        (work / FIRST_FILE).write_text(json.dumps(killing_scenarios(killed, drawn)), encoding="utf-8")
    print(f"mutation: {len(population.mutants)} mutants ({population.count('cosmic-ray')} Python, "
          f"{population.count('stryker')} JavaScript; left out: "
          f"{', '.join(f'{n} {why}' for why, n in population.left_out.items()) or 'none'}); drew {len(drawn)} "
          f"with seed {args.seed!r}", flush=True)
    equivalent = {m.id: next(e for e in equivalents if e.matches(m)) for m in drawn
                  if any(e.matches(m) for e in equivalents)}
    equivalent |= {m.id: Equivalent.by_rule(m, population.by_rule[m.id]) for m in drawn
                   if m.id in population.by_rule and m.id not in equivalent}
    if args.dry_run:
        for mutant in drawn:
            print(f"  {mutant.module}:{mutant.line}:{mutant.column} {mutant.operator} -> {mutant.replacement!r} "
                  f"({mutant.tool} {mutant.ref}){' equivalent' if mutant.id in equivalent else ''}")
        return []
    to_run = [m for m in drawn if m.id not in equivalent]
    env = {"MEMTEST_MUTANT_TIMEOUT_S": str(args.timeout)}
    python = [m for m in to_run if m.tool == "cosmic-ray"]
    diffs: dict[str, str] = {}
    measured = False
    if python:
        keep = work / "cosmic-ray-sample.json"
        keep.write_text(json.dumps([m.ref for m in python]))
        cosmic_ray("memtest-cr-session", "keep", str(session), str(keep), cwd=scratch)
        if args.coverage == "always" or (args.coverage == "auto" and len(python) >= COVERAGE_PAYS):
            areas = [area_for(m.module, [m.line], (scratch / m.module).read_text(encoding="utf-8")) for m in python]
            runs = list(dict.fromkeys((f, area.target) for area in areas for f in area.features))
            coverage_map.measure(scratch, runs, work, args.timeout)
            measured = True
            (ROOT / "reports").mkdir(exist_ok=True)
            shutil.copy2(work / coverage_map.MAP_FILE, ROOT / "reports" / "mutation-coverage.json")
        print(f"mutation: cosmic-ray runs {len(python)} Python mutants", flush=True)
        run_showing_progress("cosmic-ray", [str(COSMIC_RAY / "cosmic-ray"), "exec", str(config), str(session)],
                             scratch, env, len(to_run))
        for line in cosmic_ray("memtest-cr-session", "results", str(session), cwd=scratch).splitlines():
            result = json.loads(line)
            diffs[result["job"]] = result["diff"]
    javascript = [m for m in to_run if m.tool == "stryker"]
    stryker_found: dict[str, dict] = {}
    if javascript:
        print(f"mutation: StrykerJS runs {len(javascript)} JavaScript mutants", flush=True)
        stryker_found = run_stryker(scratch, javascript, args.timeout, env, len(to_run))
    ran = outcomes(scratch)
    results = []
    for mutant in drawn:
        if mutant.id in equivalent:
            results.append(Outcome(mutant, "equivalent", equivalent[mutant.id].reason, ""))
            continue
        if mutant.tool == "cosmic-ray":
            diff = diffs.get(mutant.ref, "")
            key = change_key(mutant.module, diff)
        else:
            key = js_key(mutant.module, mutant.ref)
            diff = js_diff(scratch, mutant, stryker_found.get(key, {}))
        record = ran.get(key)
        if record is None:
            results.append(Outcome(mutant, "error", f"{NOT_RUN} (no mutation made, or the run broke before the test "
                                   "command)", diff, cause=NOT_RUN))
        else:
            results.append(Outcome(mutant, record["status"], record["reason"], diff, record.get("seconds", 0.0),
                                   record.get("cause", "")))
    if any(o.cause == NO_START for o in results):
        results = settle_no_starts(results, *unmutated_start(scratch, measured, args.timeout))
    return results


# -- what the population leaves out ----------------------------------------------------------------------------------
def population_table(scratch: Path) -> str:
    """A markdown table of what is not in the population and what is counted equivalent by rule: each module left
    out, each reason by module and function, with its mutants and their share of every mutant the tools make of the
    app (the modules left out among them)."""
    every = python_modules(every=True)
    config = cosmic_ray_config(scratch, 60.0, every, name="cosmic-ray-every")
    session = config.with_suffix(".sqlite")
    cosmic_ray("cosmic-ray", "init", str(config), str(session), cwd=scratch)
    python = python_mutants(scratch, session)
    javascript = js_mutants(scratch)
    population = Population()
    population.add([m for m in python if m.module not in NOT_MUTATED] + javascript, scratch)
    total = len(python) + len(javascript)
    rows: Counter[tuple[str, str, str]] = Counter()
    for module, why in NOT_MUTATED.items():  # each one, though it has no mutant
        rows[(module, "(the whole module)", why)] += sum(1 for m in python if m.module == module)
    by_id = {m.id: m for m in population.mutants}
    sources: dict[str, str] = {}
    for why, m in population.set_apart + [(population.by_rule[i], by_id[i]) for i in population.by_rule]:
        source = sources.setdefault(m.module, (scratch / m.module).read_text(encoding="utf-8"))
        module, where = ("memchat/*.py", "(annotations)") if why == ANNOTATION else \
            (m.module, enclosing_definition(source, m.line))
        rows[(module, where, f"{why}{' (drawn, then equivalent by rule)' if why in BY_RULE else ''}")] += 1
    lines = [f"{total} mutants ({len(python)} Python, {len(javascript)} JavaScript); in the population "
             f"{len(population.mutants)}, of which {len(population.by_rule)} equivalent by rule.", "",
             "| module | function | why | mutants | share |", "|---|---|---|---|---|"]
    for (module, where, why), n in sorted(rows.items(), key=lambda item: (-item[1], item[0])):
        share = 100 * n / total
        lines.append(f"| {module} | {where} | {why} | {n} | {share:.{1 if share >= 0.1 or not n else 2}f} % |")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
