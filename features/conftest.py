"""Makes `pytest features/` collect the .feature files themselves: each becomes a module with one test per
scenario, named as pytest-bdd's own `scenarios()` names them (harness.scenarios). A scenario with a step about the
change "<change>" runs once for each change the target declares (harness.changes), the change's name in its id, and
only for the sizes of history the target replays ([replay] history_sizes): the others are deselected."""

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


def _history_size(item: pytest.Item) -> int | None:
    """The <size> of a replay case (an example of a scenario run once per change), else None."""
    callspec = getattr(item, "callspec", None)
    if callspec is None or "change_name" not in callspec.params:
        return None
    size = callspec.params.get("_pytest_bdd_example", {}).get("size")  # pytest-bdd's own parameter
    return int(size.replace(",", "")) if size else None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    sizes = {item: size for item in items if (size := _history_size(item)) is not None}
    if not sizes:
        return
    target = load_target(config.getoption("--target"))
    if not target.changes:  # nothing to replay: each scenario's first case says so in one line, the others add nothing
        scenarios = [item.nodeid.partition("[")[0] for item in sizes]
        other_sizes = [item for n, item in enumerate(sizes) if scenarios[n] in scenarios[:n]]
    else:
        other_sizes = [item for item, size in sizes.items() if not target.replays_history_of(size)]
    if other_sizes:
        config.hook.pytest_deselected(items=other_sizes)
        left_out = set(other_sizes)
        items[:] = [item for item in items if item not in left_out]


class FeatureModule(pytest.Module):
    def collect(self):  # noqa: ANN201 - pytest's own signature
        self.obj = scenario_module(self.path)  # the module object is built, not imported (a bad tag fails here)
        return super().collect()


def pytest_collect_file(parent: pytest.Collector, file_path: Path) -> pytest.Module | None:
    return FeatureModule.from_parent(parent, path=file_path) if file_path.suffix == ".feature" else None
