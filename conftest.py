"""Wires the suite's fixtures to the support package and owns their life cycles.

Session (once per run, in the controller): the database servers and the browser choice.
Session (per xdist worker): the worker's database and Redis db, the app under test, variant apps.
Scenario: its users, browsers and data (the `world`), torn down afterwards.
"""

from __future__ import annotations

import contextlib
import json
import secrets
import signal
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from harness import report
from harness.app_factory import AppFactory
from harness.app_launcher import AppLaunchError, RunningApp
from harness.browser import (
    BrowserChoice,
    BrowserNotFound,
    check_browser_ws,
    chromium_version,
    find_chromium,
    playwright_chromium,
    without_screencast,
)
from harness.browser_sessions import BrowserSessions
from harness.databases import DatabaseServers, ProviderError, provide_databases, redis_url_for_db
from harness.drivers import load_driver
from harness.drivers.base import AppDriver, DriverError
from harness.suite_options import ROOT, SuiteOptions, add_options, runs_acceptance_suite
from harness.target import Target, TargetError, load_target
from harness.test_data import TestData
from steps.world import Scenario

pytest_plugins = [
    "steps.common_steps",
    "steps.in_session_steps",
    "steps.cross_session_steps",
    "steps.isolation_steps",
    "steps.migration_steps",
    "steps.account_steps",
    "steps.generated_session_steps",
    "steps.upgrade_steps",
]

SESSION = pytest.StashKey[dict]()
RUN = pytest.StashKey[contextlib.ExitStack]()


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def _start_session(config: pytest.Config) -> dict:
    """Controller (or single process): everything that must exist once per run, or a one-line usage error."""
    opts = SuiteOptions.from_config(config)
    try:
        target = load_target(opts.target)
        driver = load_driver(target)
        if opts.browser_ws:
            check_browser_ws(opts.browser_ws)
            browser = BrowserChoice(None, f"--browser-ws {opts.browser_ws}")
        else:
            browser = find_chromium(opts.browser_path, playwright_chromium())
    except (TargetError, DriverError, BrowserNotFound) as e:
        raise pytest.UsageError(str(e)) from None
    info: dict = {"target": str(target.path), "target_name": target.name, "seed": opts.seed,
                  "run": secrets.token_hex(3), "faults": opts.faults,
                  "browser": str(browser.executable or ""), "browser_source": browser.source,
                  "chromium": "served by a Playwright browser server" if opts.browser_ws
                  else chromium_version(browser.executable),
                  "browser_ws": opts.browser_ws, "base_url": opts.base_url}
    if opts.base_url:
        if opts.faults:
            raise pytest.UsageError("--faults switches faults on in an app the suite starts; drop --base-url")
        try:
            driver.attach(opts.base_url, opts.admin_token)
        except (AppLaunchError, DriverError) as e:
            raise pytest.UsageError(str(e)) from None
    if opts.faults:
        from harness.app_tools import ToolFailed

        try:
            driver.check_faults([f.strip() for f in opts.faults.split(",") if f.strip()])
        except (DriverError, ToolFailed) as e:
            raise pytest.UsageError(str(e)) from None
    if not opts.base_url or (opts.pg_dsn and opts.redis_url):
        stack = contextlib.ExitStack()
        try:
            servers = stack.enter_context(provide_databases(opts.db, pg_dsn=opts.pg_dsn, redis_url=opts.redis_url,
                                                            pg_image=opts.pg_image, redis_image=opts.redis_image))
        except ProviderError as e:
            stack.close()
            raise pytest.UsageError(str(e)) from None
        config.stash[RUN] = stack
        info["servers"] = servers.__dict__.copy()
        if servers.provider == "testcontainers":
            # Without Ryuk (disabled where its image cannot be pulled) nothing else removes the containers: a run
            # that is terminated unwinds as if interrupted, and pytest_unconfigure removes them.
            signal.signal(signal.SIGTERM, _interrupt)
    return info


# Scenarios that run only when asked for: the long form of the generated sessions (the nightly job), and the replays
# of histories at scale (their own make target).
OPT_IN = {"long_form": "--long-form", "scale": "--scale"}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    left_out = {marker for marker, option in OPT_IN.items() if not config.getoption(option)}
    deselected = [item for item in items if any(item.get_closest_marker(m) for m in left_out)]
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = [item for item in items if item not in deselected]


def pytest_configure(config: pytest.Config) -> None:
    if hasattr(config, "workerinput"):
        if "memtest" in config.workerinput:
            config.stash[SESSION] = json.loads(config.workerinput["memtest"])
        return
    if runs_acceptance_suite(config):
        config.stash[SESSION] = _start_session(config)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node) -> None:  # noqa: ANN001 - xdist's WorkerController
    if SESSION in node.config.stash:
        node.workerinput["memtest"] = json.dumps(node.config.stash[SESSION])


