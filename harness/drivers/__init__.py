"""App drivers: one module per kind of app, found by the target file's `driver` key.

`driver = "open-webui"` loads `harness/drivers/open_webui.py`; `driver = "my_team.chat_driver"` loads a team's own
module from the Python path. Either module exposes `DRIVER`, a subclass of `harness.drivers.base.AppDriver`.
"""

from __future__ import annotations

import importlib
from pathlib import Path

from harness.drivers.base import AppDriver, DriverError
from harness.target import Target

SHIPPED = Path(__file__).resolve().parent


def shipped_drivers() -> list[str]:
    return sorted(p.stem.replace("_", "-") for p in SHIPPED.glob("*.py") if p.stem not in ("__init__", "base"))


def load_driver(target: Target) -> AppDriver:
    name = target.driver
    module_name = f"harness.drivers.{name.replace('-', '_')}" if "." not in name else name
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as e:
        if e.name is not None and module_name.startswith(e.name):
            raise DriverError(f"{target.path.name} names the driver {name!r}, which does not exist; use one of "
                              f"{', '.join(shipped_drivers())} or a module on the Python path") from None
        raise
    driver = getattr(module, "DRIVER", None)
    if not (isinstance(driver, type) and issubclass(driver, AppDriver)):
        raise DriverError(f"driver module {module_name} has no DRIVER class deriving from AppDriver")
    return driver(target)
