"""The fixtures that own the support package's life cycles, each small and overridable (as pytest-playwright's are).

Session (per xdist worker): the target and its driver, the worker's apps (the shared one and its variants, on the
worker's own database and Redis db), the answer check, the test data. (pytest-playwright's own fixtures are
overridden in the root conftest.py, where an override always wins.)
Scenario: its browsers (contexts, persistent profiles, traces kept on failure).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from playwright.sync_api import BrowserType, expect

from harness.app.app_factory import AppFactory
from harness.app.app_handle import AppHandle
from harness.app.app_launcher import AppLaunchError
from harness.app.target import Target, load_target
from harness.browser.evidence import BrowserEvidence, EvidenceOptions, folder_for
from harness.browser.profiles import BrowserSessions
from harness.drivers import load_driver
from harness.drivers.base import AppDriver, DriverError
from harness.services.databases import DatabaseServers, ProviderError, provide_databases, redis_url_for_db
from harness.suite.evidence import KEPT_EVIDENCE, scenario_failed
from harness.suite.options import ROOT
from harness.suite.run import SESSION, RunInfo
from harness.vocabulary.answers import AnswerCheck
from harness.vocabulary.test_data import TestData


@pytest.fixture(scope="session")
def suite_info(pytestconfig: pytest.Config) -> RunInfo:
    """What the run found at its start (harness.suite.run.RunInfo)."""
    info = pytestconfig.stash.get(SESSION, None)
    if info is None:
        pytest.skip("run the acceptance suite as `pytest features/`")
    return info


@pytest.fixture(scope="session")
def target(suite_info: RunInfo) -> Target:
    return load_target(Path(suite_info.target))


@pytest.fixture(scope="session")
def driver(target: Target) -> AppDriver:
    return load_driver(target)


@pytest.fixture(scope="session")
def worker_index(worker_id: str) -> int:
    return int(worker_id[2:]) if worker_id.startswith("gw") else 0


@pytest.fixture(scope="session")
def apps(suite_info: RunInfo, driver: AppDriver, worker_id: str,
         worker_index: int) -> Iterator[AppFactory | None]:
    """Apps the suite starts for this worker; None when the suite targets an app it did not start (--base-url):
    its databases, if given, serve the migration scenarios, but the suite starts no app of its own then."""
    servers = suite_info.servers
    if servers is None or suite_info.base_url:
        yield None
        return
    factory = AppFactory(driver, servers.pg_admin_dsn, redis_url_for_db(servers.redis_url, worker_index + 1),
                         db_prefix=f"memtest_{suite_info.run}_{worker_id}".lower(),
                         base_settings={"faults": suite_info.faults} if suite_info.faults else {},
                         log_dir=ROOT / "reports" / "app-logs")
    yield factory
    factory.close()


@dataclass
class SecondPostgres:
    """PostgreSQL with the other pgvector version than the run's: embedded beside containers, or the reverse."""

    servers: DatabaseServers | None
    apps: AppFactory | None
    why_not: str = ""


@pytest.fixture(scope="session")
def second_postgres(suite_info: RunInfo, driver: AppDriver, worker_id: str, worker_index: int,
                    apps: AppFactory | None) -> Iterator[SecondPostgres]:
    """Started on first use, for the scenarios that compare two pgvector versions; None (with the reason) where
    only one provider is available."""
    servers = suite_info.servers
    if servers is None or apps is None:
        yield SecondPostgres(None, None, "needs an app the suite starts on databases it provides")
        return
    other = "embedded" if servers.provider != "embedded" else "testcontainers"
    with contextlib.ExitStack() as stack:
        try:
            second = stack.enter_context(provide_databases(other))
        except ProviderError as e:
            yield SecondPostgres(None, None, f"needs a second PostgreSQL with another pgvector version, from "
                                             f"{other} (`make engine` provides one here); it could not start: {e}")
            return
        factory = AppFactory(driver, second.pg_admin_dsn, redis_url_for_db(servers.redis_url, worker_index + 1),
                             db_prefix=f"memtest_{suite_info.run}_{worker_id}_second".lower(),
                             base_settings=apps.base_settings, log_dir=apps.log_dir)
        stack.callback(factory.close)
        apps.companions.append(factory)
        yield SecondPostgres(second, factory)


