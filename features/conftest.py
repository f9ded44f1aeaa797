"""Makes `pytest features/` collect the .feature files themselves: each becomes a module of its scenarios."""

from __future__ import annotations

import types
from pathlib import Path

import pytest


class FeatureModule(pytest.Module):
    def _getobj(self) -> types.ModuleType:
        module = types.ModuleType(f"features.{self.path.stem}")
        module.__file__ = str(self.path)
        # pytest-bdd's scenarios() binds test functions into the calling module's namespace.
        exec(compile(f"from pytest_bdd import scenarios\nscenarios({str(self.path)!r})", str(self.path), "exec"),
             module.__dict__)
        return module


def pytest_collect_file(parent: pytest.Collector, file_path: Path) -> pytest.Module | None:
    if file_path.suffix == ".feature":
        return FeatureModule.from_parent(parent, path=file_path)
    return None
