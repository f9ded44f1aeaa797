"""The chat screen: send a turn, wait for the assistant's reply, read the reply, the recalled memories and the
whole history."""

from __future__ import annotations

import re
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import NamedTuple

from playwright.sync_api import Locator, expect

from harness.vocabulary.turn import Turn
from pages.base import BasePage, css_of
from pages.impatient import click_twice
from pages.network_failures import Failure, held_back, once


class RecalledMemory(NamedTuple):
    """A memory a reply shows it recalled: its text, and its id where the target names the attribute that holds it
    (`recalled_memory`'s `id_attribute`; empty otherwise)."""

    text: str
    id: str = ""


class ChatPage(BasePage):
    def go_home(self) -> None:
        """Open the app's start address, whatever it then shows (the chat, or the sign-in page)."""
        self.page.goto(self.url_for("home_page"))

    def open_new(self) -> ChatPage:
        self.go_home()
        self.expect_ready()
        return self

    def is_at_home(self) -> bool:
        return self.page.url == self.url_for("home_page")

    def after_sign_in(self) -> None:
        """Waits until a sign-in just sent has an outcome: the chat, or the sign-in page's refusal."""
        outcome = self.el("message_input")
        if self.has("login_error"):
            outcome = outcome.or_(self.el("login_error"))
        expect(outcome.first).to_be_visible(timeout=self.shows_within_ms("message_input"))

    def ready_or_asked_to_sign_in(self) -> bool:
        """Waits until the page shows the chat or the sign-in form; True for the chat."""
        chat, sign_in = self.el("message_input"), self.el("login_submit")
        expect(chat.or_(sign_in).first).to_be_visible(timeout=self.shows_within_ms("message_input"))
        return chat.is_visible()

    def expect_ready(self) -> None:
        expect(self.el("message_input")).to_be_editable(timeout=self.shows_within_ms("message_input"))

    def open_conversation(self, conversation_id: str, settle_s: float = 10.0) -> int:
        """Open a conversation by its address; returns the HTTP status the app answered with, once the app has
        settled: it shows the conversation's messages, says it is not there, or has left the address (apps that
        load the conversation with scripts decide after the page has loaded)."""
        url = self.url_for("conversation_page", conversation_id=conversation_id)
        response = self.page.goto(url)
        settled = self.el("message", within=self.el("messages")).first
        if self.has("not_found"):
            settled = settled.or_(self.el("not_found"))
        deadline = time.monotonic() + settle_s
        while self.page.url == url and time.monotonic() < deadline:
            try:
                expect(settled).to_be_visible(timeout=250)  # or, on the next look, the address has changed
                break
            except AssertionError:
                continue
        return response.status if response else 0

    def _replies(self) -> Locator:
        return self.el("assistant_message", within=self.el("messages"))

    def _reply_text(self, reply: Locator) -> str:
        if self.has("reply_complete"):  # apps that stream show their reply's controls only once it is complete
            expect(self.el("reply_complete", within=reply).first).to_be_attached()
        return self._text_of(reply)

    def submit(self, text: str) -> Callable[[], str]:
        """Send one turn without waiting; returns a function that waits for the answer to it and returns its text."""
        answered = self._send(text)
        return lambda: self._reply_text(answered())

    def send_and_read(self, text: str) -> tuple[str, list[RecalledMemory]]:
        """Send one turn and wait for the answer to it; returns its text and the memories it shows it recalled."""
        return self._read_reply(self._send(text)())

    def _send(self, text: str) -> Callable[[], Locator]:
        """Send one turn; returns a function that waits until the answer to it shows and returns it.

        The answer is the reply after those already shown: the n-th, or, where the app shows only the newest
        messages, the last one once its id (`id_attribute`) differs from the last one's before sending."""
        replies = self._replies()
        id_attribute = self.spec("assistant_message").get("id_attribute")
        before = replies.count()
        previous = replies.last.get_attribute(id_attribute) if id_attribute and before else None
        self.el("message_input").fill(text)
        self.el("send").click()

        def answered() -> Locator:
            reply = self._newest_reply(replies, id_attribute, previous) if id_attribute else replies.nth(before)
            try:
                expect(reply).to_be_visible()
            except AssertionError as missing:  # the same failure, said as a user sees it where the page says why
                said = self.errors_shown()
                if said:
                    raise AssertionError(f"no reply came to {text[:80]!r}: the page says "
                                         f"{' | '.join(said)!r}") from missing
                raise
            return reply

        return answered

    def _newest_reply(self, replies: Locator, id_attribute: str, previous: str | None) -> Locator:
        """The reply shown last once it is not the one shown last before sending, pinned by its id: a page that
        renders its conversation again from the server (Open WebUI does when its connection comes back, as after a
        restart) can show the older replies alone for a while, and `replies.last` would then be one of those."""
        for _ in range(3):  # each look waits; another only when the page went back to the older replies in between
            if previous is not None:
                expect(replies.last).not_to_have_attribute(id_attribute, previous)
            else:
                expect(replies.last).to_be_attached()
            reply_id = replies.last.get_attribute(id_attribute)
            if reply_id and reply_id != previous:
                return self.with_id(replies, id_attribute, reply_id)
        raise AssertionError(f"the page's newest reply has no {id_attribute} other than the one it had before sending "
                             f"({previous!r}): check the target's assistant_message id_attribute")

    def _read_reply(self, reply: Locator) -> tuple[str, list[RecalledMemory]]:
        """A reply's text and the recalled memories it shows: in one call to the page where the target locates both
        by CSS and the text is there (a turn's read costs a round trip, a traced one about 10 ms); else each read
        and waited for, as `_reply_text` and `recalled_in_last_reply` do."""
        text_css = css_of(self.spec("message_text"))
        recalled_css = css_of(self.spec("recalled_memory")) if self.has("recalled_memory") else ""
        if text_css is not None and recalled_css is not None and not self.has("reply_complete"):
            read = reply.evaluate_all(
                """(replies, s) => replies.map(reply => {
                     reply.scrollIntoView({block: "nearest"});
                     const text = reply.querySelector(s.text);
                     const recalled = s.recalled ? [...reply.querySelectorAll(s.recalled)].map(
                       r => [r.innerText, s.id ? r.getAttribute(s.id) || "" : ""]) : [];
                     return [text === null ? "" : text.innerText, recalled];
                   })""", {"text": text_css, "recalled": recalled_css, "id": self._recalled_id_attribute()})
            if len(read) == 1 and read[0][0]:
                return read[0][0], [RecalledMemory(text, mid) for text, mid in read[0][1]]
        return self._reply_text(reply), self._recalled_in(reply)

    def send_composed(self, before: str, reading: str, characters: str, after: str) -> str:
        """Type `before`, compose `characters` from `reading` in an input method (as a Chinese or Japanese user
        does) and confirm them with Enter, type `after`, then send with Enter; returns the answer's text. Drives
        Chromium's input-method events through the DevTools protocol (Input.imeSetComposition)."""
        replies = self._replies()
        before_count = replies.count()
        box = self.el("message_input")
        box.click()
        self.page.keyboard.type(before)
        cdp = self.page.context.new_cdp_session(self.page)
        try:
            cdp.send("Input.imeSetComposition", {"text": reading, "selectionStart": len(reading),
                                                 "selectionEnd": len(reading)})
            # While it composes, an Enter as a browser that tells composition by isComposing alone sends it (with
            # Enter's own key code): it confirms, it does not send.
            box.dispatch_event("keydown", {"key": "Enter", "code": "Enter", "keyCode": 13, "isComposing": True,
                                           "bubbles": True, "cancelable": True})
            # The key that confirms the candidate arrives while composing (isComposing, key code 229).
            cdp.send("Input.dispatchKeyEvent", {"type": "rawKeyDown", "key": "Enter", "code": "Enter",
                                                "windowsVirtualKeyCode": 229, "nativeVirtualKeyCode": 13})
            cdp.send("Input.dispatchKeyEvent", {"type": "keyUp", "key": "Enter", "code": "Enter",
                                                "windowsVirtualKeyCode": 13})
            cdp.send("Input.insertText", {"text": characters})
        finally:
            cdp.detach()
        # Safari's confirming Enter comes once the composition has ended (no longer composing, key code 229): sent on
        # a page whose target says it reads that key code (`ime_key_code_229` of message_input). A page that leaves
        # Safari to its editor (which knows Safari by its user agent, as ProseMirror does) cannot be sent it from
        # Chromium.
        if self.spec("message_input").get("ime_key_code_229"):
            box.dispatch_event("keydown", {"key": "Enter", "code": "Enter", "keyCode": 229, "isComposing": False,
                                           "bubbles": True, "cancelable": True})
        self.page.keyboard.type(after)
        self.page.keyboard.press("Enter")
        reply = replies.nth(before_count)
        expect(reply).to_be_visible()
        return self._reply_text(reply)

    def send_typed_lines(self, text: str) -> str:
        """Type a message of several lines as a person does, Shift+Enter between its lines, and send it with Enter;
        returns the answer's text."""
        replies = self._replies()
        before_count = replies.count()
        self._type_lines_and_enter(text)
        reply = replies.nth(before_count)
        expect(reply).to_be_visible()
        return self._reply_text(reply)

    def _type_lines_and_enter(self, text: str) -> None:
        self.el("message_input").click()
        for number, line in enumerate(text.split("\n")):
            if number:
                self.page.keyboard.press("Shift+Enter")
            self.page.keyboard.type(line)
        self.page.keyboard.press("Enter")

    def press_enter_on(self, text: str) -> None:
        """Type `text` as a person does (Shift+Enter between its lines) and press Enter, waiting for nothing: for a
        message a page must not send, whose absence the next turn's answer and the history then show."""
        self._type_lines_and_enter(text)
        self.el("message_input").fill("")  # as she clears the box before her next message

    def errors_shown(self) -> list[str]:
        """The errors the page shows now (as it is: one of a write still on its way shows later)."""
        return self.el("send_error").all_inner_texts() if self.has("send_error") else []

    def send_clicking_twice(self, text: str) -> tuple[str, list[RecalledMemory]]:
        """Send one turn with two clicks of Send, the second while the first's request is still on its way (held
        back, as a slow server holds it), as an impatient person does; returns its answer as the page shows it once
        every request the clicks sent is answered (a page that sent it twice shows the turn twice)."""
        replies = self._replies()
        before = replies.count()
        self.el("message_input").fill(text)
        click_twice(self.page, self.el("send"), lambda: expect(replies.nth(before)).to_be_visible(),
                    second_after_answer=False, requests=self._chat_requests(), method="POST")
        return self._read_reply(replies.nth(before))

    def send_refused(self, text: str) -> str:
        """Send a message the app must refuse; returns what the page says instead of an answer (its alert)."""
        replies = self._replies()
        before = replies.count()
        self.el("message_input").fill(text)
        self.el("send").click()
        error = self.el("send_error").first
        expect(error.or_(replies.nth(before)).first).to_be_visible()
        return error.inner_text() if error.is_visible() else ""

    def _chat_requests(self) -> re.Pattern[str]:
        """The address the page sends a turn to (the target's `messages`), for any conversation."""
        return self.urls_of("messages")

    def send_failing(self, text: str, failure: Failure) -> str:
        """Send one turn whose request meets `failure` (once); returns the error the page then shows (the one new
        alert, whatever else it still shows from before). Later turns go to the app untouched."""
        return self._new_error_while(self._chat_requests(), failure, lambda: self._type_and_send(text),
                                     "the page showed no error for the send")

    def send_offline(self, text: str) -> str:
        """Send one turn with the browser offline (every request of the page fails on the network, as on a train in
        a tunnel); returns the error the page then shows (the one new alert), the browser back online after it."""
        with self._offline():
            return self._new_error(lambda: self._type_and_send(text),
                                   "the page showed no error for a message sent while the browser was offline")

    def send_offline_answered_online(self, text: str) -> tuple[str, list[RecalledMemory]]:
        """Send one turn with the browser offline, then bring it back online; the answer the page shows once it has
        sent the turn (a page that keeps what was typed offline, and sends it when it can), with no error shown."""
        replies = self._replies()
        before, errors = replies.count(), self.errors_shown()
        with self._offline():
            self._type_and_send(text)
        reply = replies.nth(before)
        expect(reply, "the page neither said the message sent offline was not sent nor sent it once back "
                      "online").to_be_visible()
        assert self.errors_shown() == errors, f"the page said {self.errors_shown()} of a message it then sent"
        return self._read_reply(reply)

    @contextmanager
    def _offline(self) -> Iterator[None]:
        context = self.page.context
        context.set_offline(True)
        try:
            yield
        finally:
            context.set_offline(False)

    def _type_and_send(self, text: str) -> None:
        self.el("message_input").fill(text)
        self.el("send").click()

    def send_then(self, text: str, leave: Callable[[], None]) -> None:
        """Send one turn and, while its answer is still on its way (held back, as a slow model holds it), `leave`:
        a click that moves the page elsewhere; then let the answer through. The caller waits for where it leads
        (a page may finish the turn before it moves)."""
        with held_back(self.page, self._chat_requests(), "POST", lambda: self._type_and_send(text)):
            leave()

    def send_before_answer(self, first: str, second: str) -> list[tuple[str, list[RecalledMemory]]]:
        """Send one turn and, while its answer is still on its way (held back, as a slow model holds it), the next,
        as a person who does not wait; then let the answer through. Both answers as the page shows them, in order (a
        page may send the second at once or once the first is answered)."""
        replies = self._replies()
        before = replies.count()

        with held_back(self.page, self._chat_requests(), "POST", lambda: self._type_and_send(first)):
            self._type_and_send(second)
        expect(replies).to_have_count(before + 2)
        return [self._read_reply(replies.nth(before)), self._read_reply(replies.nth(before + 1))]

    def send_with_write_failing(self, text: str, failure: Failure) -> str:
        """Send one turn and wait for its answer while the page's write of what it taught (a POST to the target's
        `memories`) meets `failure` once; returns the error the page then shows (the one new alert)."""
        return self._new_error_while(self.url_for("memories"), failure, lambda: self._send(text)(),
                                     "the page showed no error for the memory write the app refused")

    def _new_error_while(self, requests: str | re.Pattern[str], failure: Failure, act: Callable[[], object],
                         missing: str) -> str:
        """`act` with the first POST to `requests` meeting `failure`; the one alert the page adds for it."""
        handler = once(failure)
        self.page.route(requests, handler)
        try:
            return self._new_error(act, missing)
        finally:
            self.page.unroute(requests, handler)

    def _new_error(self, act: Callable[[], object], missing: str) -> str:
        """`act`; the one alert the page adds for it (`missing`: the failure when it adds none)."""
        errors = self.el("send_error")
        before = errors.all_inner_texts()
        act()
        expect(errors, missing).to_have_count(len(before) + 1)
        new = Counter(errors.all_inner_texts()) - Counter(before)
        return next(iter(new.elements()), "")

    def send(self, text: str) -> str:
        """Send one turn and wait for the assistant's answer to it; returns the answer's text."""
        return self.submit(text)()

    def recalled_in_last_reply(self) -> list[RecalledMemory]:
        return self._recalled_in(self._replies().last)

    def _recalled_in(self, reply: Locator) -> list[RecalledMemory]:
        if not self.has("recalled_memory"):
            return []
        read = self.el("recalled_memory", within=reply).evaluate_all(
            "(items, a) => items.map(i => [i.innerText, a ? i.getAttribute(a) || '' : ''])",
            self._recalled_id_attribute())
        return [RecalledMemory(text, mid) for text, mid in read]

    def _recalled_id_attribute(self) -> str:
        return self.spec("recalled_memory").get("id_attribute", "") if self.has("recalled_memory") else ""

    def _role_of(self, item: Locator) -> str:
        """From an attribute of the message (`role_attribute`), or from what it contains (`role_markers`: role ->
        CSS of an element only that role's messages hold)."""
        spec = self.spec("message")
        if "role_attribute" in spec:
            return item.get_attribute(spec["role_attribute"]) or ""
        return next((role for role, css in spec.get("role_markers", {}).items() if item.locator(css).count()), "")

    def _load_every_message(self) -> None:
        """Apps that render only the newest messages show a loader above them (`older_messages`), which loads more
        once scrolled into view."""
        if not self.has("older_messages"):
            return
        items = self.el("message", within=self.el("messages"))
        while self.el("older_messages").count():
            shown = items.count()
            self.el("older_messages").first.scroll_into_view_if_needed()
            expect(items).not_to_have_count(shown)

    def turns_of_new_conversation(self) -> list[Turn]:
        """Once the browser is at the app's start address, a new conversation: the turns it shows (an app may show
        no message list at all until the first turn)."""
        expect(self.page, "the page did not leave the conversation deleted in it for a new one").to_have_url(
            self.url_for("home_page"))
        return self.history() if self.el("messages").count() else []

    def history(self) -> list[Turn]:
        expect(self.el("messages")).to_be_visible()
        self._load_every_message()
        messages = self.el("message", within=self.el("messages"))
        items = messages.all()
        if items and self.has("reply_complete") and self._role_of(items[-1]) == "assistant":
            expect(self.el("reply_complete", within=items[-1]).first).to_be_attached()
        return self._read_at_once(messages, len(items)) or [self._turn(item) for item in items]

    def _read_at_once(self, messages: Locator, count: int) -> list[Turn] | None:
        """Every message's role and text in one call to the page, where the target locates them by CSS; None (read
        them one by one, each waited for) when it does not, or when a message is not rendered yet."""
        text, spec = css_of(self.spec("message_text")), self.spec("message")
        if text is None or not ({"role_attribute", "role_markers"} & set(spec)):
            return None
        read = messages.evaluate_all(
            """(items, s) => items.map(item => {
                 const role = s.attribute !== null ? (item.getAttribute(s.attribute) || "")
                   : (Object.entries(s.markers).find(([, css]) => item.querySelector(css)) || [""])[0];
                 const text = item.querySelector(s.text);
                 return [role, text === null ? "" : text.innerText];
               })""",
            {"attribute": spec.get("role_attribute"), "markers": spec.get("role_markers", {}), "text": text})
        if len(read) != count or any(not t for _, t in read):
            return None
        return [Turn(role, t) for role, t in read]

    def _turn(self, item: Locator) -> Turn:
        return Turn(self._role_of(item), self._text_of(item))

    def _text_of(self, message: Locator) -> str:
        # Apps may render a message's content only once it is on screen. Scrolled by the page's own call, in one
        # round trip: Playwright's scroll_into_view_if_needed first waits for the element to stand still (55 ms a
        # message here). The message is there (the caller waited for it); the wait below is for its content.
        message.evaluate_all("ms => ms.forEach(m => m.scrollIntoView({block: 'nearest'}))")
        text = self.el("message_text", within=message).first
        # No turn is empty: an empty one is still being rendered (Open WebUI shows its reply's controls a moment
        # before the reply's text, and a read in that moment saw '').
        expect(text).not_to_be_empty()
        return text.inner_text()

    def _conversation_url(self) -> re.Pattern[str]:
        before, _, after = self._paths["conversation_page"].partition("{conversation_id}")
        return re.compile(re.escape(before) + r"([^/?#]+)" + re.escape(after) + r"$")

    def conversation_id(self) -> str:
        """The open conversation's id, once the app has given it an address."""
        pattern = self._conversation_url()
        expect(self.page).to_have_url(pattern)
        match = pattern.search(self.page.url)
        assert match is not None
        return match.group(1)

    def signed_in_as(self) -> str:
        return self.reveal("current_user").inner_text().strip()

    def expect_signed_in(self) -> None:
        self.expect_ready()
        self.reveal("current_user")

    def sign_out(self) -> None:
        self.to_act_on("logout").click()

    def page_text(self) -> str:
        return self.page.locator("body").inner_text()