@pytest.fixture(autouse=True)
def _scenario_apps(request: pytest.FixtureRequest) -> Iterator[None]:
    """The apps a scenario started for itself stop with it (after its world has deleted its users). Only where the
    test ran on the suite's apps: the project's own tests do not start them. Looked up after the scenario, since its
    steps ask for the apps as they run (before it, `apps` is never among the test's fixtures: every fresh app and
    restart of a run was kept to its end, idle)."""
    yield
    if "apps" in request.fixturenames:
        apps = request.getfixturevalue("apps")  # already made for this session: its cached value
        if apps is not None:
            apps.end_scenario()


@pytest.fixture(scope="session")
def app_under_test(request: pytest.FixtureRequest, suite_info: RunInfo, driver: AppDriver,
                   apps: AppFactory | None) -> AppHandle:
    """The app the scenarios share: started by the suite, or the one at --base-url."""
    try:
        if apps is None:
            running = driver.attach(str(suite_info.base_url), request.config.getoption("--admin-token"))
            if suite_info.servers is not None:
                running.pg_dsn, running.redis_url = suite_info.servers.pg_admin_dsn, suite_info.servers.redis_url
        else:
            running = apps.shared()
    except (AppLaunchError, DriverError) as e:
        if hasattr(request.config, "workerinput"):  # an exit in a pytest-xdist worker hides its line in a crash report
            pytest.fail(f"{type(e).__name__}: {e}", pytrace=False)
        pytest.exit(str(e), returncode=3)
    app = AppHandle(driver, running, apps)
    suite_info.app_health = app.describe()
    return app


@pytest.fixture(scope="session")
def answers(pytestconfig: pytest.Config) -> AnswerCheck:
    return AnswerCheck(pytestconfig.getoption("--answer-check"))


@pytest.fixture(scope="session")
def test_data(suite_info: RunInfo, worker_id: str, target: Target) -> TestData:
    return TestData(suite_info.seed, worker_id, target.email_domain)


@pytest.fixture(scope="session")
def ui_wait_s(target: Target) -> float:
    """How long every `expect` of the pages waits for the app's page by default (its target's [limits] ui_wait_s):
    an app that renders much in the browser needs more than Playwright's 5 s on a busy CI runner."""
    expect.set_options(timeout=target.limits.ui_wait_s * 1000)
    return target.limits.ui_wait_s


def evidence_options(config: pytest.Config) -> EvidenceOptions:
    """pytest-playwright's own options for what to keep (pytest.ini sets them), and --trace-screencast."""
    return EvidenceOptions(config.getoption("--tracing"), config.getoption("--screenshot"),
                           config.getoption("--video"), config.getoption("--full-page-screenshot"),
                           config.getoption("--trace-screencast"))


@pytest.fixture
def browsers(request: pytest.FixtureRequest, suite_info: RunInfo, browser_type: BrowserType,
             browser_type_launch_args: dict, browser_context_args: dict, ui_wait_s: float) -> Iterator[BrowserSessions]:
    """The scenario's browsers, on pytest-playwright's documented fixtures: its shared `browser` (launched only
    when a scenario opens a plain context, so that scenarios on persistent profiles alone launch no second browser),
    `browser_type` for profiles, and the launch and context arguments. Its evidence is kept by the outcome of the
    scenario's steps (harness.suite.evidence reads it)."""
    nodeid = request.node.nodeid
    evidence = BrowserEvidence(evidence_options(request.config),
                               folder_for(Path(request.config.getoption("--output")).absolute(), nodeid), nodeid)
    sessions = BrowserSessions(lambda: request.getfixturevalue("browser"), browser_type, browser_type_launch_args,
                               browser_context_args, evidence, remote=bool(suite_info.browser_ws))
    yield sessions
    request.node.stash[KEPT_EVIDENCE] = sessions.close_all(failed=scenario_failed(request.node))
