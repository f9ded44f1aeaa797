"""The world every scenario has: the app under test (its handle), the scenario's actors, its test data and the
accounts it created (deleted afterwards). Each area's own state is a typed fixture of that area (see steps/), never
kept here.

An actor is one user of the scenario, in a browser (a target with a web page: done through the page objects) or
through the app's API (a target without one: done through the driver); what they do is said in the user's words, and
what they said, were answered and saw is kept for later steps to compare.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import NoReturn

import pytest
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
    """What every actor has and does, whatever they speak to the app through."""

    name: str
    account: Account
    world: World
    turns: list[tuple[str, str]] = field(default_factory=list)  # (role, text) as seen in the open conversation
    told: list[Fact] = field(default_factory=list)
    turns_sent: int = 0  # every turn this user sent, in any conversation: what the app may still be writing from
    last_reply: str = ""
    recalled: list[str] = field(default_factory=list)  # memories the app showed it recalled for the last reply
    noted_conversation: str = ""  # the conversation a step noted for a later one (before closing the browser, ...)
    conversations: list[str] = field(default_factory=list)  # conversations seeded for this user, oldest first
    _session: UserSession | None = None
    _session_app: AppHandle | None = None
    _signing_in: Future | None = None  # the API session being signed in meanwhile (prepare_session)

    @property
    def app(self) -> AppHandle:
        return self.world.app

    @property
    def session(self) -> UserSession:
        """The user's API session on the scenario's app (signed in again when the scenario chose another app)."""
        self._take_prepared()
        if self._session is None or self._session_app is not self.app:
            if self._session is not None:
                self._session.close()
            self._session = self.app.session(self.account)
            self._session_app = self.app
        return self._session

    def prepare_session(self) -> None:
        """Sign the user's API session in on a thread while the browser works: signing in costs the app a password
        hash (50 ms here), which the first step that reads through the API would otherwise wait for."""
        if self._session is None and self._signing_in is None:
            self._signing_in = _SIGN_INS.submit(self.app.session, self.account)
            self._session_app = self.app

    def _take_prepared(self) -> None:
        if self._signing_in is not None:
            signing_in, self._signing_in = self._signing_in, None
            self._session = signing_in.result()  # a failed sign-in fails here, in the step that needs it

    def _answered(self, text: str, reply: str, recalled: list[str]) -> str:
        self.turns += [("user", text), ("assistant", reply)]
        self.turns_sent += 1
        self.last_reply = reply
        self.recalled = recalled
        self.world.speaker = self.name
        return reply

    def tell(self, sentence: str) -> None:
        self.say(sentence)
        self.told.append(Fact.parse(sentence))

    def note_conversation(self) -> str:
        self.noted_conversation = self.conversation_id()
        return self.noted_conversation

    def settle(self) -> None:
        """Let the app finish the memory writes it makes on its own after this user's turns (an app that makes none
        has nothing to wait for, and no API session is signed in for it)."""
        if self.app.writes_memories_later and self.turns_sent:
            self.app.settle(self.session, self.turns_sent)

    def drop_api_session(self) -> None:
        self.close()

    def close(self) -> None:
        self._take_prepared()
        if self._session is not None:
            self._session.close()
            self._session = None

    # -- what each kind of actor does its own way ------------------------------------------------------------------
    def say(self, text: str) -> str:
        raise NotImplementedError

    def conversation_id(self) -> str:
        raise NotImplementedError


@dataclass
class BrowserActor(Actor):
    """A user in a browser: what they do is done through the page objects."""

    page: Page | None = None
    profile: Path | None = None  # the browser profile of their own, once they have one
    busy_for: float = 0  # seconds of work their pages still have when a tab closes (a busy computer)

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

    def sign_in_to_stay(self) -> None:
        """Signed in where the user will stay: a browser profile of their own, through the login form."""
        self.sign_in_with_own_profile()

    def sign_in_with_own_profile(self) -> None:
        """A browser profile of the actor's own, signed in through the login form, as a person does once."""
        self.prepare_session()
        self.profile = self.world.browsers.new_profile()
        self.open_own_browser()
        self.login.open().log_in(self.account.email, self.account.password)
        self.chat.expect_signed_in()

    def log_in_through_form(self) -> None:
        self.login.log_in(self.account.email, self.account.password)
        self.chat.expect_signed_in()

    def log_in_as(self, email: str) -> None:
        """Through the sign-in page, with the address typed as given."""
        self.login.open().log_in(email, self.account.password)
        self.chat.expect_signed_in()

    def refused_sign_in(self, email: str, password: str) -> str:
        """What the sign-in page says to a sign-in it must refuse."""
        self.login.open().log_in(email, password)
        return self.login.refusal()

    def open_own_browser(self) -> None:
        """Launch the browser on the actor's profile, as a person opening their browser."""
        assert self.profile is not None, f"{self.name} has no browser profile of their own"
        self.page = self.world.browsers.open_profile(self.profile)
        self.world.speaker = self.name

    def open_browser_again(self) -> None:
        """The browser closed before, opened again on the same profile at the app's start address."""
        self.open_own_browser()
        self.chat.go_home()

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

    def use_busy_computer(self, busy_for: float) -> None:
        """From now on the pages still have `busy_for` seconds of work when their tab closes; untraced, since the
        trace would keep them alive."""
        self.busy_for = busy_for
        self.world.browsers.trace_nothing()

    def close_page(self) -> None:
        """Close the tab: pagehide fires, and whatever the page still meant to write must leave now. A page busy for
        longer than the browser waits (about half a second in Chromium) is closed without its pagehide."""
        assert self.page is not None, f"{self.name} has no page open"
        if self.busy_for:
            self.chat.start_busy_work(self.busy_for)
        self.page.close()
        self.page = None

    def reopen_browser(self) -> None:
        """Close the browser and open it again on the same profile, at the app's start address."""
        self.close_browser()
        self.open_browser_again()

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

    def is_signed_in(self, expected: bool = True) -> bool:
        """Signed in (the chat shows who), or asked to sign in; anything else fails. Where signed in is `expected`
        (just after signing in, the page may still be on its way) it waits for the chat; else for either."""
        if expected:
            try:
                self.chat.expect_signed_in()
            except AssertionError:
                if self.login.is_shown():
                    return False
                raise
            return True
        if not self.chat.ready_or_asked_to_sign_in():
            return False
        self.chat.expect_signed_in()
        return True

    def expect_asked_to_sign_in(self) -> None:
        self.login.expect_shown()

    def reload(self) -> None:
        self.chat.go_home()

    def come_back(self) -> None:
        """Open the app again after time passed, signing in again if the app ended the sign-in meanwhile."""
        self.drop_api_session()
        self.reload()
        if not self.is_signed_in(expected=False):
            self.sign_in_again()
            self.chat.expect_signed_in()

    def identity_shown(self) -> str:
        return self.chat.signed_in_as()

    def shown_text(self) -> str:
        """Everything the user's screen shows now."""
        return self.chat.page_text()

    def conversations_listed(self, count: int | None = None) -> list[str]:
        return self.sidebar.ids() if count is None else self.sidebar.ids_once_listed(count)

    def leave(self) -> None:
        self.close_browser()
        self.close()

    # -- talking ---------------------------------------------------------------------------------------------------
    def say(self, text: str) -> str:
        """One turn through the chat page; remembers what was said and answered, for later checks."""
        reply, recalled = self.chat.send_and_read(text)
        return self._answered(text, reply, recalled)

    def say_composed(self, before: str, reading: str, characters: str, after: str) -> str:
        """One turn typed partly with an input method: `characters` composed from `reading`, then confirmed."""
        reply = self.chat.send_composed(before, reading, characters, after)
        return self._answered(before + characters + after, reply, self.chat.recalled_in_last_reply())

    def send_refused(self, text: str) -> str:
        """A message the app must refuse: what the page says instead of an answer."""
        return self.chat.send_refused(text)

    def submit(self, text: str) -> Callable[[], str]:
        """Send without waiting for the reply (two users at once): returns a function that waits for it."""
        waiter = self.chat.submit(text)
        return lambda: self._answered(text, waiter(), self.chat.recalled_in_last_reply())

    def conversation_id(self) -> str:
        return self.chat.conversation_id()

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


