"""The apps a worker runs: the shared one, and one per distinct set of settings for scenarios that need other
settings (an embedding model, an index kind, a movable clock, a misconfiguration), each on fresh data of its own."""

from __future__ import annotations

import hashlib
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import cast
from urllib.parse import urlsplit

from harness.app.app_launcher import RunningApp
from harness.drivers.base import AppDriver, DriverError, OwnDatabases, StoppedApp
from harness.services.databases import create_database, drop_database


class AppFactory:
    def __init__(self, driver: AppDriver, pg_admin_dsn: str, redis_url: str, db_prefix: str,
                 base_settings: dict[str, str], log_dir: Path) -> None:
        self.driver = driver
        self.pg_admin_dsn = pg_admin_dsn
        self.redis_url = redis_url
        self.db_prefix = db_prefix
        self.base_settings = base_settings  # e.g. the faults the run switches on, for every instance
        self.log_dir = log_dir
        self._cached: dict[tuple, RunningApp] = {}
        self._owned: list[RunningApp] = []
        self._scenario: list[RunningApp] = []  # started for the current scenario alone (fresh data, a restart)
        self.companions: list[AppFactory] = []  # other factories of the worker, ended with this one's scenarios
        self._databases: list[str] = []
        self._data_dirs: set[Path] = set()  # the data folders its apps were given (Open WebUI's, Letta's), removed last
        self._fresh = 0

    def new_database(self) -> str:
        """An empty database of this factory's server, for a scenario to fill (a store restored onto it)."""
        self._fresh += 1
        return self.database(f"restored{self._fresh}")

    def database(self, suffix: str) -> str:
        name = f"{self.db_prefix}_{suffix}"
        dsn = create_database(self.pg_admin_dsn, name)
        self._databases.append(name)
        return dsn

    def start(self, pg_dsn: str, settings: dict[str, str], label: str) -> RunningApp:
        started = time.monotonic()
        app = self.driver.start(pg_dsn=pg_dsn, redis_url=self.redis_url, settings={**self.base_settings, **settings},
                                log_path=self.log_dir / f"{self.db_prefix}-{label}.log")
        app.started_in_s = time.monotonic() - started
        self._owned.append(app)
        if app.data_dir is not None:
            self._data_dirs.add(app.data_dir)
        return app

    def shared(self) -> RunningApp:
        return self.with_settings({})

    def with_settings(self, settings: dict[str, str]) -> RunningApp:
        """One app per distinct settings, started on first use and kept for the session."""
        key = tuple(sorted(settings.items()))
        if key not in self._cached:
            label = "main" if not settings else hashlib.sha1(repr(key).encode()).hexdigest()[:8]
            self._cached[key] = self.start(self.database(label), settings, label)
        return self._cached[key]

    def fresh(self, settings: dict[str, str], pg_dsn: str | None = None) -> RunningApp:
        """An app on new data of its own (or on the database `pg_dsn` of this factory's server, one a scenario
        filled), for a scenario that will restart it."""
        self._fresh += 1
        label = f"fresh{self._fresh}"
        app = self.start(pg_dsn or self.database(label), settings, label)
        self._scenario.append(app)
        return app

    def new_data_folder(self) -> Path:
        """A data folder nothing has used yet, for an app to keep its own databases in (removed at the end)."""
        parent = Path(tempfile.mkdtemp(prefix="memtest-own-", dir="/tmp"))  # short: its servers' sockets go in it
        self._data_dirs.add(parent)
        return parent / "data"

    def on_own_databases(self, folder: Path, port: int | None = None, pg_dsn: str | None = None) -> RunningApp:
        """The app started, for the running scenario, on databases of its own in `folder` (at `port`: an earlier
        instance's; given `pg_dsn`, on that database and its other stores its own)."""
        self._fresh += 1
        own = cast(OwnDatabases, self.driver)  # the app handle has required OWN_DATABASES
        app = own.start_on_own_databases(folder, self.log_dir / f"{self.db_prefix}-own{self._fresh}.log", port, pg_dsn)
        self._owned.append(app)
        self._scenario.append(app)
        return app

    def stop_own(self, app: RunningApp, interrupt: bool = False) -> StoppedApp:
        """An app on its own databases stopped as its operator stops it, however it ends."""
        if app not in self._scenario:
            raise ValueError(f"the app at {app.base_url} is not the running scenario's to stop")
        stopped = cast(OwnDatabases, self.driver).stop_on_own_databases(app, interrupt)
        if app in self._owned:
            self._owned.remove(app)
        return stopped

    def restart(self, app: RunningApp, settings: dict[str, str], between: Callable[[], None] | None) -> RunningApp:
        """Stop `app`, run `between` on its stopped data, and start it again on the same data with `settings`."""
        if app.redis_url is None and app.data_dir is not None:  # on stores of its own: as its operator restarts it
            stopped = self.stop_own(app)
            if stopped.wrong():
                raise DriverError(f"the app on its own databases, stopped {stopped.how} to start it again, "
                                  f"{'; '.join(stopped.wrong())}")
            if between is not None:
                between()
            return self.on_own_databases(app.data_dir, urlsplit(app.base_url).port, app.pg_dsn)
        self.stop(app)
        if between is not None:
            between()
        self._fresh += 1
        new = self.driver.start(pg_dsn=str(app.pg_dsn), redis_url=self.redis_url, settings=settings,
                                log_path=self.log_dir / f"{self.db_prefix}-restart{self._fresh}.log",
                                data_dir=app.data_dir, port=urlsplit(app.base_url).port)
        self._owned.append(new)
        if app not in self._cached.values():  # a shared app restarted stays shared; anything else is the scenario's
            self._scenario.append(new)
        return new

    def end_scenario(self) -> None:
        """Stop the apps started for the scenario that ended: each holds database connections (memchat up to 8), and
        kept to the end of the session they exhausted a server's max_connections (100) within one run."""
        for app in self._scenario:
            if app in self._owned:
                self.stop(app)
        self._scenario.clear()
        for factory in self.companions:
            factory.end_scenario()

    def stop_scenario_app(self, app: RunningApp) -> None:
        """Stop an app the running scenario started for itself (never one other scenarios share)."""
        if app not in self._scenario:
            raise ValueError(f"the app at {app.base_url} is shared with other scenarios: it is not the scenario's to "
                             "stop")
        self.stop(app)

    def stop(self, app: RunningApp) -> None:
        app.stop()
        if app in self._owned:
            self._owned.remove(app)

    def close(self) -> None:
        for app in list(self._owned):
            app.stop()
        for name in self._databases:
            try:
                drop_database(self.pg_admin_dsn, name)
            except Exception:  # noqa: BLE001 - a leftover database must not hide the run's real outcome
                pass
        for folder in self._data_dirs:  # else every run leaves its apps' data folders in /tmp
            shutil.rmtree(folder, ignore_errors=True)
