"""What a user of a scenario does, whatever they reach the app through: the one `Actor` protocol.

The steps and the generated-session runner act through it; its implementations live in the top-level `actors`
package (a user in a browser, through the page objects, or a user of an app without a web page, through its API).
What only a browser can do, an API actor refuses by skipping the scenario with one line.

An actor keeps only what it needs to act (its browser, its API session, the conversation it has open); what a
step learns from acting (a reply, what was recalled for it) is handed back as a frozen record for the steps to pass on.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Protocol

from harness.drivers.base import Account, UserSession
from harness.users.hostile import Breach
from harness.vocabulary.turn import Turn


@dataclass(frozen=True)
class Exchange:
    """One turn a user took and what the assistant answered."""

    name: str  # who said it
    said: str  # exactly as sent
    reply: str
    recalled: tuple[str, ...] = ()  # the memories the app showed it recalled for the reply
    recalled_ids: tuple[str, ...] = ()  # their ids, where the app shows them (empty: it does not)

    @property
    def turns(self) -> tuple[Turn, Turn]:
        return Turn("user", self.said), Turn("assistant", self.reply)


@dataclass(frozen=True)
class MemoryChange:
    """A change a user makes to their memories: "edit" (the memory that reads `text` to `new_text`), "delete" (the
    memory that reads `text`), "clear" (every memory), or "switch" (memory turned `on` or off)."""

    kind: str
    text: str = ""
    new_text: str = ""
    on: bool = False

    def __str__(self) -> str:
        return {"edit": f"the change of {self.text!r} to {self.new_text!r}", "delete": f"the deletion of {self.text!r}",
                "clear": "the clearing of every memory",
                "switch": f"turning memory {'on' if self.on else 'off'}"}[self.kind]


class Actor(Protocol):
    """One user of a scenario: a name in the Gherkin and an account of the app."""

    @property
    def name(self) -> str: ...

    @property
    def account(self) -> Account: ...

    @property
    def session(self) -> UserSession:
        """The user's own API session on the scenario's app (signed in on first use)."""
        ...

    # -- signing in and out ----------------------------------------------------------------------------------------
    def sign_in(self) -> None:
        """Signed in the quickest way the app allows, on a new conversation."""

    def sign_in_to_stay(self) -> None:
        """Signed in where the user will stay: a browser profile of their own where the app has a page."""

    def sign_in_with_own_profile(self) -> None:
        """A browser profile of the user's own, signed in through the login form, as a person does once."""

    def log_in_through_form(self) -> None:
        """Through the sign-in form the page shows now."""

    def log_in_as(self, email: str) -> None:
        """Through the sign-in page, with the address typed as given."""

    def refused_sign_in(self, email: str, password: str) -> str:
        """What the sign-in page says to a sign-in it must refuse."""
        ...

    def sign_in_again(self) -> None:
        """Through the sign-in form (or the API) anew, after the session ended."""

    def try_sign_in(self, email: str | None = None) -> str:
        """With the user's own password and the address typed as `email` (default: the account's), through the
        sign-in page of a new browser (or the app's API): "" when let in, else what the app said (the page stays on
        the chat when let in)."""
        ...

    def type_wrong_passwords(self, email: str, count: int) -> str:
        """`count` sign-ins with wrong passwords for the address `email`, each refused, from this actor's network
        address (the suite's, as behind one proxy): through the sign-in page of a new browser, or the app's API. What
        the app said to the last one."""

    def try_sign_in_through_api(self) -> str | None:
        """The user's own address and password through the app's API, from a client without a session: "" when let
        in, else the app's words; None where the driver cannot sign in through the API."""

    def sign_out(self) -> dict:
        """Sign out; the session the user held before (a browser's storage state, or what an API client presents)."""
        ...

    def is_signed_in(self, expected: bool = True) -> bool:
        """Signed in, or asked to sign in (anything else fails); `expected`: what the caller expects."""
        ...

    def expect_asked_to_sign_in(self) -> None: ...

    def identity_shown(self) -> str:
        """Who the app shows as signed in."""
        ...

    def held_session(self) -> dict:
        """What the user holds of the session now, as a copied cookie or token would be."""
        ...

    def come_back(self) -> None:
        """Open the app again after time passed, signing in again if the app ended the sign-in meanwhile."""

    # -- browsers and pages ----------------------------------------------------------------------------------------
    def open_browser_again(self) -> None:
        """The browser closed before, opened again on the same profile at the app's start address."""

    def open_new_browser(self) -> None:
        """A browser that holds no session of the app (it must sign in)."""

    def open_fresh_profile(self) -> None:
        """A new browser profile at the app's start address."""

    def close_browser(self) -> None:
        """Close like a person closing the browser: every tab put away, then the browser quits."""

    def reopen_browser(self) -> None:
        """Close the browser and open it again on the same profile, at the app's start address."""

    def use_busy_computer(self, busy_for: float) -> None:
        """From now on the pages still have `busy_for` seconds of work when their tab closes."""

    def close_page(self) -> None:
        """Close the tab right away: whatever the page still meant to write must leave now."""

    def reload(self) -> None:
        """Open the app's start address again, as a person coming back to it."""

    def shown_text(self) -> str:
        """Everything the user's screen (or the last answer of the API) shows now."""
        ...

    # -- conversations ---------------------------------------------------------------------------------------------
    def say(self, text: str) -> Exchange:
        """One turn in the open conversation (a new one if none is open)."""
        ...

    def say_lines(self, text: str) -> Exchange:
        """One turn of several lines, typed with a new line (Shift+Enter on a page) between them."""
        ...

    def press_enter_on_blank(self, text: str) -> None:
        """Type a message of nothing but spaces and new lines (Shift+Enter on a page) and press Enter: a page sends
        nothing, says nothing failed."""
        ...

    def say_composed(self, before: str, reading: str, characters: str, after: str) -> Exchange:
        """One turn typed partly with an input method: `characters` composed from `reading`, then confirmed."""
        ...

    def say_clicking_twice(self, text: str) -> Exchange:
        """One turn sent with two clicks of Send, the second while the first is still on its way (a slow server),
        as an impatient person does; on a page only."""
        ...

    def send_refused(self, text: str) -> str:
        """A message the app must refuse: what the page says instead of an answer."""
        ...

    def say_refused_by_app(self, text: str) -> str:
        """The user sends `text` and the app's server answers the chat request with an error, once (nothing of it
        reaches the app); what the page then says. The user stays in the same page, to go on typing."""
        ...

    def say_then_open(self, text: str, conversation_id: str) -> None:
        """The user sends `text` and, before its answer shows (a slow model), clicks another conversation in her
        list; returns once that conversation is open. On a page only (else the scenario skips)."""
        ...

    def say_then_start_new(self, text: str) -> None:
        """The user sends `text` and, before its answer shows (a slow model), clicks the app's control for a new
        conversation; returns once the new conversation is open. On a page only (else the scenario skips)."""
        ...

    def say_offline(self, text: str) -> str:
        """The user sends `text` with her browser offline; what the page then says (the browser back online after
        it). The user stays in the same page, to go on typing. On a page only (else the scenario skips)."""
        ...

    def say_offline_sent_online(self, text: str) -> Exchange:
        """The user sends `text` with her browser offline and it comes back online; the exchange once the page has
        sent the turn it kept (an outbox), with no error shown. On a page only (else the scenario skips)."""
        ...

    def say_before_answer(self, first: str, second: str) -> tuple[Exchange, Exchange]:
        """The user sends `first` and, before its answer shows (a slow model), `second` as well, as one who does not
        wait; both exchanges once both answers show. On a page only (else the scenario skips)."""
        ...

    def say_dropped(self, text: str) -> str:
        """The user sends `text`; the app gets it and answers, but the connection drops before the answer reaches
        the page; what the page then says. The user stays in the same page, to go on typing."""
        ...

    def say_with_memory_write_refused(self, text: str) -> str:
        """The user sends `text` and gets its answer; the page's write of what it taught is answered by a server
        error, once; what the page then says. Only where the page writes memories (else the scenario skips)."""
        ...

    def submit(self, text: str) -> Callable[[], Exchange]:
        """Send without waiting for the reply (users at the same time): a function that waits for it."""
        ...

    def conversation_id(self) -> str:
        """The open conversation's id, once the app has given it one."""
        ...

    def start_new_conversation(self) -> None:
        """A new conversation, once the memory writes the app makes on its own have landed."""

    def open_by_address(self, conversation_id: str) -> int:
        """The HTTP status the app answered the conversation's address with."""
        ...

    def open_from_list(self, conversation_id: str) -> None:
        """Open one of the user's conversations from their list."""

    def history(self) -> list[Turn]:
        """The open conversation's turns as shown, oldest first."""
        ...

    def turns_after_deleting_open_conversation(self) -> list[Turn]:
        """Where the user is once the conversation they were in is deleted, a new conversation: the turns it
        shows (none)."""
        ...

    def conversations_listed(self, count: int | None = None) -> list[str]:
        """The conversation list as shown (once it shows `count`, or what it shows by then)."""
        ...

    def conversation_titles_shown(self) -> dict[str, str]:
        """Each listed conversation's title as shown to the user (the page's list, else the API's), by id."""
        ...

    def conversation_previews_shown(self) -> dict[str, str]:
        """Each listed conversation's preview (its last message, cut) as shown to the user (the page's list, else the
        API's), by id."""
        ...

    def conversations_marked_open(self) -> list[str] | None:
        """The ids of the conversations the page's list marks as the one open (to a screen reader too); None without
        a page, or where the target declares no such marking."""
        ...

    # -- what users take back -------------------------------------------------------------------------------------
    def memories_shown(self) -> list[str]:
        """The user's memories as the app shows them to the user (its memories page, or its API), oldest first."""
        ...

    def delete_memory(self, text: str) -> str:
        """Delete the memory that reads `text`, as the user does in the app's memory settings (on a page, with the
        double click of an impatient user: the second click must change nothing); what the app then says of it
        ('' when it says nothing: no error shown)."""
        ...

    def edit_memory(self, text: str, new_text: str) -> None:
        """Change the memory that reads `text` to read `new_text`."""

    def cancel_memory_edit(self, text: str, typed: str) -> str:
        """Start changing the memory that reads `text`, type `typed`, then cancel: what the memory reads once its
        editor has closed (only on a page with a Cancel; an edit through an API is never half made)."""
        ...

    def clear_memories(self) -> None:
        """Delete every memory of the user's ("clear all")."""

    def cancel_clear_memories(self) -> list[str]:
        """Start clearing every memory, then cancel when asked to confirm: the memories shown once the question has
        gone (only on a page that asks; through an API nothing is half done)."""
        ...

    def delete_conversation(self, conversation_id: str) -> None:
        """Delete one of the user's conversations from their list."""

    def delete_conversation_refused(self, conversation_id: str) -> str:
        """Through the page's own delete control, its request answered by a server error in the app's place; what
        the page then says (the conversation still listed)."""
        ...

    def memory_change_refused(self, change: MemoryChange) -> str:
        """Through the app's memories page, the change's request answered by a server error in the app's place; what
        the page then says (the memories and the switch shown as before)."""
        ...

    def change_errors_shown(self) -> list[str]:
        """What the page says now of changes the app refused (a deletion, an edit): none once one went through."""
        ...

    def turn_memory(self, on: bool) -> None:
        """Turn the user's memory on or off in the app's settings."""

    # -- a hostile user ---------------------------------------------------------------------------------------------
    def tamper_with(self, victim: Actor) -> list[Breach]:
        """Through this user's API session, every write the app's API offers against the victim's memories,
        conversations and settings: their ids in the path, in owner fields of the body, in identity headers
        (harness.users.hostile.tamper, whose docstring says which answers are breaches). The attempts the app did not
        refuse, each a Breach (method, path, status, what was sent, why; str() is one line). Skips the scenario with
        one line where the target describes none of these writes or its driver cannot send them."""
        ...

    # -- the app's own writes, and leaving -------------------------------------------------------------------------
    def settle(self) -> None:
        """Let the app finish the memory writes it makes on its own after this user's turns."""

    def back_after_app_restart(self) -> AbstractContextManager[None]:
        """Around a restart of the app under the user's open page: the page back in touch with the app after it."""

    def drop_api_session(self) -> None:
        """Forget the user's API session (time passed; the next read signs in anew)."""

    def leave(self) -> None:
        """Close the browser and the API session for good."""

    def close(self) -> None:
        """Close the API session (at the end of the scenario)."""
