"""Makes `pytest features/` collect the .feature files themselves: each becomes a module with one test per
scenario, named as pytest-bdd's own `scenarios()` names them (harness.scenarios). A scenario with a step about the
change "<change>" runs once for each change the target declares (harness.changes), the change's name in its id."""

from __future__ import annotations

import types
from pathlib import Path

import pytest
from pytest_bdd import scenario
from pytest_bdd.feature import get_feature

from harness.changes import CHANGE_PLACEHOLDER
from harness.scenarios import scenario_tests
from harness.target import load_target


def _each_change(change_name: str) -> None:
    """A scenario run once per declared change: the parameter makes `change_name` one of its fixtures."""


def scenario_module(path: Path) -> types.ModuleType:
    module = types.ModuleType(f"features.{path.stem}")
    module.__file__ = str(path)
    templates = get_feature(str(path.parent), path.name).scenarios
    for test_name, title in scenario_tests(path).items():
        per_change = any(CHANGE_PLACEHOLDER in step.name for step in templates[title].steps)
        body = _each_change if per_change else (lambda: None)
        setattr(module, test_name, scenario(path.name, title, features_base_dir=str(path.parent))(body))
    return module


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "change_name" not in metafunc.fixturenames:
        return
    names = sorted(load_target(metafunc.config.getoption("--target")).changes)  # as collected, so when run
    # No change declared: one case, which its first step skips in one line (an empty parametrization says nothing).
    metafunc.parametrize("change_name", names or [""], ids=names or ["no change declared"])


class FeatureModule(pytest.Module):
    def collect(self):  # noqa: ANN201 - pytest's own signature
        self.obj = scenario_module(self.path)  # the module object is built, not imported (a bad tag fails here)
        return super().collect()


def pytest_collect_file(parent: pytest.Collector, file_path: Path) -> pytest.Module | None:
    return FeatureModule.from_parent(parent, path=file_path) if file_path.suffix == ".feature" else None
