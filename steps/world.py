"""The world a scenario's steps share: its app and driver, its users (created through the driver and deleted
afterwards), their browsers and what they said. Steps read and write it; fixtures create and tear it down."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from playwright.sync_api import Page

from harness.app_factory import AppFactory
from harness.app_launcher import RunningApp
from harness.browser_sessions import BrowserSessions
from harness.drivers.base import Account, AppDriver, Capability, UserSession
from harness.legacy_seed import LegacyMemory, MigrationCounts
from harness.replay.checks import ReplayChecks
from harness.replay.history import ReplayHistory
from harness.snapshots import Snapshot
from harness.target import Target
from harness.test_data import TestData
from pages.chat_page import ChatPage
from pages.conversation_list import ConversationList
from pages.login_page import LoginPage

if TYPE_CHECKING:
    from steps.session_runner import GeneratedSession
    from steps.upgrade_steps import VersionRun

_FACT = re.compile(r"^(?:actually,?\s+)?my\s+(?P<key>.+?)\s+is\s+(?P<value>.+?)\.?$", re.IGNORECASE)


@dataclass(frozen=True)
class Fact:
    """A fact as the user told it, and the question and answer that test it."""

    key: str
    value: str

    @staticmethod
    def states_one(sentence: str) -> bool:
        return _FACT.match(sentence.strip()) is not None

    @classmethod
    def parse(cls, sentence: str) -> Fact:
        m = _FACT.match(sentence.strip())
        if not m:
            raise ValueError(f"{sentence!r} is not a fact of the form 'My <thing> is <value>.'")
        return cls(m.group("key"), m.group("value"))

    @property
    def sentence(self) -> str:
        return f"My {self.key} is {self.value}."

    @property
    def question(self) -> str:
        return f"What is my {self.key}?"

    @property
    def answer(self) -> str:
        return f"Your {self.key.lower()} is {self.value}."


@dataclass
class MigrationRun:
    """What the migration scenarios seed, run and compare."""

    legacy: list[LegacyMemory] = field(default_factory=list)  # what the legacy store held (generated in a step)
    owners: dict[str, str] = field(default_factory=dict)  # owner name -> user id, created when migrating
    snapshot: Snapshot | None = None  # a format-1 golden snapshot, whole (the pgvector-upgrade scenario reads it)
    replay: ReplayHistory | None = None  # a snapshot of any format, as the replay checks read it
    accounts: dict[str, Account] = field(default_factory=dict)  # replayed owners who can sign in (probes' owners)
    checks: ReplayChecks | None = None  # both checks of the replay, made once, read by two steps
    captured: Path | None = None  # a snapshot the scenario captured from the running app
    removed: str = ""  # the snapshot id of a memory whose vector a step removed by hand
    questions: list[str] = field(default_factory=list)
    counts: list[MigrationCounts] = field(default_factory=list)  # one per migration run, in order
    embedder: str = ""
    owners_created: bool = False

    @property
    def total(self) -> int:
        """How many memories the legacy store was given."""
        return self.replay.size if self.replay is not None else len(self.legacy)


@dataclass
class Actor:
    name: str
    account: Account
    scenario: Scenario
    page: Page | None = None
    profile: Path | None = None
    turns: list[tuple[str, str]] = field(default_factory=list)  # (role, text) as seen in this conversation
    told: list[Fact] = field(default_factory=list)
    turns_sent: int = 0  # every turn this user sent, in any conversation: what the app may still be writing from
    last_reply: str = ""
    recalled: list[str] = field(default_factory=list)
    signed_out_of: dict | None = None  # the browser's storage_state just before signing out
    had: tuple[list[str], list[str]] = ([], [])  # (conversation ids, memory ids) the account held when deleted
    _session: UserSession | None = None
    _session_app: RunningApp | None = None

    @property
    def app(self) -> RunningApp:
        return self.scenario.app

    @property
    def session(self) -> UserSession:
        """The user's API session on the scenario's current app (signed in again when the app was replaced)."""
        if self._session is None or self._session_app is not self.app:
            if self._session is not None:
                self._session.close()
            self._session = self.scenario.driver.session(self.app, self.account)
            self._session_app = self.app
        return self._session

    def _pages(self) -> tuple:
        if self.page is None:
            raise AssertionError(f"{self.name} has no browser open")
        return self.page, self.app.base_url, self.scenario.target.locators, self.scenario.target.api

    @property
    def chat(self) -> ChatPage:
        return ChatPage(*self._pages())

    @property
    def sidebar(self) -> ConversationList:
        return ConversationList(*self._pages())

    @property
    def login(self) -> LoginPage:
        return LoginPage(*self._pages())

    def settle(self) -> None:
        """Let the app finish the memory writes it makes on its own after this user's turns."""
        self.scenario.driver.settle(self.app, self.session, self.turns_sent)

    def close(self) -> None:
        if self._session is not None:
            self._session.close()


