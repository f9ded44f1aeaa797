"""What a scenario's report carries besides its steps: each outline example named with its values, each step with
its own parameters only, and a failure's evidence (page URLs, and pytest-playwright's screenshots and traces)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness import report
from harness.scenarios import example_of


def from_the_gherkin(value: object) -> bool:
    """What a Gherkin line gives a step: a parsed value, a doc string, a data table (rows of cells). Anything else a
    step receives is a fixture (the world, an area's state), which the report does not list as a parameter."""
    if isinstance(value, list):
        return all(isinstance(row, list) for row in value)
    return isinstance(value, (str, int, float, bool))


def pytest_bdd_before_scenario(request: pytest.FixtureRequest, feature, scenario) -> None:  # noqa: ANN001
    """Each outline example is named with its values in the report's result list, not only the scenario's name."""
    example = example_of(request.node)
    if example:
        report.name_example(scenario.name, dict(example))


@pytest.hookimpl(hookwrapper=True)
def pytest_bdd_before_step_call(request, feature, scenario, step, step_func, step_func_args):  # noqa: ANN001, ANN201
    """The report lists a step's own parameters (a name, a sentence), not the fixtures every step receives: they are
    taken out while the report records the step, and given back before the step runs."""
    fixtures = {k: v for k, v in step_func_args.items() if not from_the_gherkin(v)}
    for name in fixtures:
        del step_func_args[name]
    try:
        yield
    finally:
        step_func_args.update(fixtures)


def pytest_bdd_step_error(request: pytest.FixtureRequest, feature, scenario, step, step_func,  # noqa: ANN001
                          step_func_args, exception) -> None:  # noqa: ANN001
    if "browsers" not in request.fixturenames:
        return
    urls = [p.url for p in request.getfixturevalue("browsers").pages()]
    if urls:
        report.attach_text("page URLs", "\n".join(urls))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):  # noqa: ANN201
    """After pytest-playwright has kept a failed test's screenshots and traces (its wrapper is trylast, so inner to
    this one), and before Allure writes the result (its listener registers after this plugin, so it is outer)."""
    outcome = yield
    rep = outcome.get_result()
    if rep.when == "teardown":
        kept = [(name.removeprefix("playwright_"), str(Path(item.config.invocation_params.dir, path)))
                for name, path in rep.user_properties if name.startswith("playwright_")]
        report.attach_artifacts(kept)
