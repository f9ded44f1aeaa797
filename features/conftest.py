"""Makes `pytest features/` collect the .feature files themselves: each becomes a test module bound by pytest-bdd's
public API, as a test module binds its feature file: `scenarios("x.feature")` run in the module's namespace for its
scenarios, and `@scenario` for those that run once per value of one of the suite's own parameters (a step about the
change "<change>": once per change the target declares; about the "<index kind>" index: once per index kind), the
value's name in the test's id (harness.suite.scenarios, which also names the tests as pytest-bdd does). A case runs only
what the target replays through its change: the sizes of history ([replay] history_sizes, or the change's own) and the
index kinds (every one, or the change's own `index_kinds`); the other cases are deselected."""

from __future__ import annotations

import inspect
import types
from collections.abc import Callable
from pathlib import Path

import pytest
from pytest_bdd import scenario

from harness.app.target import Target, load_target
from harness.suite.scenarios import CHANGE, INDEX_KIND, OWN_PARAMETERS, OwnParameter, example_of, feature_scenarios

# What a test module holds to bind its feature file's scenarios (pytest-bdd binds into the caller's namespace).
BINDING = "from pytest_bdd import scenarios\n\nscenarios({feature!r}, features_base_dir={base!r})\ndel scenarios\n"


class BindingError(RuntimeError):
    """One line: pytest-bdd bound a feature's scenarios otherwise than harness.suite.scenarios names them."""


def _once_per(parameters: tuple[OwnParameter, ...]) -> Callable[..., None]:
    """A scenario's test function that asks for one value of each parameter: pytest-bdd makes them the test's
    fixtures, which pytest_generate_tests parametrizes."""
    def each(*values: str) -> None:
        """The scenario runs once per declared value of each of its parameters."""
    each.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter(p.fixture, inspect.Parameter.POSITIONAL_OR_KEYWORD) for p in parameters])
    return each


def scenario_module(path: Path) -> types.ModuleType:
    module = types.ModuleType(f"features.{path.stem}")
    module.__file__ = str(path)
    written = feature_scenarios(path)
    for s in written:  # first, so that scenarios() leaves them as they are
        if s.own_parameters:
            bind = scenario(path.name, s.title, features_base_dir=str(path.parent))
            setattr(module, s.test_name, bind(_once_per(s.own_parameters)))
    exec(compile(BINDING.format(feature=path.name, base=str(path.parent)), str(path), "exec"), module.__dict__)
    # In the feature file's order (pytest collects a module's tests in the order of its namespace).
    tests = {s.test_name: module.__dict__.pop(s.test_name, None) for s in written}
    unexpected = sorted(name for name in module.__dict__ if name.startswith("test_"))
    missing = sorted(name for name, test in tests.items() if test is None)
    if unexpected or missing:
        raise BindingError(f"{path.name}: pytest-bdd named its tests {unexpected} where harness.suite.scenarios names "
                           f"them {missing}: make harness.suite.scenarios.bdd_test_name name them as this pytest-bdd "
                           "does")
    module.__dict__.update(tests)
    return module


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    own = [p for p in OWN_PARAMETERS if p.fixture in metafunc.fixturenames]
    if not own:
        return
    target = load_target(metafunc.config.getoption("--target"))  # as collected, so when run
    for parameter in own:
        names = parameter.declared(target)
        # None declared: one case, which its first step skips in one line (an empty parametrization says nothing).
        metafunc.parametrize(parameter.fixture, names or [""], ids=parameter.ids(names))


def _history_size(item: pytest.Item) -> int | None:
    """The <size> of a replay case (an example of a scenario run once per change), else None."""
    example = example_of(item) if CHANGE.fixture in _params(item) else None
    size = example.get("size") if example else None
    return int(size.replace(",", "")) if size else None


def _params(item: pytest.Item) -> dict:
    return getattr(getattr(item, "callspec", None), "params", {})


def _not_replayed(target: Target, items: list[pytest.Item]) -> list[pytest.Item]:
    """The cases the target does not replay: a size, or an index kind, its change is not replayed with."""
    sizes = {item: size for item in items if (size := _history_size(item)) is not None}
    if not target.changes:  # nothing to replay: each scenario's first case says so in one line, the others add nothing
        scenarios = [item.nodeid.partition("[")[0] for item in sizes]
        return [item for n, item in enumerate(sizes) if scenarios[n] in scenarios[:n]]
    left_out = []
    for item in items:
        change, kind, size = _params(item).get(CHANGE.fixture), _params(item).get(INDEX_KIND.fixture), sizes.get(item)
        if change and ((size is not None and not target.replays_history_of(size, change))
                       or (kind and not target.searches_through(kind, change))):
            left_out.append(item)
    return left_out


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not any(CHANGE.fixture in _params(item) for item in items):
        return
    left_out = set(_not_replayed(load_target(config.getoption("--target")), items))
    if left_out:
        config.hook.pytest_deselected(items=[item for item in items if item in left_out])
        items[:] = [item for item in items if item not in left_out]


class FeatureModule(pytest.Module):
    def collect(self):  # noqa: ANN201 - pytest's own signature
        self.obj = scenario_module(self.path)  # the module object is built, not imported (a bad tag fails here)
        return super().collect()


def pytest_collect_file(parent: pytest.Collector, file_path: Path) -> pytest.Module | None:
    return FeatureModule.from_parent(parent, path=file_path) if file_path.suffix == ".feature" else None
