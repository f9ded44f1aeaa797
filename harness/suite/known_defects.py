"""The verdict on a scenario the target declares a known defect of its app ([known_defects]): it passes as expected
only when it fails the way the declaration says (at its step, with a message its pattern finds; or, for a generated
session, with the declared differences only). A pass, a failure at another step or with another message, and an
error of set-up or tear-down are failures of the run, reported with the declared and the observed line side by side
(in the terminal, the JUnit message and the Allure report)."""

from __future__ import annotations

import pytest

from harness.app.target import KnownDefect, Target
from harness.suite import report
from harness.suite.failed_step import failed_step
from harness.suite.scenarios import FEATURES, ScenarioRef, UnknownScenario, check_exist, feature_scenarios

KNOWN_DEFECT = "known defect of the app"  # how a report and its categories tell these apart
OBSERVED = " | observed: "  # between the declared reason and what was seen, in one line (tools/conformance.py)
DECLARED = pytest.StashKey[tuple[str, KnownDefect]]()  # (target name, defect) of a collected scenario
GHERKIN_KEYWORDS = ("Given ", "When ", "Then ", "And ", "But ", "* ")
SESSIONS_FEATURE = "generated_sessions.feature"  # whose known defects name a read of the session, not a step


class DeclaredDifferences(AssertionError):
    """A generated session showed the differences its target declares, and no other."""


def step_text(line: str) -> str:
    """A Gherkin line without its keyword."""
    return next((line[len(k):].strip() for k in GHERKIN_KEYWORDS if line.startswith(k)), line.strip())


def known_defects(target: Target) -> dict[ScenarioRef, KnownDefect]:
    """The target's [known_defects], each checked to name an existing scenario and, where it names a step, one of
    that scenario's lines; or one line naming the first that does not."""
    where = f"{target.path.name} [known_defects]"
    refs = {ScenarioRef.parse(text, where): defect for text, defect in target.known_defects.items()}
    check_exist(refs, where)
    for ref, defect in refs.items():
        scenario = next(s for s in feature_scenarios(FEATURES / ref.feature) if s.title == ref.title)
        for line in defect.steps:
            if step_text(line) not in scenario.steps:
                raise UnknownScenario(f"{where} {ref}: its step {line!r} is not a line of that scenario (give it as "
                                      "the feature file writes it, keyword and <placeholders> included)")
        if defect.read and ref.feature != SESSIONS_FEATURE:
            raise UnknownScenario(f"{where} {ref}: read names a generated session's read; give a step for a scenario "
                                  f"of {ref.feature}")
    return refs


def declared_for(item: pytest.Item) -> KnownDefect | None:
    found = item.stash.get(DECLARED, None)
    return found[1] if found else None


def mark_known_defects(items: list[pytest.Item], target: Target) -> None:
    """Each collected scenario the target declares a known defect of its app carries the declaration."""
    defects = known_defects(target)
    for item in items:
        defect = next((d for ref, d in defects.items() if ref.runs(item.nodeid)), None)
        if defect is not None:
            item.stash[DECLARED] = (target.name, defect)


def _fail(rep: pytest.TestReport, text: str) -> None:
    """The report made a failure whose first lines say how the known defect was not what was declared."""
    original = str(rep.longrepr) if rep.longrepr else ""
    rep.outcome = "failed"
    rep.longrepr = text + ("\n\n" + original if original else "")


def judge(item: pytest.Item, rep: pytest.TestReport, excinfo: pytest.ExceptionInfo | None) -> None:
    """The scenario's report, as its declared known defect makes it: expected, or a failure of the run."""
    target, defect = item.stash[DECLARED]
    head = f"{KNOWN_DEFECT} {target}: {defect.why}"
    declared = f"declared: {defect.declared()}"
    if rep.when != "call":
        if rep.failed:
            _fail(rep, f"{declared}\nobserved: an error in the scenario's {rep.when}, not the declared failure")
        return
    if rep.passed:
        _fail(rep, f"{declared}\nobserved: the scenario passed: the defect is gone, take it off "
                   f"[known_defects] of the target ({head})")
        return
    if not rep.failed:
        return
    step = failed_step(item)
    message = str(excinfo.value) if excinfo is not None else ""
    if defect.read:
        fits = excinfo is not None and isinstance(excinfo.value, DeclaredDifferences)
        observed = step.observed() if step else message.splitlines()[0] if message else "no step failed"
    else:
        fits = step is not None and step.line in defect.steps and defect.matches(step.message)
        observed = step.observed() if step else f"not at a step: {message.splitlines()[0] if message else ''}"
    if not fits:
        _fail(rep, f"{declared}\nobserved: {observed}")
        return
    rep.outcome = "skipped"
    rep.wasxfail = f"{head}{OBSERVED}{observed}"  # pytest's mark of an expected failure


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):  # noqa: ANN201
    outcome = yield
    if DECLARED in item.stash:
        rep = outcome.get_result()
        judge(item, rep, call.excinfo)
        if rep.when == "call" and rep.failed:  # the scenario's result is still open in the report while it runs
            report.attach_text("known defect: declared and observed", "\n".join(str(rep.longrepr).splitlines()[:2]))
