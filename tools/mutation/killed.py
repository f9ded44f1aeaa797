"""The mutants the last scored draw killed, named exactly: what CI's small fixed sample is drawn from.

A draw over the whole population moves whenever the app or the equivalents file changes, and about one mutant in four
of the app survives the suite (the project's score, docs/mutation.md): a sample of five drawn afresh after each such
change would fail or pass by lot. CI's sample checks instead that the tooling works and that what the suite was
scored as killing stays killed: five mutants drawn, with a fixed seed, from mutation-killed.toml, each named as an
equivalent is (module, line, operator, column, replacement, `source`) with the scenario that killed it. Its gate is
the same (every one killed). The project's score is never taken from it: only from a draw nobody worked.

An entry follows its code when lines are added above it: it names the mutant of its module, operator, column,
replacement and source nearest its line. An entry whose source is nowhere in its module names nothing (stale_killed;
a test of the project lists such entries).

    python -m tools.mutation.killed reports/mutation.json   # rewrite mutation-killed.toml from a scored draw
"""

from __future__ import annotations

import json
import sys
import tomllib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from tools.mutation.population import Mutant, NamedMutant

KILLED_FILE = "mutation-killed.toml"
FIELDS = ("module", "line", "operator", "column", "replacement", "source", "killed_by")
ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Killed(NamedMutant):
    """One mutant a scored draw killed, and the scenario that killed it (its first line, for the reader)."""

    killed_by: str


def load_killed(path: Path) -> list[Killed]:
    """mutation-killed.toml: [[killed]] with every one of FIELDS; a bad entry stops the run with one line."""
    try:
        entries = tomllib.loads(path.read_text(encoding="utf-8")).get("killed", [])
        return [Killed(str(e["module"]), int(e["line"]), str(e["operator"]), int(e["column"]), str(e["replacement"]),
                       str(e["source"]), str(e["killed_by"])) for e in entries]
    except OSError as e:
        raise SystemExit(f"{path}: cannot be read ({e.strerror}); give a file of [[killed]] entries") from None
    except (tomllib.TOMLDecodeError, KeyError, TypeError, ValueError) as e:
        raise SystemExit(f"{path.name}: each [[killed]] needs {', '.join(FIELDS)} ({e})") from None


def source_lines(root: Path, entry: Killed) -> list[int]:
    """The lines of the entry's module that read its source, nearest its own line first."""
    try:
        lines = (root / entry.module).read_text(encoding="utf-8").splitlines()
    except OSError:
        return []
    found = [n for n, text in enumerate(lines, start=1) if text.strip() == entry.source]
    return sorted(found, key=lambda n: abs(n - entry.line))


def stale_killed(entries: Iterable[Killed], root: Path) -> list[Killed]:
    """The entries whose source no line of their module reads any more: they name no mutant."""
    return [e for e in entries if not source_lines(root, e)]


def named_mutants(entries: Iterable[Killed], mutants: list[Mutant], root: Path,
                  exactly: Callable[[list[Mutant]], list[Mutant]]) -> list[Mutant]:
    """The mutant each entry names, of `mutants`: of those on a line reading its source, with its operator and
    column (`exactly` fills in their replacements and sources, once for all the entries: each call starts a tool),
    the one of its replacement nearest its line."""
    candidates = []
    for entry in entries:
        lines = source_lines(root, entry)
        candidates.append((entry, [(m.module, m.ref) for m in mutants if m.module == entry.module
                                   and m.line in lines and (m.operator, m.column) == (entry.operator, entry.column)]))
    wanted = {key for _, keys in candidates for key in keys}  # (StrykerJS numbers each script's mutants anew)
    named = {(m.module, m.ref): m for m in exactly([m for m in mutants if (m.module, m.ref) in wanted])}
    found: list[Mutant] = []
    for entry, keys in candidates:
        same = sorted((named[k] for k in keys if entry.same_change(named[k])), key=lambda m: abs(m.line - entry.line))
        if same and same[0] not in found:
            found.append(same[0])
    return found


def killing_scenarios(entries: Iterable[Killed], drawn: Iterable[Mutant]) -> dict[str, list[str]]:
    """By module, the scenarios (pytest node ids) that killed the drawn mutants in the scored draw, each drawn mutant
    found by the entry of its change: a CI sample runs them first, and a mutant they no longer kill its whole area. An
    entry killed by an app that did not start names no scenario."""
    first: dict[str, list[str]] = {}
    entries = list(entries)
    for mutant in drawn:
        for entry in entries:
            if entry.same_change(mutant) and "::" in entry.killed_by \
                    and entry.killed_by not in first.get(mutant.module, []):
                first.setdefault(mutant.module, []).append(entry.killed_by)
    return first


def from_report(report: dict, root: Path = ROOT) -> list[Killed]:
    """The killed mutants of a run's reports/mutation.json whose source is still in their module."""
    killed = [Killed(m["module"], m["line"], m["operator"], m["column"], m["replacement"], m["source"],
                     m["reason"].split(": '")[0]) for m in report["mutants"] if m["status"] == "killed"]
    return [k for k in killed if source_lines(root, k)]


def toml_text(report: dict, entries: list[Killed]) -> str:
    head = (f"# The mutants the last scored draw killed (seed {report['seed']!r}, a draw of {report['sample']}), named "
            f"exactly: CI's small fixed\n# sample is drawn from these (tools/mutation/killed.py, docs/mutation.md). "
            f"Written by `python -m tools.mutation.killed`\n# from that draw's reports/mutation.json; an entry whose "
            f"source left its module was dropped.\n")
    body = []
    for k in entries:
        body.append("[[killed]]\n" + "".join(f"{name} = {json.dumps(getattr(k, name), ensure_ascii=False)}\n"
                                              for name in FIELDS))
    return head + "\n" + "\n".join(body)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m tools.mutation.killed reports/mutation.json  (a scored draw's report)", file=sys.stderr)
        return 2
    try:
        report = json.loads(Path(args[0]).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as e:
        print(f"{args[0]}: not a mutation report ({e}); give a draw's reports/mutation.json", file=sys.stderr)
        return 2
    entries = from_report(report)
    (ROOT / KILLED_FILE).write_text(toml_text(report, entries), encoding="utf-8")
    print(f"{KILLED_FILE}: {len(entries)} killed mutants of the draw with seed {report['seed']!r}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
