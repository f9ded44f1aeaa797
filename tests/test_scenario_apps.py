"""The wiring that stops a scenario's own apps when it ends (harness.suite.fixtures._scenario_apps), in a pytest run
of its own: the apps are asked for by the steps as they run, never by the test's signature."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
pytest_plugins = ["pytester"]

CONFTEST = '''
import pytest
from harness.suite.fixtures import _scenario_apps  # noqa: F401  (the autouse fixture under test)

ENDED = []


class Apps:
    def end_scenario(self):
        ENDED.append(True)


@pytest.fixture(scope="session")
def apps():
    return Apps()
'''

TESTS = '''
from conftest import ENDED


def test_a_scenario_whose_steps_asked_for_the_apps(request):
    request.getfixturevalue("apps")  # as a step does, through the world


def test_its_apps_were_ended_when_it_ended():
    assert ENDED == [True]


def test_a_test_that_never_asked_for_them():
    assert ENDED == [True]  # nothing ended for a test without apps
'''


def test_a_scenarios_apps_are_ended_after_it_even_when_its_steps_asked_for_them(pytester: pytest.Pytester,
                                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_order=TESTS)
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    result = pytester.runpytest_subprocess("-p", "no:randomly", "-p", "no:cacheprovider", "-p", "no:xdist")
    result.assert_outcomes(passed=3)