def pytest_report_header(config: pytest.Config) -> list[str]:
    info = config.stash.get(SESSION, None)
    if not info:
        return []
    lines = []
    if "servers" in info:
        lines.append(DatabaseServers(**info["servers"]).describe())
    lines.append(f"browser: {info['chromium']} ({info['browser_source']})")
    where = info["base_url"] or "started by the suite"
    lines.append(f"app: {info['target_name']} ({where}); faults: {info['faults'] or 'none'}"
                 f"; seed: {info['seed']} (--seed to change)")
    return lines


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error) -> None:  # noqa: ANN001 - xdist's WorkerController
    health = getattr(node, "workeroutput", {}).get("app_health")
    if health and SESSION in node.config.stash:
        node.config.stash[SESSION].setdefault("app_health", json.loads(health))


def pytest_sessionfinish(session: pytest.Session) -> None:
    config = session.config
    info = config.stash.get(SESSION, None)
    if info is None:
        return
    if hasattr(config, "workerinput"):
        if "app_health" in info:
            config.workeroutput["app_health"] = json.dumps(info["app_health"])
        return
    directory = report.alluredir(config)
    if directory is not None:
        app = info.get("app_health", {})
        servers = info.get("servers", {})
        report.write_environment(directory, {
            "App": app.get("app") or info["target_name"],
            "App.URL": info["base_url"] or "started by the suite",
            "Target": info["target"],
            "Databases.provider": servers.get("provider", "the app's own"),
            "PostgreSQL": app.get("postgres") or servers.get("postgres_version"),
            "pgvector": app.get("pgvector") or servers.get("pgvector_version"),
            "Redis": app.get("redis") or servers.get("redis_version"),
            "Chromium": info["chromium"], "Seed": info["seed"], "Faults": info["faults"] or "none",
        })


def pytest_unconfigure(config: pytest.Config) -> None:
    stack = config.stash.get(RUN, None)
    if stack is not None:
        stack.close()


# -- session fixtures ------------------------------------------------------------------------------------------------
@pytest.fixture(scope="session")
def suite_info(pytestconfig: pytest.Config) -> dict:
    info = pytestconfig.stash.get(SESSION, None)
    if info is None:
        pytest.skip("run the acceptance suite as `pytest features/`")
    return info


@pytest.fixture(scope="session")
def target(suite_info: dict) -> Target:
    return load_target(Path(suite_info["target"]))


@pytest.fixture(scope="session")
def driver(target: Target) -> AppDriver:
    return load_driver(target)


@pytest.fixture(scope="session")
def worker_index(worker_id: str) -> int:
    return int(worker_id[2:]) if worker_id.startswith("gw") else 0


@pytest.fixture(scope="session")
def apps(suite_info: dict, driver: AppDriver, worker_id: str, worker_index: int) -> Iterator[AppFactory | None]:
    """Apps the suite starts for this worker; None when the suite targets an app it did not start (--base-url):
    its databases, if given, serve the migration scenarios, but the suite starts no app of its own then."""
    servers = suite_info.get("servers")
    if servers is None or suite_info["base_url"]:
        yield None
        return
    factory = AppFactory(driver, servers["pg_admin_dsn"], redis_url_for_db(servers["redis_url"], worker_index + 1),
                         db_prefix=f"memtest_{suite_info['run']}_{worker_id}".lower(),
                         base_settings={"faults": suite_info["faults"]} if suite_info["faults"] else {},
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
def second_postgres(suite_info: dict, driver: AppDriver, worker_id: str, worker_index: int,
                    apps: AppFactory | None) -> Iterator[SecondPostgres]:
    """Started on first use, for the scenarios that compare two pgvector versions; None (with the reason) where
    only one provider is available."""
    servers = suite_info.get("servers")
    if servers is None or apps is None:
        yield SecondPostgres(None, None, "needs an app the suite starts on databases it provides")
        return
    other = "embedded" if servers["provider"] != "embedded" else "testcontainers"
    with contextlib.ExitStack() as stack:
        try:
            second = stack.enter_context(provide_databases(other))
        except ProviderError as e:
            yield SecondPostgres(None, None, f"needs a second PostgreSQL with another pgvector version, from "
                                             f"{other} (`make engine` provides one here); it could not start: {e}")
            return
        factory = AppFactory(driver, second.pg_admin_dsn, redis_url_for_db(servers["redis_url"], worker_index + 1),
                             db_prefix=f"memtest_{suite_info['run']}_{worker_id}_second".lower(),
                             base_settings=apps.base_settings, log_dir=apps.log_dir)
        stack.callback(factory.close)
        yield SecondPostgres(second, factory)


@pytest.fixture(scope="session")
def app_under_test(request: pytest.FixtureRequest, suite_info: dict, driver: AppDriver,
                   apps: AppFactory | None) -> RunningApp:
    try:
        if apps is None:
            app = driver.attach(suite_info["base_url"], request.config.getoption("--admin-token"))
            servers = suite_info.get("servers") or {}
            app.pg_dsn, app.redis_url = servers.get("pg_admin_dsn"), servers.get("redis_url")
        else:
            app = apps.shared()
    except (AppLaunchError, DriverError) as e:
        pytest.exit(str(e), returncode=3)
    request.config.stash[SESSION]["app_health"] = driver.describe(app)
    return app


@pytest.fixture(scope="session")
def base_url(app_under_test: RunningApp) -> str:
    """pytest-playwright's base URL: the app under test, wherever it came from."""
    return app_under_test.base_url


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict, suite_info: dict) -> dict:
    choice = BrowserChoice(Path(suite_info["browser"]) if suite_info["browser"] else None,
                           suite_info["browser_source"])
    launch = choice.launch_args()
    return {**browser_type_launch_args, **launch,
            "args": [*browser_type_launch_args.get("args", []), *launch["args"]]}


