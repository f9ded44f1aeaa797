"""The run's life cycle: its options, what must exist once per run (the target and its driver, the browser, the
databases), what the first lines say, the scenarios that run only when asked for, and the report's environment.

The controller (or a single process) starts the run and hands what it found to pytest-xdist's workers as JSON.
"""

from __future__ import annotations

import contextlib
import gc
import json
import secrets
import signal
from dataclasses import asdict, dataclass, field
from pathlib import Path

import pytest

from harness.app.app_launcher import AppLaunchError, not_installed
from harness.app.app_tools import ToolFailed
from harness.app.target import TargetError, load_target
from harness.browser.chromium import (
    BrowserChoice,
    BrowserNotFound,
    check_browser_ws,
    chromium_version,
    find_chromium,
    playwright_chromium,
)
from harness.drivers import load_driver
from harness.drivers.base import Capability, DriverError
from harness.services.databases import DatabaseServers, ProviderError, provide_databases
from harness.suite import report
from harness.suite.known_defects import known_defects, mark_known_defects
from harness.suite.options import SuiteOptions, add_options, runs_acceptance_suite
from harness.suite.scenarios import UnknownScenario


@dataclass
class RunInfo:
    """What the run found once, at its start: the app, the browser, the databases. Handed to pytest-xdist's workers
    as JSON; a worker adds the app's health, which goes back to the controller for the report's environment."""

    target: str  # the target file
    target_name: str
    seed: int
    run: str  # makes this run's database names unique
    faults: str  # the faults switched on in the app the suite starts ("" for none)
    browser: BrowserChoice
    chromium: str  # what the browser says it is
    browser_ws: str | None = None  # a Playwright browser server instead of a browser launched here
    base_url: str | None = None  # an app the suite did not start
    servers: DatabaseServers | None = None  # the databases the suite provides (none for an app given by --base-url)
    app_health: dict[str, str] = field(default_factory=dict)  # what the app under test says of itself

    def to_json(self) -> str:
        return json.dumps(asdict(self), default=str)

    @classmethod
    def from_json(cls, text: str) -> RunInfo:
        data = json.loads(text)
        browser = data.pop("browser")
        servers = data.pop("servers")
        executable = browser["executable"]
        return cls(**data, browser=BrowserChoice(Path(executable) if executable else None, browser["source"]),
                   servers=DatabaseServers(**servers) if servers else None)


SESSION = pytest.StashKey[RunInfo]()
RUN = pytest.StashKey[contextlib.ExitStack]()

# Scenarios that run only when asked for: the long form of the generated sessions (the nightly job), and the replays
# of histories at scale (their own make target).
OPT_IN = {"long_form": "--long-form", "scale": "--scale"}


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def start_run(config: pytest.Config) -> RunInfo:
    """Everything that must exist once per run, or a one-line usage error."""
    opts = SuiteOptions.from_config(config)
    try:
        target = load_target(opts.target)
        driver = load_driver(target)
        if not target.has_pages and Capability.CHAT_API not in driver.capabilities:
            raise DriverError(f"{target.path.name} has no web page ([locators]) and the {driver.name} driver does "
                              "not chat through the app's API (Capability.CHAT_API): give it one of the two")
        if opts.browser_ws:
            check_browser_ws(opts.browser_ws)
            browser = BrowserChoice(None, f"--browser-ws {opts.browser_ws}")
        else:
            browser = find_chromium(opts.browser_path, playwright_chromium(), headed=config.getoption("--headed"))
        program = target.start_command[0] if target.start_command else "{"
        starts = not (opts.base_url or program.startswith("{") or config.getoption("collectonly"))
        missing = not_installed(target.name, program) if starts else None
        if missing:  # said at the start, not at the first scenario's set-up (collecting starts no app)
            raise DriverError(missing)
        if opts.base_url:
            if opts.faults:
                raise DriverError("--faults switches faults on in an app the suite starts; drop --base-url")
            driver.attach(opts.base_url, opts.admin_token)
        if opts.faults:
            driver.check_faults([f.strip() for f in opts.faults.split(",") if f.strip()])
        known_defects(target)
    except (TargetError, DriverError, BrowserNotFound, AppLaunchError, ToolFailed, UnknownScenario) as e:
        raise pytest.UsageError(str(e)) from None
    info = RunInfo(str(target.path), target.name, opts.seed, secrets.token_hex(3), opts.faults, browser,
                   "served by a Playwright browser server" if opts.browser_ws else chromium_version(browser.executable),
                   browser_ws=opts.browser_ws, base_url=opts.base_url)
    if not opts.base_url or (opts.pg_dsn and opts.redis_url):
        stack = contextlib.ExitStack()
        try:
            servers = stack.enter_context(provide_databases(opts.db, pg_dsn=opts.pg_dsn, redis_url=opts.redis_url,
                                                            pg_image=opts.pg_image, redis_image=opts.redis_image))
        except ProviderError as e:
            stack.close()
            raise pytest.UsageError(str(e)) from None
        config.stash[RUN] = stack
        info.servers = servers
        if servers.provider == "testcontainers":
            # Without Ryuk (disabled where its image cannot be pulled) nothing else removes the containers: a run
            # that is terminated unwinds as if interrupted, and pytest_unconfigure removes them.
            signal.signal(signal.SIGTERM, _interrupt)
    return info


