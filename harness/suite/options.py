"""The suite's command-line options, and what they resolve to."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pytest

from harness.vocabulary.test_data import DEFAULT_SEED

ROOT = Path(__file__).resolve().parents[2]


def add_options(parser: pytest.Parser) -> None:
    group = parser.getgroup("memtest", "memory acceptance suite")
    group.addoption("--db", choices=("auto", "dsn", "testcontainers", "embedded"), default="auto",
                    help="where the databases come from (auto: DSN -> testcontainers -> embedded)")
    group.addoption("--pg-dsn", default=os.environ.get("MEMTEST_PG_DSN"),
                    help="PostgreSQL (with pgvector) to use; env MEMTEST_PG_DSN")
    group.addoption("--redis-url", default=os.environ.get("MEMTEST_REDIS_URL"),
                    help="Redis to use; env MEMTEST_REDIS_URL")
    group.addoption("--pg-image", default=None,
                    help="PostgreSQL+pgvector image for --db testcontainers; env MEMTEST_PG_IMAGE "
                         "(default pgvector/pgvector:0.8.0-pg16)")
    group.addoption("--redis-image", default=None,
                    help="Redis image for --db testcontainers; env MEMTEST_REDIS_IMAGE (default redis:7.2-alpine)")
    group.addoption("--faults", default=os.environ.get("MEMTEST_FAULTS", ""),
                    help="faults to switch on in the reference app, e.g. unload-write-lost (kill matrix)")
    group.addoption("--browser-path", default=os.environ.get("MEMTEST_BROWSER_PATH"),
                    help="Chromium binary to drive; default: Playwright's own, then /usr/lib/chromium/chromium")
    group.addoption("--browser-ws", default=os.environ.get("MEMTEST_BROWSER_WS"),
                    help="ws:// endpoint of a Playwright browser server to drive instead of launching Chromium here "
                         "(browsers on other machines); env MEMTEST_BROWSER_WS")
    group.addoption("--seed", type=int, default=os.environ.get("MEMTEST_SEED", str(DEFAULT_SEED)),
                    help=f"faker seed (default {DEFAULT_SEED}); env MEMTEST_SEED")
    group.addoption("--target", default=os.environ.get("MEMTEST_TARGET"),
                    help="target file describing the app under test, or the name of one in targets/ "
                         "(default: the one named in targets/DEFAULT, the reference app)")
    group.addoption("--trace-screencast", action="store_true",
                    help="record screencast frames in Playwright traces too (slower; DOM snapshots are always kept)")
    group.addoption("--answer-check", choices=("exact", "contains"),
                    default=os.environ.get("MEMTEST_ANSWER_CHECK", "exact"),
                    help="exact (default: a deterministic model answers byte for byte) or contains (a real model: "
                         "any reply containing the expected value); env MEMTEST_ANSWER_CHECK")
    group.addoption("--long-form", action="store_true",
                    help="also run the long form of the generated sessions (hundreds of actions; nightly)")
    group.addoption("--scale", action="store_true",
                    help="also run the replays of histories at scale (10k, 100k and 1M memories; make replay-scale)")
    group.addoption("--shrink-seconds", type=float, default=float(os.environ.get("MEMTEST_SHRINK_SECONDS", "120")),
                    help="time a failing generated session may spend finding a shorter reproduction (0: none); "
                         "env MEMTEST_SHRINK_SECONDS")
    group.addoption("--admin-token", default=os.environ.get("MEMTEST_ADMIN_TOKEN"),
                    help="admin token of an app given by --base-url (for seeding users); env MEMTEST_ADMIN_TOKEN")


@dataclass(frozen=True)
class SuiteOptions:
    db: str
    pg_dsn: str | None
    redis_url: str | None
    faults: str
    browser_path: str | None
    seed: int
    target: str | None
    admin_token: str | None
    base_url: str | None
    pg_image: str | None = None
    redis_image: str | None = None
    browser_ws: str | None = None

    @classmethod
    def from_config(cls, config: pytest.Config) -> SuiteOptions:
        opt = config.getoption
        return cls(opt("--db"), opt("--pg-dsn"), opt("--redis-url"), opt("--faults") or "",
                   opt("--browser-path"), opt("--seed"), opt("--target"), opt("--admin-token"),
                   opt("base_url", default=None), opt("--pg-image"), opt("--redis-image"),
                   opt("--browser-ws"))


def runs_acceptance_suite(config: pytest.Config) -> bool:
    """True when this run collects scenarios from features/ (the app's and the support's tests need no browser)."""
    if config.option.help or config.option.version or config.option.collectonly:
        return False
    features = ROOT / "features"
    for arg in config.args:
        path = Path(config.invocation_params.dir, arg.split("::")[0]).resolve()
        if path == ROOT or features == path or features in path.parents:
            return True
    return False