@pytest.fixture(scope="session")
def connect_options(suite_info: dict) -> dict | None:
    """pytest-playwright connects to this browser server instead of launching a browser (--browser-ws)."""
    return {"endpoint": suite_info["browser_ws"]} if suite_info.get("browser_ws") else None


@pytest.fixture(scope="session")
def test_data(suite_info: dict, worker_id: str) -> TestData:
    return TestData(suite_info["seed"], worker_id)


# -- scenario fixtures -----------------------------------------------------------------------------------------------
@pytest.fixture
def _artifacts_recorder(_artifacts_recorder, request: pytest.FixtureRequest):  # noqa: ANN001, ANN201
    """pytest-playwright's recorder (traces and screenshots kept on failure), tracing without screencast frames."""
    if request.config.getoption("--tracing") != "off" and not request.config.getoption("--trace-screencast"):
        without_screencast(_artifacts_recorder, title=request.node.nodeid)
    return _artifacts_recorder


@pytest.fixture
def browsers(request: pytest.FixtureRequest, suite_info: dict, browser_type,  # noqa: ANN001
             browser_type_launch_args: dict, browser_context_args: dict,
             _artifacts_recorder) -> Iterator[BrowserSessions]:  # noqa: ANN001
    # pytest-playwright's new_context needs its shared browser: asked for only when a scenario opens a plain
    # context, so scenarios that use persistent profiles alone do not launch a second browser.
    sessions = BrowserSessions(lambda **kw: request.getfixturevalue("new_context")(**kw), browser_type,
                               browser_type_launch_args, browser_context_args, _artifacts_recorder,
                               remote=bool(suite_info.get("browser_ws")))
    yield sessions
    call = getattr(request.node, "rep_call", None)  # set by pytest-playwright's report hook
    always = [request.config.getoption(o) for o in ("--tracing", "--screenshot", "--video")]
    sessions.close_all(keep_evidence=call is None or not call.passed or "on" in always
                       or always[2] == "retain-on-failure")


@pytest.fixture
def world(request: pytest.FixtureRequest, target: Target, driver: AppDriver, app_under_test: RunningApp,
          test_data: TestData, browsers: BrowserSessions, apps: AppFactory | None) -> Iterator[Scenario]:
    scenario = Scenario(target, driver, app_under_test, test_data, browsers, key=request.node.nodeid, apps=apps,
                        answer_check=request.config.getoption("--answer-check"))
    yield scenario
    scenario.tear_down()


# -- evidence for the report -----------------------------------------------------------------------------------------
def pytest_bdd_before_scenario(request: pytest.FixtureRequest, feature, scenario) -> None:  # noqa: ANN001
    """Each outline example is named with its values in the report's result list, not only the scenario's name."""
    callspec = getattr(request.node, "callspec", None)
    example = callspec.params.get("_pytest_bdd_example") if callspec else None
    if example:
        report.name_example(scenario.name, example)


@pytest.hookimpl(hookwrapper=True)
def pytest_bdd_before_step_call(request, feature, scenario, step, step_func, step_func_args):  # noqa: ANN001, ANN201
    """The report lists a step's own parameters (a name, a sentence), not the scenario's world object that every step
    receives: it is taken out while the report records the step, and given back before the step runs."""
    world = step_func_args.pop("world", None)
    try:
        yield
    finally:
        if world is not None:
            step_func_args["world"] = world


def pytest_bdd_step_error(request: pytest.FixtureRequest, feature, scenario, step, step_func,  # noqa: ANN001
                          step_func_args, exception) -> None:  # noqa: ANN001
    try:
        world = request.getfixturevalue("world")
    except pytest.FixtureLookupError:
        return
    if world is not None:
        urls = [p.url for p in world.browsers.pages()]
        if urls:
            report.attach_text("page URLs", "\n".join(urls))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):  # noqa: ANN201
    """After pytest-playwright has kept a failed test's screenshots and traces (its wrapper is trylast, so inner to
    this one), and before Allure writes the result (its listener registers after this conftest, so it is outer)."""
    outcome = yield
    rep = outcome.get_result()
    if rep.when == "teardown":
        kept = [(name.removeprefix("playwright_"), str(Path(item.config.invocation_params.dir, path)))
                for name, path in rep.user_properties if name.startswith("playwright_")]
        report.attach_artifacts(kept)
