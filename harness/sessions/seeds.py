"""The seeds the default run acts out (harness/sessions/seeds.toml): the regression seeds first, each with when it
was found, on which target and what it found, then the fixed seeds; the seed an exploration draws from the date; and
the command that writes a seed an exploration found a difference with into the file (a person commits it):

    python -m harness.sessions.seeds found --seed 20261206 [--reports reports/generated-sessions]"""

from __future__ import annotations

import argparse
import datetime
import json
import tomllib
from dataclasses import dataclass
from pathlib import Path

SEEDS_FILE = Path(__file__).with_name("seeds.toml")


class SeedsError(ValueError):
    """One line: what is wrong with the seeds file, and what to do."""


@dataclass(frozen=True)
class Regression:
    seed: str
    date: str
    target: str  # the target it found its difference on: replayed there, in browsers, before the run's own seed
    found: str


@dataclass(frozen=True)
class Seeds:
    fixed: tuple[str, ...]
    regressions: tuple[Regression, ...]

    @property
    def through_api(self) -> list[str]:
        """The seeds whose sessions the default run acts out through the app's API: the fixed seeds but the first."""
        return [*dict.fromkeys(self.fixed[1:])]

    def in_browsers(self, target: str) -> list[str]:
        """The seeds whose sessions the default run acts out in browsers on `target`: the regression seeds found on
        it (as the exploration found them), then the first fixed seed."""
        return [*dict.fromkeys([r.seed for r in self.regressions if r.target == target] + [self.fixed[0]])]


def load_seeds(path: Path = SEEDS_FILE) -> Seeds:
    """The listed seeds, or a one-line error naming the file and what is wrong."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise SeedsError(f"{path}: cannot read the seeds of the generated sessions ({e}); fix the file") from None
    fixed = data.get("fixed")
    if not isinstance(fixed, list) or len(fixed) < 3 or not all(isinstance(s, str) and s for s in fixed):
        raise SeedsError(f"{path}: `fixed` must list at least three seeds as strings, like fixed = ['1', '2', '3']")
    regressions = []
    for i, entry in enumerate(data.get("regression", []), 1):
        missing = [k for k in ("seed", "date", "target", "found") if not isinstance(entry.get(k), str) or not entry[k]]
        if missing:
            raise SeedsError(f"{path}: [[regression]] {i} has no {', '.join(missing)}; give seed, date, target and "
                             "found, each a string")
        regressions.append(Regression(entry["seed"], entry["date"], entry["target"], entry["found"]))
    return Seeds(tuple(fixed), tuple(regressions))


def exploration_seed(day: datetime.date | None = None) -> str:
    """A new seed from the date (UTC), the same all day: printed by `make explore`, so that a find reproduces."""
    day = day or datetime.datetime.now(datetime.UTC).date()
    return day.strftime("%Y%m%d")


def add_regression(found: Regression, path: Path = SEEDS_FILE) -> bool:
    """`found` appended to the file's [[regression]] entries, its comments kept; False where the seed is listed for
    that target already."""
    if any(r.seed == found.seed and r.target == found.target for r in load_seeds(path).regressions):
        return False
    entry = "".join(f"{key} = {json.dumps(getattr(found, key), ensure_ascii=False)}\n"
                    for key in ("seed", "date", "target", "found"))
    text = path.read_text(encoding="utf-8")
    path.write_text(text.rstrip("\n") + "\n\n[[regression]]\n" + entry, encoding="utf-8")
    load_seeds(path)  # (what was written reads back)
    return True


def found_in(reports: Path, seed: str) -> Regression:
    """The difference a session of `seed` found, from its JSON under `reports` (the newest that failed), as a
    regression entry dated today; a one-line error where none failed."""
    failed = []
    for report in sorted(reports.glob(f"*-seed{seed}-*.json"), key=lambda p: p.stat().st_mtime, reverse=True):
        summary = json.loads(report.read_text(encoding="utf-8"))
        if summary.get("difference"):
            failed.append(summary)
    if not failed:
        raise SeedsError(f"no session of seed {seed} under {reports} found a difference; nothing to add (run "
                         f"make explore SEED={seed} first)")
    first = failed[0]
    line = str(first["difference"]).splitlines()[0]
    today = datetime.datetime.now(datetime.UTC).date().isoformat()
    return Regression(seed, today, str(first["target"]), line)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Add a seed whose session found a difference to the regression "
                                                 f"seeds ({SEEDS_FILE.name}); commit the file to keep it.")
    sub = parser.add_subparsers(dest="command", required=True)
    found = sub.add_parser("found", help="add the seed a failed session of reports/generated-sessions/ ran")
    found.add_argument("--seed", required=True)
    found.add_argument("--reports", type=Path, default=Path("reports/generated-sessions"))
    found.add_argument("--file", type=Path, default=SEEDS_FILE)
    args = parser.parse_args(argv)
    try:
        entry = found_in(args.reports, args.seed)
        added = add_regression(entry, args.file)
    except SeedsError as e:
        print(f"seeds: {e}")
        return 2
    print(f"seeds: {'added' if added else 'already listed'}: seed {entry.seed} on {entry.target}, {entry.date}: "
          f"{entry.found}" + (f"\nseeds: commit {args.file} to replay it first on {entry.target}" if added else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
