"""App drivers: one package (or module) per kind of app, found by the target file's `driver` key.

`driver = "letta"` loads the package `harness/drivers/letta/` (a driver as the parts it implements, as every shipped
one is; a module `harness/drivers/<name>.py` does too); `driver = "my_team.chat_driver"` or
`driver = "chat_driver"` loads a team's own module from the Python path (a plain name is a shipped driver first).
Either module exposes `DRIVER`, a subclass of `harness.drivers.base.AppDriver` that declares what its app lacks and
implements the part of every capability it offers (`harness.drivers.base.parts`): a driver that does not is refused
here with one line saying what to change.
"""

from __future__ import annotations

import importlib
from pathlib import Path

from harness.app.target import Target
from harness.drivers.base import AppDriver, DriverError, driver_class_errors

SHIPPED = Path(__file__).resolve().parent


def shipped_drivers() -> list[str]:
    modules = [p.stem for p in SHIPPED.glob("*.py") if p.stem != "__init__"]
    packages = [p.name for p in SHIPPED.iterdir() if (p / "__init__.py").is_file() and p.name != "base"]
    return sorted(name.replace("_", "-") for name in modules + packages)


def load_driver(target: Target) -> AppDriver:
    name = target.driver
    candidates = [name] if "." in name else [f"harness.drivers.{name.replace('-', '_')}", name]
    for module_name in candidates:
        try:
            module = importlib.import_module(module_name)
            break
        except ModuleNotFoundError as e:
            if e.name is None or not module_name.startswith(e.name):
                raise  # the module exists, and something it imports does not
    else:
        raise DriverError(f"{target.path.name} names the driver {name!r}, which does not exist; use one of "
                          f"{', '.join(shipped_drivers())} or a module on the Python path")
    driver = getattr(module, "DRIVER", None)
    if not (isinstance(driver, type) and issubclass(driver, AppDriver)):
        raise DriverError(f"driver module {module_name} has no DRIVER class deriving from AppDriver")
    errors = driver_class_errors(driver)
    if errors:
        raise DriverError(errors[0] + (f" (and {len(errors) - 1} more like it)" if len(errors) > 1 else ""))
    return driver(target)
