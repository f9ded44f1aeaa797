"""A user of an app without a web page, speaking through the app's own API (its chat client's calls): the same
Gherkin lines, done through the driver. What only a browser can do skips the scenario with one line."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import NoReturn

import pytest

from actors.base import ActorBase
from harness.drivers.base import HeldSessions, Reply
from harness.users.actor import Exchange, MemoryChange
from harness.vocabulary.turn import Turn

_SENDERS = ThreadPoolExecutor(4, thread_name_prefix="api-actor")  # API actors who speak at the same time


class ApiActor(ActorBase):
    current: str | None = None  # the open conversation; None: a new one, not yet started
    last_answer: str = ""  # the body of the last read of a conversation by its id
    held: dict | None = None  # what the user's client presents (kept when the client starts again, as a cookie is)

    def _needs_a_page(self, what: str) -> NoReturn:
        pytest.skip(f"{what} needs a web page, and the {self.app.target.name} target has none")

    def _client(self) -> dict:
        if self.held is None:
            self.held = self.session.credentials()
        return self.held

    # -- signing in and out ----------------------------------------------------------------------------------------
    def sign_in(self) -> None:
        """An API session of the user's own, on a new conversation."""
        self._client()  # signs in now, so that a refused identity fails here
        self.current = None

    def sign_in_to_stay(self) -> None:
        self.sign_in()

    def sign_in_with_own_profile(self) -> None:
        self._needs_a_page("a browser profile of her own")

    def log_in_through_form(self) -> None:
        self._needs_a_page("the sign-in form")

    def log_in_as(self, email: str) -> None:
        self._needs_a_page("the sign-in form")

    def refused_sign_in(self, email: str, password: str) -> str:
        self._needs_a_page("the sign-in form")

    def sign_in_again(self) -> None:
        """The client signs in anew (its old session ended)."""
        self.close()
        self.held = None
        self._client()

    def try_sign_in(self, email: str | None = None) -> str:
        """A client without a session signs in through the app's API."""
        return self._api_sign_in(email or self.account.email, self.account.password)

    def type_wrong_passwords(self, email: str, count: int) -> str:
        return self._wrong_passwords(email, count)

    def sign_out(self) -> dict:
        self._needs_a_page("signing out")

    def is_signed_in(self, expected: bool = True) -> bool:
        """Whether the app still serves what the user's client presents."""
        return self.app.part(HeldSessions).accepts(self.app.running, self._client())

    def expect_asked_to_sign_in(self) -> None:
        assert not self.is_signed_in(), f"the app still serves {self.name}'s identity"

    def identity_shown(self) -> str:
        return self.app.shown_identity(self.account)

    def held_session(self) -> dict:
        """What the API session presents to the app (a header, a token), as a copied one would."""
        return self._client()

    def come_back(self) -> None:
        self.drop_api_session()
        self.reload()
        if not self.is_signed_in(expected=False):
            self.sign_in_again()

    # -- browsers and pages: a browser's only ----------------------------------------------------------------------
    def open_browser_again(self) -> None:
        self._needs_a_page("a browser opened again on the same profile")

    def open_new_browser(self) -> None:
        self._needs_a_page("a browser of her own")

    def open_fresh_profile(self) -> None:
        self._needs_a_page("a fresh browser profile")

    def close_browser(self) -> None:
        self._needs_a_page("closing the browser")

    def reopen_browser(self) -> None:
        self._needs_a_page("a browser opened again on the same profile")

    def use_busy_computer(self, busy_for: float) -> None:
        self._needs_a_page("a busy page")

    def close_page(self) -> None:
        self._needs_a_page("closing the page")

    def reload(self) -> None:
        """The client started again: the same credentials, a new conversation."""
        self.current = None

    def shown_text(self) -> str:
        return self.last_answer

    # -- conversations ---------------------------------------------------------------------------------------------
    def _open_conversation(self) -> str:
        if self.current is None:
            self.current = self.session.start_conversation()
        return self.current

    def _reply(self, text: str, reply: Reply) -> Exchange:
        return self._answered(text, reply.text, list(reply.recalled), list(reply.recalled_ids))

    def say(self, text: str) -> Exchange:
        return self._reply(text, self.session.send(self._open_conversation(), text))

    def say_lines(self, text: str) -> Exchange:
        return self.say(text)  # an API client sends its lines as they are: it has no keys

    def press_enter_on_blank(self, text: str) -> None:
        self._needs_a_page("pressing Enter on a blank message")

    def say_composed(self, before: str, reading: str, characters: str, after: str) -> Exchange:
        self._needs_a_page("an input method")

    def say_clicking_twice(self, text: str) -> Exchange:
        self._needs_a_page("two clicks of Send")

    def send_refused(self, text: str) -> str:
        self._needs_a_page("the page's error")

    def say_refused_by_app(self, text: str) -> str:
        self._needs_a_page("a send the app refuses on the page")

    def say_dropped(self, text: str) -> str:
        self._needs_a_page("a reply lost on its way to the page")

    def say_then_open(self, text: str, conversation_id: str) -> None:
        self._needs_a_page("clicking another conversation before an answer shows")

    def say_then_start_new(self, text: str) -> None:
        self._needs_a_page("starting a new conversation before an answer shows")

    def say_offline(self, text: str) -> str:
        self._needs_a_page("a browser offline")

    def say_offline_sent_online(self, text: str) -> Exchange:
        self._needs_a_page("a browser offline")

    def say_before_answer(self, first: str, second: str) -> tuple[Exchange, Exchange]:
        self._needs_a_page("sending a message before the last one is answered")

    def say_with_memory_write_refused(self, text: str) -> str:
        self._needs_a_page("a memory write of the page that fails")

    def submit(self, text: str) -> Callable[[], Exchange]:
        """Sent on a thread of its own (users at the same time)."""
        sending = _SENDERS.submit(self.session.send, self._open_conversation(), text)
        return lambda: self._reply(text, sending.result())

    def conversation_id(self) -> str:
        assert self.current is not None, f"{self.name} has no conversation open"
        return self.current

    def start_new_conversation(self) -> None:
        self.settle()
        self.current = None

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

    def history(self) -> list[Turn]:
        return [] if self.current is None else list(self.session.turns(self.current))

    def turns_after_deleting_open_conversation(self) -> list[Turn]:
        return self.history()

    def conversations_listed(self, count: int | None = None) -> list[str]:
        return self.session.conversation_ids()

    def delete_conversation(self, conversation_id: str) -> None:
        super().delete_conversation(conversation_id)
        if self.current == conversation_id:
            self.current = None  # as a client leaves the conversation it deleted: the next message starts a new one

    def delete_conversation_refused(self, conversation_id: str) -> str:
        self._needs_a_page("a deletion of a conversation that the app refuses")

    def memory_change_refused(self, change: MemoryChange) -> str:
        self._needs_a_page(f"{change}, refused by the app and told on the page,")

    def change_errors_shown(self) -> list[str]:
        self._needs_a_page("what the page says of a change the app refused")

    def conversation_titles_shown(self) -> dict[str, str]:
        return self.session.conversation_titles()

    def conversation_previews_shown(self) -> dict[str, str]:
        return self.session.conversation_previews()

    def conversations_marked_open(self) -> list[str] | None:
        return None  # no page

    def leave(self) -> None:
        self.close()
