"""Which Gherkin line a scenario failed at, and with what: recorded as pytest-bdd reports a step's error, read by
the verdicts (a known defect is judged by its step and message) and by the failure's first lines."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

FAILED_STEP = pytest.StashKey["FailedStep"]()


@dataclass(frozen=True)
class FailedStep:
    """The step a scenario failed at: its line as written in the feature file (keyword and an outline's
    <placeholders> included), where that is, and the failure's message."""

    feature: str  # the feature file, relative to where pytest runs (features/x.feature)
    line_number: int
    line: str  # as written, stripped
    message: str
    error: str  # the exception's type, for a failure that is not an assertion

    def where(self) -> str:
        return f"{self.feature}:{self.line_number}"

    def observed(self) -> str:
        """In a line: the step, where it is, and the message's first line."""
        first = next((part.strip() for part in self.message.splitlines() if part.strip()), self.error)
        return f"'{self.line}' ({self.where()}): {first}"


def line_as_written(feature, scenario, step) -> str:  # noqa: ANN001 - pytest-bdd's Feature, Scenario, Step
    """The step's line as the feature file wrote it, from the feature as pytest-bdd parsed it when it collected the
    scenario (not from the file, which may have changed since): its keyword, and an outline's <placeholders>."""
    template = feature.scenarios.get(scenario.name)
    written = next((s for s in (template.steps if template else []) if s.line_number == step.line_number), step)
    return f"{written.keyword} {written.name}".strip()


def failed_step(item: pytest.Item) -> FailedStep | None:
    return item.stash.get(FAILED_STEP, None)


def _record(request: pytest.FixtureRequest, feature, scenario, step,  # noqa: ANN001
            exception: BaseException) -> None:
    written = line_as_written(feature, scenario, step)
    base = request.config.invocation_params.dir
    path = Path(feature.filename)
    shown = str(path.relative_to(base)) if path.is_relative_to(base) else feature.rel_filename
    request.node.stash[FAILED_STEP] = FailedStep(shown, step.line_number, written, str(exception),
                                                 type(exception).__name__)


def pytest_bdd_step_error(request: pytest.FixtureRequest, feature, scenario, step, step_func,  # noqa: ANN001
                          step_func_args, exception) -> None:  # noqa: ANN001
    _record(request, feature, scenario, step, exception)


def pytest_bdd_step_func_lookup_error(request: pytest.FixtureRequest, feature, scenario, step,  # noqa: ANN001
                                      exception) -> None:  # noqa: ANN001
    _record(request, feature, scenario, step, exception)
