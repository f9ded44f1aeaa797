"""A user in a browser: what they do is done through the page objects, as a person does it."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path

import pytest
from playwright.sync_api import Page

from actors.base import ActorBase
from harness.users.actor import Exchange, MemoryChange
from harness.vocabulary.turn import Turn
from pages.chat_page import ChatPage, RecalledMemory
from pages.conversation_list import ConversationList
from pages.live_connection import back_after
from pages.login_page import LoginPage
from pages.memories_page import MemoriesPage, NotShown
from pages.network_failures import dropped_after_answer, refused_by_server


class BrowserActor(ActorBase):
    page: Page | None = None
    profile: Path | None = None  # the browser profile of their own, once they have one
    busy_for: float = 0  # seconds of work their pages still have when a tab closes (a busy computer)
    _talking: bool = False  # whether the open page's conversation has turns (else it is a new, empty one)
    _errors_met: int = 0  # errors a step provoked on purpose (a refused or failing send): the only ones pages may show
    _deletions: int = 0  # memories and conversations deleted on the page: when a double click's second click lands

    # -- the pages they see ----------------------------------------------------------------------------------------
    def _open_page(self) -> Page:
        if self.page is None:
            raise AssertionError(f"{self.name} has no browser open")
        return self.page

    @property
    def chat(self) -> ChatPage:
        return ChatPage(self._open_page(), self.app.base_url, self.app.target.locators, self.app.target.api)

    @property
    def sidebar(self) -> ConversationList:
        return ConversationList(self._open_page(), self.app.base_url, self.app.target.locators, self.app.target.api)

    @property
    def login(self) -> LoginPage:
        return LoginPage(self._open_page(), self.app.base_url, self.app.target.locators, self.app.target.api)

    @property
    def memories(self) -> MemoriesPage:
        return MemoriesPage(self._open_page(), self.app.base_url, self.app.target.locators, self.app.target.api)

    def back_after_app_restart(self) -> AbstractContextManager[None]:
        """A page that keeps a live socket to the app (the target's `[api] live_socket`) is back once it has
        reconnected; any other page asks the app afresh with each request."""
        socket = self.app.target.api.get("live_socket")
        if self.page is None or not socket:
            return nullcontext()
        # In a conversation of hers the page is back once the app has taken it back into that conversation.
        back_frame = self.app.target.api.get("live_socket_back", "") if self._talking else ""
        return back_after(self.page, socket, self.app.target.limits.ui_wait_s, self.name, back_frame)

    # -- signing in and out ----------------------------------------------------------------------------------------
    def sign_in(self) -> None:
        """A browser already signed in (the app's own sign-in state, cached), on a new conversation."""
        self.page = self._stage.browsers.signed_in(f"{self.app.base_url}|{self.account.id}",
                                                   lambda: self.app.browser_state(self.session))
        self.chat.open_new()

    def sign_in_to_stay(self) -> None:
        self.sign_in_with_own_profile()

    def sign_in_with_own_profile(self) -> None:
        self.prepare_session()
        self.profile = self._stage.browsers.new_profile()
        self._open_own_browser()
        self.login.open().log_in(self.account.email, self.account.password)
        self.chat.expect_signed_in()

    def log_in_through_form(self) -> None:
        self.login.log_in(self.account.email, self.account.password)
        self.chat.expect_signed_in()

    def log_in_as(self, email: str) -> None:
        self.login.open().log_in(email, self.account.password)
        self.chat.expect_signed_in()

    def refused_sign_in(self, email: str, password: str) -> str:
        self.login.open().log_in(email, password)
        return self.login.refusal()

    def sign_in_again(self) -> None:
        """On the sign-in form the page shows (the app asked her to sign in), else on the app's sign-in page."""
        login = self.login
        if not login.is_shown():
            login.open()
        login.log_in(self.account.email, self.account.password)
        self.chat.after_sign_in()

    def try_sign_in(self, email: str | None = None) -> str:
        """A new browser, the sign-in page, the address as typed and the user's own password."""
        self.open_new_browser()
        self.login.open().log_in(email or self.account.email, self.account.password)
        self.chat.after_sign_in()
        if self.login.is_shown():
            return self.login.refusal()
        self.chat.expect_signed_in()
        return ""

    def type_wrong_passwords(self, email: str, count: int) -> str:
        """On the sign-in page of a new browser, as someone guessing: each attempt waits for its refusal; the words
        of the last."""
        self.open_new_browser()
        said = ""
        for attempt in range(1, count + 1):
            self.login.open().log_in(email, f"wrong-{attempt}-{self.account.password}")
            said = self.login.refusal()
            assert said, f"{self.name} typed a wrong password for {email} (attempt {attempt}) and was not refused"
        return said

    def sign_out(self) -> dict:
        """Sign out through the page; the session the browser held before."""
        held = self.held_session()
        self.chat.sign_out()
        self.login.expect_shown()
        return held

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

    def identity_shown(self) -> str:
        return self.chat.signed_in_as()

    def held_session(self) -> dict:
        """What the browser holds of the session now (cookies and local storage), as a copied one would."""
        return dict(self._open_page().context.storage_state())

    def come_back(self) -> None:
        self.drop_api_session()
        self.reload()
        if not self.is_signed_in(expected=False):
            self.sign_in_again()
            self.chat.expect_signed_in()

    # -- browsers and pages ----------------------------------------------------------------------------------------
    def _open_own_browser(self) -> None:
        """Launch the browser on the actor's profile, as a person opening their browser."""
        assert self.profile is not None, f"{self.name} has no browser profile of their own"
        self.page = self._stage.browsers.open_profile(self.profile)

    def open_browser_again(self) -> None:
        self._open_own_browser()
        self.chat.go_home()

    def open_new_browser(self) -> None:
        self.page = self._stage.browsers.anonymous()

    def open_fresh_profile(self) -> None:
        self.profile = self._stage.browsers.new_profile()
        self.open_browser_again()

    def close_browser(self) -> None:
        if self.page is not None:
            self._stage.browsers.close_browser(self.page.context)
            self.page = None

    def reopen_browser(self) -> None:
        self.close_browser()
        self.open_browser_again()

    def use_busy_computer(self, busy_for: float) -> None:
        """Untraced from now on, since a trace would keep a closing page alive that a real browser cuts off."""
        self.busy_for = busy_for
        self._stage.browsers.trace_nothing()

    def close_page(self) -> None:
        """pagehide fires; a page busy for longer than the browser waits (about half a second in Chromium) is closed
        without its pagehide."""
        page = self._open_page()
        if self.busy_for:
            self.chat.start_busy_work(self.busy_for)
        page.close()
        self.page = None

    def reload(self) -> None:
        self.chat.go_home()

    def shown_text(self) -> str:
        return self.chat.page_text()

    # -- conversations ---------------------------------------------------------------------------------------------
    def _chat_to_send(self) -> ChatPage:
        """The chat, once it shows no error beyond those the steps provoked: a page that tells its user of a failure
        nobody met (a memory write that went through, reported lost) cries wolf, and the real one then reads like
        the others. As the page is now: an error of a write still on its way shows at a later turn."""
        chat = self._chat_open()
        shown = chat.errors_shown()
        assert len(shown) <= self._errors_met, (f"{self.name}'s page shows {len(shown)} errors where the steps "
                                                f"provoked {self._errors_met}: {shown}")
        return chat

    def _met_error(self, shown: str) -> str:
        self._errors_met += bool(shown)
        return shown

    def say(self, text: str) -> Exchange:
        reply, recalled = self._chat_to_send().send_and_read(text)
        self._talking = True
        return self._heard(text, reply, recalled)

    def say_lines(self, text: str) -> Exchange:
        reply = self._chat_to_send().send_typed_lines(text)
        self._talking = True
        return self._heard(text, reply, self.chat.recalled_in_last_reply())

    def press_enter_on_blank(self, text: str) -> None:
        self._chat_to_send().press_enter_on(text)

    def say_composed(self, before: str, reading: str, characters: str, after: str) -> Exchange:
        reply = self._chat_to_send().send_composed(before, reading, characters, after)
        self._talking = True
        return self._heard(before + characters + after, reply, self.chat.recalled_in_last_reply())

    def _heard(self, text: str, reply: str, recalled: list[RecalledMemory]) -> Exchange:
        """The exchange, with the recalled memories' ids where the page shows every one's."""
        ids = [r.id for r in recalled]
        return self._answered(text, reply, [r.text for r in recalled], ids if all(ids) else [])

    def send_refused(self, text: str) -> str:
        return self._met_error(self.chat.send_refused(text))

    def _can_fail_sends(self) -> None:
        why_not = self.app.target.cannot_fail_sends
        if why_not:
            pytest.skip(why_not)

    def say_clicking_twice(self, text: str) -> Exchange:
        if "messages" not in self.app.target.api:
            pytest.skip(f"two clicks of Send need the {self.app.name} target's [api] messages (the address the "
                        "page sends a turn to, whose request the second click meets on its way)")
        reply, recalled = self._chat_to_send().send_clicking_twice(text)
        self._talking = True
        return self._heard(text, reply, recalled)

    def say_refused_by_app(self, text: str) -> str:
        self._can_fail_sends()
        shown = self._chat_open().send_failing(text, refused_by_server)
        self._talking = True  # the page shows the message (and its error): no longer a new, empty conversation
        return self._met_error(shown)

    def say_with_memory_write_refused(self, text: str) -> str:
        """A turn answered, and the page's write of what it taught answered by a server error once; what the page
        then says. Only where the page writes memories: an app whose server writes them has no such write to fail."""
        self._can_fail_sends()
        if self.app.writes_memories_later or "memories" not in self.app.target.api:
            pytest.skip(f"{self.app.name} writes memories on its server after a turn, not from its page: no page "
                        "write to fail (not applicable)")
        shown = self._chat_to_send().send_with_write_failing(text, refused_by_server)
        self._talking = True
        return self._met_error(shown)

    def _can_hold_answers(self) -> None:
        if "messages" not in self.app.target.api:
            pytest.skip(f"holding an answer back needs the {self.app.target.name} target's [api] messages (the address "
                        "the page sends a turn to): the suite has not built it for this app")

    def say_before_answer(self, first: str, second: str) -> tuple[Exchange, Exchange]:
        self._can_hold_answers()
        answers = self._chat_to_send().send_before_answer(first, second)
        self._talking = True
        return self._heard(first, *answers[0]), self._heard(second, *answers[1])

    def say_then_open(self, text: str, conversation_id: str) -> None:
        self._can_hold_answers()
        if not self._open_page().url.startswith(self.app.base_url):
            self.chat.open_new()
        self._chat_to_send().send_then(text, lambda: self.sidebar.click_open(conversation_id))
        self.sidebar.wait_open(conversation_id)
        self._turns_sent += 1  # the app got the turn: an app that writes memories later writes from it too

    def say_then_start_new(self, text: str) -> None:
        self._can_hold_answers()
        self._chat_to_send().send_then(text, self.sidebar.click_new)
        self.sidebar.wait_new()
        self.chat.expect_ready()
        self._turns_sent += 1  # the app got the turn: an app that writes memories later writes from it too
        self.settle()
        self._talking = False

    def say_offline(self, text: str) -> str:
        self._can_fail_sends()
        shown = self._chat_to_send().send_offline(text)
        self._talking = True  # the page shows the message (and its error): no longer a new, empty conversation
        return self._met_error(shown)

    def say_offline_sent_online(self, text: str) -> Exchange:
        self._can_fail_sends()
        reply, recalled = self._chat_to_send().send_offline_answered_online(text)
        self._talking = True
        return self._heard(text, reply, recalled)

    def say_dropped(self, text: str) -> str:
        self._can_fail_sends()
        shown = self._chat_open().send_failing(text, dropped_after_answer)
        self._talking = True
        self._turns_sent += 1  # the app got the turn: an app that writes memories later writes from it too
        return self._met_error(shown)

    def submit(self, text: str) -> Callable[[], Exchange]:
        waiter = self._chat_to_send().submit(text)
        self._talking = True
        return lambda: self._heard(text, waiter(), self.chat.recalled_in_last_reply())

    def conversation_id(self) -> str:
        return self.chat.conversation_id()

    def start_new_conversation(self) -> None:
        """Through the app's own control where a page of the app is open (the page flushes its pending writes
        first), else at the app's start address; then the memory writes the app makes on its own have landed."""
        if self.page is None or not self.page.url.startswith(self.app.base_url):
            self.chat.open_new()
        elif not self._chat_open().is_at_home() or self._talking:  # else already on a new, empty conversation
            self.sidebar.start_new()
            self.chat.expect_ready()
        self.settle()  # a later question may rely on what the app still writes on its own
        self._talking = False

    def open_by_address(self, conversation_id: str) -> int:
        return self.chat.open_conversation(conversation_id)

    def open_from_list(self, conversation_id: str) -> None:
        if not self._open_page().url.startswith(self.app.base_url):
            self.chat.open_new()
        self._chat_open()
        self.sidebar.open_by_id(conversation_id)

    def history(self) -> list[Turn]:
        return self.chat.history()

    def turns_after_deleting_open_conversation(self) -> list[Turn]:
        return self.chat.turns_of_new_conversation()

    def conversations_listed(self, count: int | None = None) -> list[str]:
        self._chat_open()
        return self.sidebar.ids() if count is None else self.sidebar.ids_once_listed(count)

    def conversation_titles_shown(self) -> dict[str, str]:
        self._chat_open()
        return self.sidebar.titles()

    def conversation_previews_shown(self) -> dict[str, str]:
        self._chat_open()
        return self.sidebar.previews()

    def conversations_marked_open(self) -> list[str] | None:
        return self.sidebar.marked_open()

    # -- what users take back: on the app's page where its target locates the controls, else through its API --------
    def _has_memories_page(self) -> bool:
        return "memories_page" in self.app.target.api and "memory_item" in self.app.target.locators

    def _on_memories_page(self) -> MemoriesPage:
        """The memories page, reached as a person does: its link from the chat (which lets the page finish its memory
        writes first), or its address."""
        self.settle()
        chat = self.chat
        if chat.page.url == chat.url_for("memories_page"):
            return self.memories
        link = chat.el("memories_link") if chat.has("memories_link") else None
        if link is not None and chat.page.url.startswith(self.app.base_url) and link.is_visible():
            link.click()
            chat.page.wait_for_url(chat.url_for("memories_page"))
            return self.memories.expect_shown()
        return self.memories.open()

    def _chat_open(self) -> ChatPage:
        """The chat; where the user went elsewhere in the app (its memories page), back at its start address, on a
        new conversation, as a person going back to the chat."""
        chat = self.chat
        if "memories_page" in self.app.target.api and chat.page.url == chat.url_for("memories_page"):
            chat.open_new()
            self._talking = False
        return chat

    def memories_shown(self) -> list[str]:
        if not self._has_memories_page():
            return super().memories_shown()
        shown = self._on_memories_page().texts()
        return shown

    def delete_memory(self, text: str) -> str:
        if not self._has_memories_page():
            return super().delete_memory(text)
        self._deletions += 1
        try:  # the first deletion's second click lands once the page has answered, the next one's before, and so on
            return self._on_memories_page().delete(text, second_click_after_answer=self._deletions % 2 == 1)
        except NotShown as e:
            raise self._not_hers(e) from None

    def edit_memory(self, text: str, new_text: str) -> None:
        if not self._has_memories_page():
            return super().edit_memory(text, new_text)
        try:
            self._on_memories_page().edit(text, new_text)
        except NotShown as e:
            raise self._not_hers(e) from None

    def cancel_memory_edit(self, text: str, typed: str) -> str:
        if not self._has_memories_page() or "cancel_memory_edit" not in self.app.target.locators:
            return super().cancel_memory_edit(text, typed)
        try:
            return self._on_memories_page().cancel_edit(text, typed)
        except NotShown as e:
            raise self._not_hers(e) from None

    def cancel_clear_memories(self) -> list[str]:
        if not self._has_memories_page() or "cancel_clear_memories" not in self.app.target.locators:
            return super().cancel_clear_memories()
        return self._on_memories_page().cancel_clear_all()

    def _not_hers(self, shown: NotShown) -> AssertionError:
        """In the user's words, as the API actor says it: the memory looked for, and every one she has."""
        return AssertionError(f"{self.name} has no memory that reads {shown.text!r}; her memories: {shown.shown}")

    def clear_memories(self) -> None:
        if not self._has_memories_page():
            return super().clear_memories()
        self._on_memories_page().clear_all()

    def _load_again(self) -> None:
        """After a change made through the app's API rather than on the open page (as on another device): the page
        loaded again, as it shows such a change only once it reads the user's data anew."""
        if self.page is not None and self.page.url.startswith(self.app.base_url):
            self.page.reload()
            self.chat.expect_ready()

    def turn_memory(self, on: bool) -> None:
        if not self._has_memories_page() or not self.memories.has("memory_switch"):
            super().turn_memory(on)
            return self._load_again()
        self._on_memories_page().set_memory(on)

    def delete_conversation(self, conversation_id: str) -> None:
        if "delete_conversation" not in self.app.target.locators:
            super().delete_conversation(conversation_id)
            return self._load_again()
        if not self._open_page().url.startswith(self.app.base_url):
            self.chat.open_new()
        self._chat_open()
        self._deletions += 1  # as for memories: the second click after the answer, then before it, and so on
        self.sidebar.delete(conversation_id, second_click_after_answer=self._deletions % 2 == 1)

    def delete_conversation_refused(self, conversation_id: str) -> str:
        missing = [name for name in ("delete_conversation", "memories_error") if name not in self.app.target.locators]
        if missing:
            pytest.skip(f"a conversation's deletion the app refuses, told on the page, needs the "
                        f"{self.app.target.name} target's locators {', '.join(missing)}")
        if not self._open_page().url.startswith(self.app.base_url):
            self.chat.open_new()
        self._chat_open()
        return self.sidebar.delete_refused(conversation_id)

    _CONTROLS_OF_CHANGE = {"edit": ("edit_memory", "memory_edit_input", "save_memory"), "delete": ("delete_memory",),
                           "clear": ("clear_memories", "confirm_clear_memories"), "switch": ("memory_switch",)}

    def memory_change_refused(self, change: MemoryChange) -> str:
        needed = ("memory_item", "memories_error", *self._CONTROLS_OF_CHANGE[change.kind])
        missing = [name for name in needed if name not in self.app.target.locators]
        if "memories_page" not in self.app.target.api or missing:
            pytest.skip(f"{change}, refused by the app and told on the page, needs the {self.app.target.name} target's"
                        f" memories page ([api] memories_page) and its locators {', '.join(missing) or '(all there)'}")
        page = self._on_memories_page()
        try:
            shown = {"edit": lambda: page.edit_refused(change.text, change.new_text),
                     "delete": lambda: page.delete_refused(change.text),
                     "clear": page.clear_all_refused,
                     "switch": lambda: page.set_memory_refused(change.on)}[change.kind]()
        except NotShown as e:
            raise self._not_hers(e) from None
        return self._met_error(shown)

    def change_errors_shown(self) -> list[str]:
        return self.sidebar.change_errors()

    # -- leaving ---------------------------------------------------------------------------------------------------
    def leave(self) -> None:
        self.close_browser()
        self.close()
