"""The world every scenario has: the app under test (its handle), the cast of its actors, its test data and the
accounts it created (deleted afterwards). What an area's steps hand each other is a frozen record or a typed fixture
of that area (see steps/records.py), never kept here."""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path

import pytest
from faker import Faker

from actors import AppStage, actor_for
from harness.app.app_handle import AppHandle
from harness.browser.profiles import BrowserSessions
from harness.drivers.base import Account, Capability
from harness.users.actor import Actor
from harness.vocabulary.test_data import TestData
from harness.vocabulary.turn import Turn

# A user in the Gherkin: a capitalised first name ("Ana", "Ben").
NAME = r"(?P<name>[A-Z][a-z]+)"
HER = "(?:her|his|their)"  # what the Gherkin calls that user's own


class World:
    def __init__(self, app: AppHandle, data: TestData, browsers: BrowserSessions, key: str) -> None:
        self.app = app
        self.data = data
        self.browsers = browsers
        self.tag = data.unique_tag()  # makes the scenario's addresses unique to this run
        self.fake: Faker = data.faker_for(key)
        self.actors: dict[str, Actor] = {}
        self._created: list[tuple[AppHandle, Account]] = []

    @property
    def created(self) -> list[tuple[AppHandle, Account]]:
        """Every account the scenario created, with the app it was created in."""
        return list(self._created)

    def use_app(self, app: AppHandle) -> AppHandle:
        """The scenario goes on with this app (other settings, fresh data, or the app after a change)."""
        self.app = app
        return app

    def restart_app(self) -> AppHandle:
        """The app stopped and started on its own data, at the same address; every open page stays open and is back
        in touch with the app before the scenario goes on (a page with a live socket has reconnected: a message typed
        before then races the page's own reconnection, a move of its own, not a restart's)."""
        with ExitStack() as pages_back:
            for actor in self.actors.values():
                pages_back.enter_context(actor.back_after_app_restart())
            restarted = self.app.restarted()
        return self.use_app(restarted)

    def conversation_in_which(self, name: str, text: str) -> tuple[str, tuple[Turn, ...]]:
        """The one conversation of `name`'s in which she said `text`, and its turns, through the app's API once the
        app has written what her turns make."""
        actor = self.actors[name]
        actor.settle()
        session = actor.session
        every = [(cid, tuple(session.turns(cid))) for cid in session.conversation_ids()]
        found = [(cid, turns) for cid, turns in every if Turn("user", text) in turns]
        assert len(found) == 1, f"{name} has {len(found)} conversations in which she said {text!r}"
        return found[0]

    def use_operator_setting(self, promise: str, value: str, what: str) -> AppHandle:
        """The app started with `value` for a promise its operators may set ([operator_settings] `promise`, by the
        app setting that sets it), on data of its own; a target that declares no such setting skips, saying `what`."""
        setting = self.app.target.operator_settings.get(promise)
        if setting is None:
            pytest.skip(f"{self.app.target.path.name} declares no setting its operators {what} with "
                        f"([operator_settings] {promise})")
        return self.use_app(self.app.with_settings(Capability.APP_SETTINGS, **{setting: value}))

    def new_actor(self, name: str, account: Account, through_api: bool = False) -> Actor:
        """Another actor of an account (the same person on a second browser, a stranger at the sign-in page, a
        client of the app's API)."""
        return actor_for(name, account, self, through_api)

    def create_user(self, name: str, email_local: str | None = None, domain: str = "x.test",
                    user_id: str | None = None, tag: str | None = None, app: AppHandle | None = None,
                    through_api: bool = False) -> Actor:
        """A new account in the scenario's app, and its actor in the cast (speaking through the app's API if
        `through_api`); or in `app`, with an actor acting on that app, kept out of the cast. `tag` (default: the
        scenario's) makes the address unique to this run."""
        app = app or self.app
        email = self.data.email(email_local or name.lower(), tag or self.tag, domain)
        account = app.create_user(name, email, self.data.password(), user_id)
        self._created.append((app, account))
        if app is not self.app:
            return actor_for(name, account, AppStage(app, self.browsers), through_api)
        actor = self.new_actor(name, account, through_api)
        self.actors[name] = actor
        return actor

    def add_by_tool(self, name: str) -> Actor:
        """A new account added on the app's command line, as its operators add one, and its actor in the cast."""
        account = self.app.add_user_by_tool(name, self.data.email(name.lower(), self.tag, "x.test"),
                                            self.data.password())
        self._created.append((self.app, account))
        self.actors[name] = self.new_actor(name, account)
        return self.actors[name]

    def add_in_data_folder(self, name: str, folder: Path) -> Actor:
        """A new account added on the app's command line to the databases of a data folder of the app's own, and its
        actor in the cast (the folder, and the account with it, is removed at the end)."""
        account = self.app.add_user_in_data_folder(folder, name, self.data.email(name.lower(), self.tag, "x.test"),
                                                   self.data.password())
        self.actors[name] = self.new_actor(name, account)
        return self.actors[name]

    def actor(self, name: str) -> Actor:
        """The cast's actor of that name, with an account of their own from their first mention."""
        if name not in self.actors:
            self.create_user(name)
        return self.actors[name]

    def forget(self, name: str) -> Actor:
        """Take an actor out of the cast (their account was deleted); a new one may take the name."""
        actor = self.actors.pop(name)
        actor.close()
        return actor

    def tear_down(self) -> None:
        for actor in self.actors.values():
            actor.close()
        for app, account in self._created:
            if app.running_now:
                app.delete_user(account)