class Scenario:
    def __init__(self, target: Target, driver: AppDriver, app: RunningApp, data: TestData,
                 browsers: BrowserSessions, key: str, apps: AppFactory | None = None,
                 answer_check: str = "exact") -> None:
        self.target = target
        self.driver = driver
        self.app = app
        self.apps = apps
        self.app_settings: dict[str, str] = {}  # the settings of `app` when a step chose a variant
        self.data = data
        self.browsers = browsers
        self.answer_check = answer_check
        self.tag = data.unique_tag()
        self.fake = data.faker_for(key)
        self.actors: dict[str, Actor] = {}
        self.speaker = ""  # who spoke last: "the assistant answers" is about their last turn
        self.conversation = ""  # the conversation a step left open for a later one
        self.migration = MigrationRun()
        self.generated: GeneratedSession | None = None  # the generated session, once a step has drawn it
        self.upgrade: list[VersionRun] = []  # the two pgvector versions a snapshot was migrated onto
        self.notes: dict[str, Any] = {}  # what one step of an area leaves for a later one of the same area
        self._created: list[tuple[RunningApp, Account]] = []

    @property
    def created(self) -> list[tuple[RunningApp, Account]]:
        """Every account the scenario created, with the app it was created in."""
        return list(self._created)

    def require(self, capability: Capability) -> None:
        if capability not in self.driver.capabilities:
            pytest.skip(f"needs {capability.value}, which the {self.driver.name} driver does not offer")

    def create_user(self, name: str, email_local: str | None = None, domain: str = "x.test",
                    user_id: str | None = None, tag: str | None = None) -> Actor:
        """A new account; `tag` (default: the scenario's) makes the address unique to this run."""
        if user_id is not None:
            self.require(Capability.REQUESTED_USER_IDS)
        email = self.data.email(email_local or name.lower(), tag or self.tag, domain)
        account = self.driver.create_user(self.app, name, email, self.data.password(), user_id)
        if user_id is not None and account.id != user_id:
            raise AssertionError(f"the app gave {name} the id {account.id!r} instead of the requested {user_id!r}")
        self._created.append((self.app, account))
        actor = Actor(name, account, self)
        self.actors[name] = actor
        return actor

    def require_apps(self, why: Capability) -> AppFactory:
        """Scenarios that need the app with other settings can only run where the suite starts the app itself."""
        self.require(why)
        if self.apps is None:
            pytest.skip(f"needs {why.value}: an app the suite starts (not --base-url)")
        return self.apps

    def use_variant(self, why: Capability, **settings: str) -> RunningApp:
        """Switch this scenario to the app with these settings (its own instance and data)."""
        self.app_settings = {**self.app_settings, **settings}
        self.app = self.require_apps(why).with_settings(self.app_settings)
        return self.app

    def actor(self, name: str) -> Actor:
        if name not in self.actors:
            self.create_user(name)
        return self.actors[name]

    def open_signed_in_browser(self, actor: Actor) -> Page:
        actor.page = self.browsers.signed_in(f"{self.app.base_url}|{actor.account.id}",
                                             lambda: self.driver.browser_state(self.app, actor.session))
        return actor.page

    def tear_down(self) -> None:
        for actor in self.actors.values():
            actor.close()
        for app, account in self._created:
            if app.running:
                self.driver.delete_user(app, account)