def pytest_configure(config: pytest.Config) -> None:
    if hasattr(config, "workerinput"):
        if "memtest" in config.workerinput:
            config.stash[SESSION] = RunInfo.from_json(config.workerinput["memtest"])
        return
    if runs_acceptance_suite(config):
        config.stash[SESSION] = start_run(config)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node) -> None:  # noqa: ANN001 - xdist's WorkerController
    if SESSION in node.config.stash:
        node.workerinput["memtest"] = node.config.stash[SESSION].to_json()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    info = config.stash.get(SESSION, None)
    if info is not None:
        target = load_target(info.target)
        try:
            mark_known_defects(items, target)
        except UnknownScenario as e:
            raise pytest.UsageError(str(e)) from None
    left_out = {marker for marker, option in OPT_IN.items() if not config.getoption(option)}
    deselected = [item for item in items if any(item.get_closest_marker(m) for m in left_out)]
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = [item for item in items if item not in deselected]


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    """What is loaded by now (modules, the collected scenarios) lives for the whole run: frozen out of the garbage
    collector's reach, so that a full collection scans only what the scenarios make. Measured: each of the full
    collections took 60-80 ms over the suite's 150,000 objects, stalling a scenario at a random step (113 ms in
    eight runs of one scenario; 30 ms frozen)."""
    gc.collect()
    gc.freeze()


def pytest_report_header(config: pytest.Config) -> list[str]:
    info = config.stash.get(SESSION, None)
    if not info:
        return []
    lines = [info.servers.describe()] if info.servers else []
    lines.append(f"browser: {info.chromium} ({info.browser.source})")
    lines.append(f"app: {info.target_name} ({info.base_url or 'started by the suite'}); faults: "
                 f"{info.faults or 'none'}; seed: {info.seed} (--seed to change)")
    return lines


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error) -> None:  # noqa: ANN001 - xdist's WorkerController
    health = getattr(node, "workeroutput", {}).get("app_health")
    info = node.config.stash.get(SESSION, None)
    if health and info is not None and not info.app_health:
        info.app_health = json.loads(health)


def pytest_sessionfinish(session: pytest.Session) -> None:
    config = session.config
    info = config.stash.get(SESSION, None)
    if info is None:
        return
    if hasattr(config, "workeroutput"):  # a pytest-xdist worker: the controller writes the report's environment
        if info.app_health:
            config.workeroutput["app_health"] = json.dumps(info.app_health)
        return
    directory = report.alluredir(config)
    if directory is not None:
        app, servers = info.app_health, info.servers
        report.write_environment(directory, {
            "App": app.get("app") or info.target_name,
            "App.URL": info.base_url or "started by the suite",
            "Target": info.target,
            "Databases.provider": servers.provider if servers else "the app's own",
            "PostgreSQL": app.get("postgres") or (servers.postgres_version if servers else None),
            "pgvector": app.get("pgvector") or (servers.pgvector_version if servers else None),
            "Redis": app.get("redis") or (servers.redis_version if servers else None),
            "Chromium": info.chromium, "Seed": str(info.seed), "Faults": info.faults or "none",
        })


def pytest_unconfigure(config: pytest.Config) -> None:
    stack = config.stash.get(RUN, None)
    if stack is not None:
        stack.close()
