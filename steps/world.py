"""The world every scenario has: the app under test (its handle), the scenario's actors, its test data and the
accounts it created (deleted afterwards). Each area's own state is a typed fixture of that area (see steps/), never
kept here.

An actor is one user of the scenario in their browser: what they do is said in the user's words and done through the
page objects; what they said, were answered and saw is kept for later steps to compare.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from faker import Faker
from playwright.sync_api import Page

from harness.app_handle import AppHandle
from harness.browser_sessions import BrowserSessions
from harness.drivers.base import Account, UserSession
from harness.facts import Fact
from harness.test_data import TestData
from pages.chat_page import ChatPage
from pages.conversation_list import ConversationList
from pages.login_page import LoginPage

# A user in the Gherkin: a capitalised first name ("Ana", "Ben").
NAME = r"(?P<name>[A-Z][a-z]+)"


@dataclass
class Actor:
    name: str
    account: Account
    world: World
    page: Page | None = None
    profile: Path | None = None  # the browser profile of their own, once they have one
    turns: list[tuple[str, str]] = field(default_factory=list)  # (role, text) as seen in the open conversation
    told: list[Fact] = field(default_factory=list)
    turns_sent: int = 0  # every turn this user sent, in any conversation: what the app may still be writing from
    last_reply: str = ""
    recalled: list[str] = field(default_factory=list)  # memories the app showed it recalled for the last reply
    noted_conversation: str = ""  # the conversation a step noted for a later one (before closing the browser, ...)
    conversations: list[str] = field(default_factory=list)  # conversations seeded for this user, oldest first
    _session: UserSession | None = None
    _session_app: AppHandle | None = None

    @property
    def app(self) -> AppHandle:
        return self.world.app

    @property
    def session(self) -> UserSession:
        """The user's API session on the scenario's app (signed in again when the scenario chose another app)."""
        if self._session is None or self._session_app is not self.app:
            if self._session is not None:
                self._session.close()
            self._session = self.app.session(self.account)
            self._session_app = self.app
        return self._session

    # -- the pages they see ----------------------------------------------------------------------------------------
    def _pages(self) -> tuple:
        if self.page is None:
            raise AssertionError(f"{self.name} has no browser open")
        return self.page, self.app.base_url, self.app.target.locators, self.app.target.api

    @property
    def chat(self) -> ChatPage:
        return ChatPage(*self._pages())

    @property
    def sidebar(self) -> ConversationList:
        return ConversationList(*self._pages())

    @property
    def login(self) -> LoginPage:
        return LoginPage(*self._pages())

    # -- signing in and browsers -----------------------------------------------------------------------------------
    def sign_in(self) -> None:
        """A browser already signed in (the app's own sign-in state, cached), on a new conversation."""
        self.page = self.world.browsers.signed_in(f"{self.app.base_url}|{self.account.id}",
                                                  lambda: self.app.browser_state(self.session))
        self.chat.open_new()
        self.world.speaker = self.name

    def sign_in_with_own_profile(self) -> None:
        """A browser profile of the actor's own, signed in through the login form, as a person does once."""
        self.profile = self.world.browsers.new_profile()
        self.open_own_browser()
        self.login.open().log_in(self.account.email, self.account.password)
        self.chat.expect_signed_in()

    def log_in_through_form(self) -> None:
        self.login.log_in(self.account.email, self.account.password)
        self.chat.expect_signed_in()

    def open_own_browser(self) -> None:
        """Launch the browser on the actor's profile, as a person opening their browser."""
        assert self.profile is not None, f"{self.name} has no browser profile of their own"
        self.page = self.world.browsers.open_profile(self.profile)
        self.world.speaker = self.name

    def open_new_browser(self) -> None:
        """A browser that holds no session of the app (it must sign in)."""
        self.page = self.world.browsers.anonymous()
        self.world.speaker = self.name

    def open_fresh_profile(self) -> None:
        self.profile = self.world.browsers.new_profile()
        self.open_own_browser()
        self.chat.go_home()

    def close_browser(self) -> None:
        """Close like a person closing the browser: every tab put away, then the browser quits."""
        if self.page is not None:
            self.world.browsers.close_browser(self.page.context)
            self.page = None

    def close_page(self) -> None:
        """Close the tab: pagehide fires, and whatever the page still meant to write must leave now."""
        assert self.page is not None, f"{self.name} has no page open"
        self.page.close()
        self.page = None

    def reopen_browser(self) -> None:
        """Close the browser and open it again on the same profile, at the app's start address."""
        self.close_browser()
        self.open_own_browser()
        self.chat.go_home()

    def held_session(self) -> dict:
        """What the browser holds of the session now (cookies and local storage), as a copied one would."""
        assert self.page is not None, f"{self.name} has no browser open"
        return self.page.context.storage_state()

    def sign_out(self) -> dict:
        """Sign out through the page; the session the browser held before."""
        held = self.held_session()
        self.chat.sign_out()
        self.login.expect_shown()
        return held

    def sign_in_again(self) -> None:
        self.login.open().log_in(self.account.email, self.account.password)
        self.chat.after_sign_in()

    def is_signed_in(self) -> bool:
        """Signed in (the chat shows who), or asked to sign in; anything else fails."""
        if not self.chat.ready_or_asked_to_sign_in():
            return False
        self.chat.expect_signed_in()
        self.turns = []
        return True

    def reload(self) -> None:
        self.chat.go_home()

    def come_back(self) -> None:
        """Open the app again after time passed, signing in again if the app ended the sign-in meanwhile."""
        self.drop_api_session()
        self.reload()
        if not self.is_signed_in():
            self.sign_in_again()
            self.chat.expect_signed_in()

    def drop_api_session(self) -> None:
        self.close()

    def identity_shown(self) -> str:
        return self.chat.signed_in_as()

    def conversations_listed(self, count: int | None = None) -> list[str]:
        return self.sidebar.ids() if count is None else self.sidebar.ids_once_listed(count)

    def leave(self) -> None:
        self.close_browser()
        self.close()

    # -- talking ---------------------------------------------------------------------------------------------------
    def say(self, text: str) -> str:
        """One turn through the chat page; remembers what was said and answered, for later checks."""
        return self._answered(text, self.chat.send(text))

    def say_composed(self, before: str, reading: str, characters: str, after: str) -> str:
        """One turn typed partly with an input method: `characters` composed from `reading`, then confirmed."""
        return self._answered(before + characters + after, self.chat.send_composed(before, reading, characters, after))

    def submit(self, text: str):  # noqa: ANN201 - a function that waits for the reply
        """Send without waiting for the reply (two users at once): returns a function that waits for it."""
        waiter = self.chat.submit(text)
        return lambda: self._answered(text, waiter())

    def _answered(self, text: str, reply: str) -> str:
        self.turns += [("user", text), ("assistant", reply)]
        self.turns_sent += 1
        self.last_reply = reply
        self.recalled = self.chat.recalled_in_last_reply()
        self.world.speaker = self.name
        return reply

    def tell(self, sentence: str) -> None:
        self.say(sentence)
        self.told.append(Fact.parse(sentence))

    def conversation_id(self) -> str:
        return self.chat.conversation_id()

    def note_conversation(self) -> str:
        self.noted_conversation = self.chat.conversation_id()
        return self.noted_conversation

    def start_new_conversation(self) -> None:
        """Through the app's own control where a page of the app is open (the page flushes its pending writes
        first), else at the app's start address; then the memory writes the app makes on its own have landed."""
        if self.page is None or not self.page.url.startswith(self.app.base_url):
            self.chat.open_new()
        elif self.turns or not self.chat.is_at_home():  # else already on a new, empty conversation
            self.sidebar.start_new()
            self.chat.expect_ready()
        self.settle()  # a later question may rely on what the app still writes on its own
        self.turns = []
        self.world.speaker = self.name

    def open_by_address(self, conversation_id: str) -> int:
        """The HTTP status the app answered the conversation's address with."""
        return self.chat.open_conversation(conversation_id)

    def open_from_list(self, conversation_id: str) -> None:
        if not self.page.url.startswith(self.app.base_url):
            self.chat.open_new()
        self.sidebar.open_by_id(conversation_id)

    def history(self) -> list[tuple[str, str]]:
        return [(t.role, t.text) for t in self.chat.history()]

    def settle(self) -> None:
        """Let the app finish the memory writes it makes on its own after this user's turns."""
        self.app.settle(self.session, self.turns_sent)

    def close(self) -> None:
        if self._session is not None:
            self._session.close()
            self._session = None


@dataclass(frozen=True)
class LeftSession:
    """What a user left behind when they signed out or their account was deleted: the session their browser held
    (what a copied cookie or token would be), and what the account held then."""

    name: str
    account: Account
    held: dict  # the browser's storage state
    why: str  # "Ana signed out", ...
    conversation_ids: tuple[str, ...] = ()
    memory_ids: tuple[str, ...] = ()


@dataclass(frozen=True)
class Listing:
    """A user's conversation list as the page showed it."""

    name: str
    ids: list[str]


class World:
    def __init__(self, app: AppHandle, data: TestData, browsers: BrowserSessions, key: str) -> None:
        self.app = app
        self.data = data
        self.browsers = browsers
        self.tag = data.unique_tag()  # makes the scenario's addresses unique to this run
        self.fake: Faker = data.faker_for(key)
        self.actors: dict[str, Actor] = {}
        self.speaker = ""  # who acted last: "the assistant answers" and "her ..." are about them
        self._created: list[tuple[AppHandle, Account]] = []

    @property
    def created(self) -> list[tuple[AppHandle, Account]]:
        """Every account the scenario created, with the app it was created in."""
        return list(self._created)

    def use_app(self, app: AppHandle) -> AppHandle:
        """The scenario goes on with this app (other settings, fresh data, or the app after a change)."""
        self.app = app
        return app

    def create_user(self, name: str, email_local: str | None = None, domain: str = "x.test",
                    user_id: str | None = None, tag: str | None = None, app: AppHandle | None = None) -> Actor:
        """A new account in the scenario's app (or `app`); `tag` (default: the scenario's) makes the address unique
        to this run."""
        app = app or self.app
        email = self.data.email(email_local or name.lower(), tag or self.tag, domain)
        account = app.create_user(name, email, self.data.password(), user_id)
        self._created.append((app, account))
        actor = Actor(name, account, self)
        if app is self.app:
            self.actors[name] = actor
        return actor

    def actor(self, name: str) -> Actor:
        if name not in self.actors:
            self.create_user(name)
        return self.actors[name]

    def speaking(self) -> Actor:
        """The actor who acted last."""
        return self.actors[self.speaker]

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
