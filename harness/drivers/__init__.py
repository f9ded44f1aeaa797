"""App drivers: one module per kind of app, found by the target file's `driver` key.

`driver = "open-webui"` loads `harness/drivers/open_webui.py` (or the package `harness/drivers/open_webui/`, a driver
as the parts it implements, as memchat's and Letta's are); `driver = "my_team.chat_driver"` or
`driver = "chat_driver"` loads a team's own module from the Python path (a plain name is a shipped driver first).
Either module exposes `DRIVER`, a subclass of `harness.drivers.base.AppDriver`.
"""

from __future__ import annotations

import importlib
from pathlib import Path

from harness.app.target import Target
from harness.drivers.base import AppDriver, DriverError

SHIPPED = Path(__file__).resolve().parent


def shipped_drivers() -> list[str]:
    modules = [p.stem for p in SHIPPED.glob("*.py")
               if p.stem not in ("__init__", "base") and not p.stem.endswith("_store")]  # a driver's helper module
    packages = [p.name for p in SHIPPED.iterdir() if (p / "__init__.py").is_file()]
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
    return driver(target)
