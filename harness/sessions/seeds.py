"""The seeds the default run acts out (harness/sessions/seeds.toml): the regression seeds first, each with when it
was found and what it found, then the fixed seeds; and the seed an exploration draws from the date."""

from __future__ import annotations

import datetime
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
    found: str


@dataclass(frozen=True)
class Seeds:
    fixed: tuple[str, ...]
    regressions: tuple[Regression, ...]

    @property
    def through_api(self) -> list[str]:
        """The seeds whose sessions the default run acts out through the app's API: the regression seeds, then the
        fixed seeds but the first (whose session is acted out in browsers)."""
        return [*dict.fromkeys([r.seed for r in self.regressions] + list(self.fixed[1:]))]


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
        missing = [k for k in ("seed", "date", "found") if not isinstance(entry.get(k), str) or not entry[k]]
        if missing:
            raise SeedsError(f"{path}: [[regression]] {i} has no {', '.join(missing)}; give seed, date and found, "
                             "each a string")
        regressions.append(Regression(entry["seed"], entry["date"], entry["found"]))
    return Seeds(tuple(fixed), tuple(regressions))


def exploration_seed(day: datetime.date | None = None) -> str:
    """A new seed from the date (UTC), the same all day: printed by `make explore`, so that a find reproduces."""
    day = day or datetime.datetime.now(datetime.UTC).date()
    return day.strftime("%Y%m%d")
