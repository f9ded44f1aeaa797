"""Wires the suite together: the support package's plugins (the run's life cycle, its fixtures, a failure's
evidence), the step modules, pytest-playwright's fixtures as the suite needs them, and `world`, what every scenario
has, torn down after it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from harness.app.app_handle import AppHandle
from harness.browser.profiles import BrowserSessions
from harness.vocabulary.test_data import TestData
from steps.world import World

if TYPE_CHECKING:  # imported as a plugin below: importing it here first would keep pytest from rewriting it
    from harness.suite.run import RunInfo

pytest_plugins = [
    "harness.suite.failed_step",
    "harness.suite.known_defects",
    "harness.suite.failure_text",  # after known_defects: reads the report once it is judged
    "harness.suite.run",
    "harness.suite.shares",
    "harness.suite.evidence",
    "harness.suite.fixtures",
    "steps.records",
    "steps.common_steps",
    "steps.in_session_steps",
    "steps.cross_session_steps",
    "steps.isolation_steps",
    "steps.migration_steps",
    "steps.change_steps",
    "steps.account_steps",
    "steps.generated_session_steps",
    "steps.upgrade_steps",
    "steps.limits_steps",
    "steps.forgetting_steps",
    "steps.failure_steps",
    "steps.hostile_steps",
]


@pytest.fixture
def world(request: pytest.FixtureRequest, app_under_test: AppHandle, test_data: TestData,
          browsers: BrowserSessions) -> Iterator[World]:
    scenario = World(app_under_test, test_data, browsers, key=request.node.nodeid)
    yield scenario
    scenario.tear_down()


# -- pytest-playwright's fixtures, overridden (here, where an override always wins over a plugin's) ------------------
@pytest.fixture(scope="session")
def base_url(app_under_test: AppHandle) -> str:
    """The app under test, wherever it came from."""
    return app_under_test.base_url


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict, suite_info: RunInfo) -> dict:
    """The Chromium the run found (Playwright's own or Debian's), quiet and offline."""
    launch = suite_info.browser.launch_args()
    return {**browser_type_launch_args, **launch,
            "args": [*browser_type_launch_args.get("args", []), *launch["args"]]}


@pytest.fixture(scope="session")
def connect_options(suite_info: RunInfo) -> dict | None:
    """A Playwright browser server instead of a browser launched here (--browser-ws)."""
    return {"endpoint": suite_info.browser_ws} if suite_info.browser_ws else None
