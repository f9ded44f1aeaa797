"""The world a scenario's steps share: its app, its users (created through the API and deleted afterwards), their
browsers and what they said. Steps read and write it; fixtures create and tear it down."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from playwright.sync_api import Page

from harness.api_client import Account, AdminApi, UserApi
from harness.app_factory import AppFactory
from harness.app_launcher import RunningApp
from harness.browser_sessions import BrowserSessions
from harness.target import Target
from harness.test_data import TestData
from pages.chat_page import ChatPage
from pages.conversation_list import ConversationList
from pages.login_page import LoginPage

_FACT = re.compile(r"^(?:actually,?\s+)?my\s+(?P<key>.+?)\s+is\s+(?P<value>.+?)\.?$", re.IGNORECASE)


@dataclass(frozen=True)
class Fact:
    """A fact as the user told it, and the question and answer that test it."""

    key: str
    value: str

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
class Actor:
    name: str
    account: Account
    scenario: Scenario
    page: Page | None = None
    profile: Path | None = None
    turns: list[tuple[str, str]] = field(default_factory=list)  # (role, text) as seen in this conversation
    told: list[Fact] = field(default_factory=list)
    last_reply: str = ""
    recalled: list[str] = field(default_factory=list)
    _api: UserApi | None = None

    @property
    def app(self) -> RunningApp:
        return self.scenario.app

    @property
    def api(self) -> UserApi:
        if self._api is None or str(self._api.http.base_url).rstrip("/") != self.app.base_url:
            self._api = UserApi(self.scenario.target, self.app.base_url, self.account)
        return self._api

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

    def storage_state(self) -> dict:
        return {"cookies": self.api.cookies(), "origins": []}

    def close(self) -> None:
        if self._api is not None:
            self._api.close()


class Scenario:
    def __init__(self, target: Target, app: RunningApp, data: TestData, browsers: BrowserSessions,
                 key: str, apps: AppFactory | None = None) -> None:
        self.target = target
        self.app = app
        self.apps = apps
        self.app_settings: dict[str, str] = {}  # the settings of `app` when a step chose a variant
        self.data = data
        self.browsers = browsers
        self.tag = data.unique_tag()
        self.fake = data.faker_for(key)
        self.actors: dict[str, Actor] = {}
        self.notes: dict[str, object] = {}  # what one step leaves for a later one (conversation ids, counts)
        self._created: list[tuple[RunningApp, str]] = []

    def admin(self, app: RunningApp | None = None) -> AdminApi:
        app = app or self.app
        return AdminApi(self.target, app.base_url, app.admin_token)

    def create_user(self, name: str, email_local: str | None = None, domain: str = "x.test",
                    user_id: str | None = None) -> Actor:
        email = self.data.email(email_local or name.lower(), self.tag, domain)
        admin = self.admin()
        try:
            account = admin.create_user(email, self.data.password(), user_id)
        finally:
            admin.close()
        self._created.append((self.app, account.id))
        actor = Actor(name, account, self)
        self.actors[name] = actor
        return actor

    def require_apps(self, why: str) -> AppFactory:
        """Scenarios that need the app with other settings can only run where the suite starts the app itself."""
        if self.apps is None:
            pytest.skip(f"{why}: needs an app the suite starts (not --base-url)")
        return self.apps

    def use_variant(self, **settings: str) -> RunningApp:
        """Switch this scenario to the app with these settings (its own instance and database)."""
        self.app_settings = {**self.app_settings, **settings}
        self.app = self.require_apps("other app settings").with_settings(self.app_settings)
        return self.app

    def actor(self, name: str) -> Actor:
        if name not in self.actors:
            self.create_user(name)
        return self.actors[name]

    def open_signed_in_browser(self, actor: Actor) -> Page:
        actor.page = self.browsers.signed_in(f"{self.app.base_url}|{actor.account.email}", actor.storage_state)
        return actor.page

    def tear_down(self) -> None:
        for actor in self.actors.values():
            actor.close()
        for app, user_id in self._created:
            if app.process is None or app.process.poll() is None:
                admin = self.admin(app)
                try:
                    admin.delete_user(user_id)
                finally:
                    admin.close()