def needs_a_page(what: str) -> Callable:
    """An API actor's stand-in for something only a browser can do: the scenario is skipped with one line."""
    def skip(self: ApiActor, *args: object, **kwargs: object) -> NoReturn:
        pytest.skip(f"{what} needs a web page, and the {self.app.target.name} target has none")
    return skip


@dataclass
class ApiActor(Actor):
    """A user of an app without a web page, speaking through the app's own API (its chat client's calls): the same
    Gherkin lines, done through the driver; what only a browser can do skips the scenario with one line."""

    current: str | None = None  # the open conversation; None: a new one, not yet started
    last_answer: str = ""  # the body of the last read of a conversation by its id
    held: dict | None = None  # what the user's client presents (kept when the client starts again, as a cookie is)

    def _client(self) -> dict:
        if self.held is None:
            self.held = self.session.credentials()
        return self.held

    def sign_in(self) -> None:
        """An API session of the user's own, on a new conversation."""
        self._client()  # signs in now, so that a refused identity fails here
        self.current = None
        self.world.speaker = self.name

    def sign_in_again(self) -> None:
        """The client signs in anew (its old session ended)."""
        self.close()
        self.held = None
        self._client()

    sign_in_to_stay = sign_in
    sign_in_with_own_profile = needs_a_page("a browser profile of her own")
    log_in_through_form = needs_a_page("the sign-in form")
    log_in_as = needs_a_page("the sign-in form")
    refused_sign_in = needs_a_page("the sign-in form")
    open_own_browser = needs_a_page("a browser profile of her own")
    open_browser_again = needs_a_page("a browser opened again on the same profile")
    open_new_browser = needs_a_page("a browser of her own")
    open_fresh_profile = needs_a_page("a fresh browser profile")
    close_browser = needs_a_page("closing the browser")
    close_page = needs_a_page("closing the page")
    use_busy_computer = needs_a_page("a busy page")
    reopen_browser = needs_a_page("a browser opened again on the same profile")
    sign_out = needs_a_page("signing out")
    say_composed = needs_a_page("an input method")
    send_refused = needs_a_page("the page's error")

    def held_session(self) -> dict:
        """What the API session presents to the app (a header, a token), as a copied one would."""
        return self._client()

    def is_signed_in(self, expected: bool = True) -> bool:
        """Whether the app still serves what the user's client presents."""
        return self.app.accepts(self._client())

    def expect_asked_to_sign_in(self) -> None:
        assert not self.is_signed_in(), f"the app still serves {self.name}'s identity"

    def reload(self) -> None:
        """The client started again: the same credentials, a new conversation."""
        self.current = None

    def come_back(self) -> None:
        """Back after time passed, signing in again if the app ended the session meanwhile."""
        self.drop_api_session()
        self.reload()
        if not self.is_signed_in(expected=False):
            self.sign_in_again()

    def identity_shown(self) -> str:
        return self.app.shown_identity(self.account)

    def shown_text(self) -> str:
        return self.last_answer

    def conversations_listed(self, count: int | None = None) -> list[str]:
        return self.session.conversation_ids()

    def leave(self) -> None:
        self.close()

    def say(self, text: str) -> str:
        if self.current is None:
            self.current = self.session.start_conversation()
        reply = self.session.send(self.current, text)
        return self._answered(text, reply.text, list(reply.recalled))

    def submit(self, text: str) -> Callable[[], str]:
        """Send on a thread of its own (two users at once): returns a function that waits for the reply."""
        if self.current is None:
            self.current = self.session.start_conversation()
        sending = _SENDERS.submit(self.session.send, self.current, text)
        return lambda: self._answered(text, sending.result().text, list(sending.result().recalled))

    def conversation_id(self) -> str:
        assert self.current is not None, f"{self.name} has no conversation open"
        return self.current

    def start_new_conversation(self) -> None:
        self.settle()
        self.current = None
        self.turns = []
        self.world.speaker = self.name

    def open_by_address(self, conversation_id: str) -> int:
        """Asks the API for the conversation by its id; opens it when the app answers with it."""
        answer = self.session.ask_for_conversation(conversation_id)
        self.last_answer = answer.body
        if answer.status == 200:
            self.current = conversation_id
        return answer.status

    def open_from_list(self, conversation_id: str) -> None:
        listed = self.session.conversation_ids()
        assert conversation_id in listed, f"{self.name}'s conversation {conversation_id} is not in her list {listed}"
        self.current = conversation_id

    def history(self) -> list[tuple[str, str]]:
        return [(t.role, t.text) for t in self.session.turns(self.conversation_id())]


_SENDERS = ThreadPoolExecutor(4, thread_name_prefix="api-actor")  # API actors who speak at the same time
_SIGN_INS = ThreadPoolExecutor(2, thread_name_prefix="api-sign-in")  # API sessions signed in while browsers work


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

    def new_actor(self, name: str, account: Account) -> Actor:
        """An actor of the account: in a browser where the target has a web page, else through the app's API."""
        return (BrowserActor if self.app.target.has_pages else ApiActor)(name, account, self)

    def create_user(self, name: str, email_local: str | None = None, domain: str = "x.test",
                    user_id: str | None = None, tag: str | None = None, app: AppHandle | None = None) -> Actor:
        """A new account in the scenario's app (or `app`); `tag` (default: the scenario's) makes the address unique
        to this run."""
        app = app or self.app
        email = self.data.email(email_local or name.lower(), tag or self.tag, domain)
        account = app.create_user(name, email, self.data.password(), user_id)
        self._created.append((app, account))
        actor = self.new_actor(name, account)
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
