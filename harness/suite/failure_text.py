"""A failed scenario read first in the user's words: the step's Gherkin line with its feature file and line, then
the step's message without pytest's explanation of the assert, in the terminal, the JUnit message and the Allure
report. pytest's frames follow with --tb=long (short, native), and stay whole in the Allure report's trace.

Registered after harness.suite.known_defects, so that it reads the report once that plugin has judged it; a report
that plugin rewrote (its text says how a known defect was not what was declared) is left as it wrote it.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from _pytest._code.code import (
    ExceptionChainRepr,
    ExceptionRepr,
    ReprEntry,
    ReprFileLocation,
    ReprTraceback,
)

from harness.suite.failed_step import FailedStep, failed_step

FRAMES_STYLES = ("long", "short", "native")  # --tb styles asked for by name: pytest's frames follow the verdict
ALLURE_WHERE = "\n\nat "  # starts the Allure message's last line; allurerc.json's categories read only before it


@dataclass(frozen=True)
class Verdict:
    """What a failed step says, first: where, as written, and the message as the step worded it."""

    step: FailedStep
    words: str  # the message as the step wrote it, over one or more lines
    code: str | None  # the innermost line of the suite's own code that failed (steps/, actors/, pages/, harness/)

    def headline(self) -> str:
        """One line: the Gherkin line, its file and line, the message's first line."""
        return f"'{self.step.line}' ({self.step.where()}): {self.words.splitlines()[0] if self.words else ''}"

    def lines(self) -> list[str]:
        rest = self.words.splitlines()[1:]
        hint = f"(code: {self.code}; " if self.code else "("
        return [self.headline(), *rest, f"{hint}every frame: pytest --tb=long, or the Allure report's trace)"]

    def allure_message(self) -> str:
        return f"{self.words}{ALLURE_WHERE}'{self.step.line}' ({self.step.where()})"


def in_the_users_words(step: FailedStep) -> str:
    """The step's message: without the explanation pytest adds to a failed assert (its `assert ...` and `+ where`
    lines), kept whole where nothing comes before it; an error that is not an assertion named by its type."""
    if step.error != "AssertionError":
        return f"{step.error}: {step.message}" if step.message else step.error
    lines = step.message.splitlines()
    cut = next((i for i, line in enumerate(lines) if line.startswith("assert ")), len(lines))
    return "\n".join(lines[:cut]).rstrip() if cut else step.message


def own_code(longrepr: ExceptionRepr) -> str | None:
    """The innermost frame in the project's code (not a library under the virtual environment), as path:line."""
    entries = longrepr.reprtraceback.reprentries
    for entry in reversed(entries):
        where = entry.reprfileloc if isinstance(entry, ReprEntry) else None
        if where is not None and ".venv" not in where.path and "site-packages" not in where.path:
            return f"{where.path}:{where.lineno}"
    return None


def verdict_repr(verdict: Verdict, original: ExceptionRepr, style: str) -> ExceptionChainRepr:
    """pytest's own kind of report, so that pytest-xdist carries it and the terminal and JUnit print it: the verdict,
    then, for a --tb style asked for by name, pytest's frames."""
    # --tb=line prints the crash as path:line: message, which then need not name the place twice
    said = verdict.headline() if style != "line" else verdict.headline().replace(f" ({verdict.step.where()})", "", 1)
    crash = ReprFileLocation(verdict.step.feature, verdict.step.line_number, said)
    own = ReprTraceback([ReprEntry(verdict.lines(), None, None, None, "value")], None, "value")
    chain: list = [(own, crash, None)]
    if style in FRAMES_STYLES:
        frames = original.chain if isinstance(original, ExceptionChainRepr) else \
            [(original.reprtraceback, original.reprcrash, None)]
        chain = [(own, crash, "pytest's frames:"), *frames]
    rewritten = ExceptionChainRepr(chain)
    rewritten.reprtraceback, rewritten.reprcrash = own, crash  # the short summary and JUnit's message: the verdict
    for name, content, sep in original.sections:
        rewritten.addsection(name, content, sep)
    return rewritten


VERDICT = pytest.StashKey[tuple[Verdict, str]]()  # the verdict and pytest's whole report, for the Allure result


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):  # noqa: ANN201
    outcome = yield
    rep: pytest.TestReport = outcome.get_result()
    if rep.when == "call" and rep.failed and isinstance(rep.longrepr, ExceptionRepr):
        step = failed_step(item)
        if step is None:
            return
        verdict = Verdict(step, in_the_users_words(step), own_code(rep.longrepr))
        item.stash[VERDICT] = (verdict, str(rep.longrepr))
        rep.longrepr = verdict_repr(verdict, rep.longrepr, item.config.option.tbstyle)
    elif rep.when == "teardown" and VERDICT in item.stash:
        verdict, frames = item.stash[VERDICT]
        _onto_allure(item, verdict.allure_message(), frames)


def _onto_allure(item: pytest.Item, message: str, trace: str) -> None:
    """The Allure result's status message in the user's words and its trace with every frame. Allure's pytest-bdd
    listener takes the message from the exception itself; it writes the result after this, on the same teardown."""
    for plugin in item.config.pluginmanager.get_plugins():
        uuids = getattr(plugin, "nodeid_to_uuid", None)
        if uuids is None or item.nodeid not in uuids or not hasattr(plugin, "lifecycle"):
            continue
        with plugin.lifecycle.update_test_case(uuid=uuids[item.nodeid]) as result:
            if result is not None and result.statusDetails is not None and result.status in ("failed", "broken"):
                result.statusDetails.message = message
                result.statusDetails.trace = trace
