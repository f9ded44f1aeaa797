"""What a scenario's report carries besides its steps: each outline example named with its values, each step with
its own parameters only, and a failure's evidence (page URLs, and the browsers' screenshots, traces and videos that
harness.browser.evidence kept)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.suite import report
from harness.suite.scenarios import example_of

CALL_REPORT = pytest.StashKey[pytest.TestReport]()  # the outcome of a scenario's steps
KEPT_EVIDENCE = pytest.StashKey[list[tuple[str, Path]]]()  # (kind, path) of the browser evidence kept
SKIPPED_IN_SETUP = pytest.StashKey[bool]()


def scenario_failed(item: pytest.Item) -> bool:
    """Whether the scenario's steps failed, or never ran because its set-up failed (a skip is no failure)."""
    call = item.stash.get(CALL_REPORT, None)
    return call.failed if call is not None else not item.stash.get(SKIPPED_IN_SETUP, False)


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
    """The steps' outcome, for the browsers' teardown to decide what evidence to keep; after the teardown, the kept
    evidence onto the Allure result (its listener registers after this plugin, so it writes the result after this),
    and, as pytest-playwright does, into the report's properties (JUnit XML lists them)."""
    outcome = yield
    rep = outcome.get_result()
    if rep.when == "call":
        item.stash[CALL_REPORT] = rep
    elif rep.when == "setup" and rep.skipped:
        item.stash[SKIPPED_IN_SETUP] = True
    elif rep.when == "teardown":
        kept = item.stash.get(KEPT_EVIDENCE, [])
        report.attach_artifacts([(kind, str(path)) for kind, path in kept])
        base = item.config.invocation_params.dir
        rep.user_properties += [(f"playwright_{kind}", str(path.relative_to(base) if path.is_relative_to(base)
                                                               else path)) for kind, path in kept]
