"""The driver's core: what every app answers (its life cycle, its users and their sessions); the optional parts an
app implements are the protocols of `parts.py`, and what it does not offer it declares once, in `lacks`."""

from __future__ import annotations

import secrets
from abc import ABC, abstractmethod
from collections.abc import Callable
from pathlib import Path
from typing import ClassVar

from harness.app.app_launcher import RunningApp
from harness.app.app_tools import embed_texts_f32
from harness.app.target import Target
from harness.drivers.base.capabilities import Capability, DriverError
from harness.drivers.base.parts import PARTS, Lack, missing_calls, unoffered_but_implemented
from harness.drivers.base.records import Account, NewUser
from harness.drivers.base.session import UserSession

# Given by the suite to a driver: stop `app`, run `between` (a tool on its stopped data), start it again on the same
# data with `settings`; the suite keeps track of the new instance.
RestartApp = Callable[[RunningApp, dict[str, str], Callable[[], None] | None], RunningApp]


class AppDriver(ABC):
    """One kind of app. `target` holds its configuration (paths, locators, start command, secrets' variables)."""

    name = "app"
    # Declared once: each capability the app does not offer, with why (parts.AppLacks: the app has no such feature,
    # and where that shows; parts.NotBuilt: the suite has not built its part yet). It offers every other one, and
    # implements each one's part (parts.PARTS); `capabilities` is derived.
    lacks: ClassVar[dict[Capability, Lack]] = {}
    capabilities: ClassVar[frozenset[Capability]] = frozenset(Capability)
    lists_capabilities: ClassVar[bool] = False
    seeding_concurrency = 1  # how many seeding calls the app may be sent at once (an agent server's are slow turns)
    kept_fields: tuple[str, ...] = ()  # which of MEMORY_FIELDS recall_by_own_text reads back of each memory
    writes_memories_later = False  # the app writes memories on its own after a turn: `settle` waits for them

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        if "capabilities" in cls.__dict__:  # a driver written before parts lists them: refused when loaded
            cls.lists_capabilities = True
        else:
            cls.capabilities = frozenset(Capability) - cls.lacks.keys()

    def __init__(self, target: Target) -> None:
        self.target = target

    def why_not(self, capability: Capability) -> str:
        """One line: the capability, its part, and why the app does not offer it (the app lacks the feature, or the
        suite has not built it yet)."""
        lack = self.lacks.get(capability)
        if lack is None:
            return f"needs {capability.value}, which the {self.name} driver does not offer"
        return lack.skip_line(self.name, capability)

    # -- life cycle ------------------------------------------------------------------------------------------------
    @abstractmethod
    def start(self, *, pg_dsn: str, redis_url: str, settings: dict[str, str], log_path: Path,
              data_dir: Path | None = None, port: int | None = None) -> RunningApp:
        """Start the app on this database and Redis with `settings`; return it once healthy. `data_dir`: the data
        folder of an earlier instance to start on again (a restart), for apps that keep data in files; `port`: the
        earlier instance's port (a browser's local storage belongs to an origin, port included)."""

    @abstractmethod
    def attach(self, base_url: str, admin_token: str | None) -> RunningApp:
        """An app that is already running: check it answers, start nothing."""

    def describe(self, app: RunningApp) -> dict[str, str]:
        """Name, version and stores of the app, for the report's environment."""
        return {"app": self.target.name, "version": str(app.health.get("version", ""))}

    # -- users -----------------------------------------------------------------------------------------------------
    @abstractmethod
    def create_user(self, app: RunningApp, name: str, email: str, password: str,
                    user_id: str | None = None) -> Account:
        """Create a user through the app's admin API; `user_id` only with REQUESTED_USER_IDS."""

    @abstractmethod
    def delete_user(self, app: RunningApp, account: Account) -> None:
        """Delete the user (a user already gone is fine)."""

    @abstractmethod
    def session(self, app: RunningApp, account: Account) -> UserSession:
        """Sign the user in through the API."""

    @abstractmethod
    def browser_state(self, app: RunningApp, session: UserSession) -> dict:
        """A Playwright storage_state (cookies and local storage) that opens the app signed in as the user."""

    def shown_identity(self, account: Account) -> str:
        """How the signed-in user is named on the page."""
        return account.email

    # -- memory ----------------------------------------------------------------------------------------------------
    def settle(self, app: RunningApp, session: UserSession, turns_sent: int) -> None:  # noqa: B027
        """Wait until the memory writes the app makes on its own after a user's turns have landed (apps that write
        memories server-side, later). Waits for the app's work, never decides what it should have written."""

    # -- faults: the regressions or misconfigurations the kill matrix switches on ----------------------------------
    def fault_catalogue(self) -> list[dict[str, str]]:
        """Each entry: name, bug_class, and what the user sees; empty when the driver knows none."""
        return []

    def check_faults(self, names: list[str]) -> None:
        known = {f["name"] for f in self.fault_catalogue()}
        unknown = [n for n in names if n not in known]
        if unknown:
            raise DriverError(f"unknown fault(s) {', '.join(unknown)} for {self.target.name}; its catalogue has: "
                              f"{', '.join(sorted(known)) or 'nothing'}")

    # -- users in bulk, and the app's embedder ---------------------------------------------------------------------
    def import_users(self, app: RunningApp, users: list[NewUser]) -> dict[str, str]:
        """Create many users at once; one by one through the admin API unless the app has a bulk import. Users
        without a password get a random one nobody knows. Returns the app's own id of each user whose requested id
        it did not keep (empty with REQUESTED_USER_IDS: it kept every one)."""
        for user in users:
            self.create_user(app, user.name, user.email, user.password or secrets.token_urlsafe(18), user.id)
        return {}

    def embed(self, texts: list[str], embedder: str) -> list[bytes | None]:
        """Each text as the app's own embedder embeds it (little-endian float32; None: the text has no vector),
        through the target's `embed` tool."""
        if not {"embed", "embed_f32"} & set(self.target.tools):
            raise DriverError(f"the {self.name} driver has no embedding tool: give {self.target.path.name} a "
                              "[tools] embed")
        return embed_texts_f32(self.target, texts, embedder)


def driver_class_errors(driver: type[AppDriver]) -> list[str]:
    """What keeps a driver class from loading, each in one line that says what to change: a driver written before
    parts (it lists `capabilities`), an offered capability whose part it does not implement, a lacked one it does."""
    guide = "see docs/targets.md, 'A third app'"
    if driver.lists_capabilities:
        return [f"the {driver.name} driver lists `capabilities`: a driver now declares what it lacks instead, "
                f"`lacks = {{Capability.X: AppLacks(why, source) or NotBuilt(why)}}`, and offers the rest; {guide}"]
    errors = []
    for capability in sorted(set(PARTS) & driver.capabilities):
        missing = missing_calls(driver, capability)
        if missing:
            errors.append(f"the {driver.name} driver offers {capability.name} but does not implement "
                          f"{', '.join(missing)}: implement them, or declare it in `lacks` with why; {guide}")
    for capability in unoffered_but_implemented(driver, driver.lacks):
        errors.append(f"the {driver.name} driver declares it lacks {capability.name} yet implements its part: take "
                      f"it out of `lacks`; {guide}")
    return errors
