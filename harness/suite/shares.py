"""Shares of the scenarios between runs of one app in several configurations (`--share I/N`): every scenario in
exactly one share, the shares balanced by the scenarios' durations (`--durations-path`, ci/durations.json, as
pytest-split's shards are), except the generated sessions, which every share acts out, each with the run's own
`--seed`. `make test-open-webui OWUI_SPLIT=1` gives Open WebUI's two configurations a share each and each a seed
of its own: every other scenario once against the app, every store behind a share of each feature, and more seeds
acted out in browsers than one run does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

# Scenarios with this marker run in every share.
EVERY_SHARE = "generated"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.getgroup("memtest").addoption(
        "--share", metavar="I/N", default=None,
        help="run the I-th of N shares of the scenarios (each in exactly one; the generated sessions in all)")


def share_of(text: str) -> tuple[int, int]:
    """(I, N) of `I/N`, or a usage error that says what to give."""
    index, sep, count = text.partition("/")
    if not sep or not index.isdigit() or not count.isdigit() or not 1 <= int(index) <= int(count):
        raise pytest.UsageError(f"--share {text}: give I/N with 1 <= I <= N, for example --share 2/2")
    return int(index), int(count)


def shares(nodeids: list[str], durations: dict[str, float], count: int) -> list[list[str]]:
    """The node ids dealt into `count` shares, the longest first, each to the share with the least time so far (a
    scenario with no recorded duration counts as the mean of those with one); ties go to the first such share."""
    known = [durations[n] for n in nodeids if n in durations]
    default = sum(known) / len(known) if known else 1.0
    dealt: list[list[str]] = [[] for _ in range(count)]
    totals = [0.0] * count
    for nodeid in sorted(nodeids, key=lambda n: (-durations.get(n, default), n)):
        least = totals.index(min(totals))
        dealt[least].append(nodeid)
        totals[least] += durations.get(nodeid, default)
    return dealt


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    text = config.getoption("--share")
    if not text:
        return
    index, count = share_of(text)
    path = Path(config.getoption("durations_path", default="") or "ci/durations.json")
    durations = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    dealt = [item.nodeid for item in items if not item.get_closest_marker(EVERY_SHARE)]
    mine = set(shares(dealt, durations, count)[index - 1])
    keep = [item.nodeid in mine or item.get_closest_marker(EVERY_SHARE) is not None for item in items]
    kept = [item for item, kept_here in zip(items, keep, strict=True) if kept_here]
    deselected = [item for item, kept_here in zip(items, keep, strict=True) if not kept_here]
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = kept
