"""Which pairs of actions (harness/sessions/pairs.py) the default run's generated sessions cover on the reference
app, against a month of the nightly exploration's; and the record the generator's test holds the default run to.

    python -m harness.sessions.pair_coverage [--write]"""

from __future__ import annotations

import argparse
import datetime
from collections.abc import Iterable
from pathlib import Path

from harness.app.target import Target, load_target
from harness.sessions.generator import Plan, generate
from harness.sessions.moves import NEEDS_A_PAGE
from harness.sessions.pairs import Pair, derived, name
from harness.sessions.seeds import exploration_seed, load_seeds
from harness.suite.options import ROOT

COVERED_FILE = Path(__file__).with_name("pairs-covered.txt")
NIGHTS = 30  # the nightly exploration's seeds a month gives (one a night, from the date)
SESSION = (60, 3)  # the default run's sessions: actions, users (features/generated_sessions.feature)


def default_plans(target: Target) -> list[Plan]:
    """The default run's sessions on a target that offers every move: the first fixed seed's in browsers, the
    regression seeds' and the other fixed seeds' through the app's API (no page, no restart)."""
    seeds = load_seeds()
    through_api = {kind: "through the app's API" for kind in (*NEEDS_A_PAGE, "restart the app")}
    return [_plan(seeds.fixed[0], target, {})] + [_plan(seed, target, through_api) for seed in seeds.through_api]


FIRST_NIGHT = datetime.date(2026, 12, 1)  # (a fixed month, so that the figures printed are the same on every run)


def exploration_plans(target: Target, nights: int = NIGHTS, first: datetime.date = FIRST_NIGHT) -> list[Plan]:
    """The sessions `make explore` acts out on `nights` nights from `first`, a seed from each date, in browsers."""
    return [_plan(exploration_seed(first + datetime.timedelta(days=n)), target, {}) for n in range(nights)]


def _plan(seed: str, target: Target, left_out: dict[str, str]) -> Plan:
    actions, users = SESSION
    return generate(seed, actions, users, left_out, limits=target.limits, forgetting=target.forgetting,
                    memory_listing=target.recall.memory_listing)


def covered_by(plans: Iterable[Plan]) -> set[Pair]:
    return {pair for plan in plans for pair in plan.pairs}


def recorded(path: Path = COVERED_FILE) -> set[Pair]:
    """The pairs the default run was last recorded to cover (one `a -> b` a line; `#` starts a comment)."""
    lines = [line.strip() for line in path.read_text(encoding="utf-8").splitlines()]
    return {tuple(line.split(" -> ", 1)) for line in lines if line and not line.startswith("#")}  # type: ignore[misc]


def main(argv: list[str] | None = None) -> int:
    """Print how many pairs are derived, how many the default run and a month of nightly explorations cover on the
    reference app; with --write, record the default run's as the ones the generator's test holds it to."""
    args = argparse.ArgumentParser(description=main.__doc__)
    args.add_argument("--write", action="store_true", help=f"write the default run's pairs to {COVERED_FILE.name}")
    write = args.parse_args(argv).write
    target = load_target(ROOT / "targets" / "memchat.toml")
    every = derived()
    default, explored = covered_by(default_plans(target)), covered_by(exploration_plans(target))
    both = default | explored
    print(f"pairs of actions: {len(every)} derived from the moves' declarations; the default run covers "
          f"{len(default)}, {NIGHTS} nights of exploration {len(explored)}, both {len(both)}: the default run "
          f"{100 * len(default) / len(both):.1f} % of what both cover")
    if write:
        ordered = [p for p in every if p in default]
        COVERED_FILE.write_text("# The pairs of actions the default run's sessions cover on the reference app "
                                "(python -m harness.sessions.pair_coverage --write)\n"
                                + "".join(f"{name(p)}\n" for p in ordered), encoding="utf-8")
        print(f"wrote {len(ordered)} pairs to {COVERED_FILE}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
