"""Makes `pytest features/` collect the .feature files themselves: each becomes a module with one test per
scenario, named as pytest-bdd's own `scenarios()` names them (harness.scenarios)."""

from __future__ import annotations

import types
from pathlib import Path

import pytest
from pytest_bdd import scenario

from harness.scenarios import scenario_tests


def scenario_module(path: Path) -> types.ModuleType:
    module = types.ModuleType(f"features.{path.stem}")
    module.__file__ = str(path)
    for test_name, title in scenario_tests(path).items():
        setattr(module, test_name, scenario(path.name, title, features_base_dir=str(path.parent))(lambda: None))
    return module


class FeatureModule(pytest.Module):
    def collect(self):  # noqa: ANN201 - pytest's own signature
        self.obj = scenario_module(self.path)  # the module object is built, not imported (a bad tag fails here)
        return super().collect()


def pytest_collect_file(parent: pytest.Collector, file_path: Path) -> pytest.Module | None:
    return FeatureModule.from_parent(parent, path=file_path) if file_path.suffix == ".feature" else None
