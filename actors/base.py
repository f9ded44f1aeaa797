"""What browser and API actors share: who they are, their API session on the scenario's current app, and how many
turns they sent (what an app that writes memories later may still be writing from)."""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import Protocol

import pytest

from harness.app.app_handle import AppHandle
from harness.browser.profiles import BrowserSessions
from harness.drivers.base import Account, Capability, PasswordSignIn, UserSession
from harness.users import hostile
from harness.users.actor import Actor, Exchange

_SIGN_INS = ThreadPoolExecutor(2, thread_name_prefix="api-sign-in")  # API sessions signed in while browsers work


class Stage(Protocol):
    """Where a scenario's actors act: the app it runs now (a scenario may move on to another) and its browsers."""

    @property
    def app(self) -> AppHandle: ...

    @property
    def browsers(self) -> BrowserSessions: ...


@dataclass(frozen=True)
class AppStage:
    """A stage on one app that is not the scenario's (a generated session's own, beside the others)."""

    app: AppHandle
    browsers: BrowserSessions


class ActorBase:
    def __init__(self, name: str, account: Account, stage: Stage) -> None:
        self.name = name
        self.account = account
        self._stage = stage
        self._session: UserSession | None = None
        self._session_app: AppHandle | None = None
        self._signing_in: Future[UserSession] | None = None  # the API session being signed in meanwhile
        self._turns_sent = 0  # in any conversation: what the app may still be writing memories from

    @property
    def app(self) -> AppHandle:
        return self._stage.app

    @property
    def session(self) -> UserSession:
        """The user's API session on the scenario's app (signed in again when the scenario moved to another app)."""
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

    def _answered(self, text: str, reply: str, recalled: list[str], recalled_ids: list[str] | None = None) -> Exchange:
        self._turns_sent += 1
        return Exchange(self.name, text, reply, tuple(recalled), tuple(recalled_ids or ()))

    def settle(self) -> None:
        """Let the app finish the memory writes it makes on its own after this user's turns (an app that makes none
        has nothing to wait for, and no API session is signed in for it)."""
        if self.app.writes_memories_later and self._turns_sent:
            self.app.settle(self.session, self._turns_sent)

    def back_after_app_restart(self) -> AbstractContextManager[None]:
        return nullcontext()  # no page open: nothing of the user's is in touch with the app between requests

    # -- what users take back, through the app's API (the calls its settings page makes) ----------------------------
    def _memory_id(self, text: str) -> str:
        listed = self.session.memories()
        found = next((m.id for m in listed if m.text == text), None)
        assert found is not None, (f"{self.name} has no memory that reads {text!r}; her memories: "
                                   f"{[m.text for m in listed]}")
        return found

    def memories_shown(self) -> list[str]:
        return [m.text for m in self.session.memories()]

    def delete_memory(self, text: str) -> str:
        self.app.require(Capability.MEMORY_DELETE)
        self.settle()
        self.session.delete_memory(self._memory_id(text))
        return ""

    def edit_memory(self, text: str, new_text: str) -> None:
        self.app.require(Capability.MEMORY_EDIT)
        self.settle()
        self.session.edit_memory(self._memory_id(text), new_text)

    def cancel_memory_edit(self, text: str, typed: str) -> str:
        pytest.skip(f"needs a Cancel of a memory edit on the app's page: {self._no_page_control('cancel_memory_edit')}")

    def cancel_clear_memories(self) -> list[str]:
        pytest.skip("needs a Cancel of clearing all memories on the app's page: "
                    f"{self._no_page_control('cancel_clear_memories')}")

    def _no_page_control(self, locator: str) -> str:
        """Why this user has no such control: no page (through the API nothing is half done), or none located."""
        target = self.app.target
        if not target.has_pages:
            return f"the users of {target.path.name} speak through its API, where nothing is half done"
        return f"{target.path.name} locates none (locator {locator})"

    def clear_memories(self) -> None:
        self.app.require(Capability.MEMORY_CLEAR)
        self.settle()
        self.session.clear_memories()

    def delete_conversation(self, conversation_id: str) -> None:
        self.app.require(Capability.CONVERSATION_DELETE)
        self.session.delete_conversation(conversation_id)

    def turn_memory(self, on: bool) -> None:
        self.app.require(Capability.MEMORY_SWITCH)
        self.settle()  # what the app still writes of the turns before belongs to them, not to the switch
        self.session.set_memory(on)

    # -- a hostile user, through the app's API ----------------------------------------------------------------------
    def tamper_with(self, victim: Actor) -> list[hostile.Breach]:
        why_not = hostile.cannot_tamper(self.app.target)
        if why_not:
            pytest.skip(why_not)
        victim.settle()  # what the app still writes of the victim's turns is theirs, not the tamperer's
        return hostile.tamper(self.session, hostile.Victim.of(victim.session), self.app.target)

    def _api_sign_in(self, email: str, password: str) -> str:
        """One sign-in through the app's API; the scenario skips with one line where the driver offers none."""
        self.app.require(Capability.PASSWORD_SIGN_IN)
        return self.app.part(PasswordSignIn).try_sign_in(self.app.running, email, password)

    def try_sign_in_through_api(self) -> str | None:
        """The user's own address and password through the app's API, from a client without a session: "" when let
        in, else the app's words; None where the driver offers no such sign-in (whatever the actor's kind)."""
        if not self.app.offers(Capability.PASSWORD_SIGN_IN):
            return None
        return self.app.part(PasswordSignIn).try_sign_in(self.app.running, self.account.email, self.account.password)

    def _wrong_passwords(self, email: str, count: int) -> str:
        """Through the app's API, each from a client without a session; each must be refused. The last one's
        words."""
        said = ""
        for attempt in range(1, count + 1):
            said = self._api_sign_in(email, f"wrong-{attempt}-{self.account.password}")
            assert said, f"{self.name} typed a wrong password for {email} (attempt {attempt}) and was let in"
        return said

    def drop_api_session(self) -> None:
        self.close()

    def close(self) -> None:
        self._take_prepared()
        if self._session is not None:
            self._session.close()
            self._session = None
