"""The chat screen: send a turn, wait for the assistant's reply, read the reply, the recalled memories and the
whole history."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from playwright.sync_api import Locator, expect

from pages.base import BasePage


@dataclass(frozen=True)
class Turn:
    role: str  # "user" or "assistant"
    text: str


class ChatPage(BasePage):
    def go_home(self) -> None:
        """Open the app's start address, whatever it then shows (the chat, or the sign-in page)."""
        self.page.goto(self.url_for("home_page"))

    def open_new(self) -> ChatPage:
        self.go_home()
        self.expect_ready()
        return self

    def expect_ready(self) -> None:
        expect(self.el("message_input")).to_be_editable()

    def open_conversation(self, conversation_id: str) -> int:
        """Open a conversation by its address; returns the HTTP status the app answered with, once the page has
        settled (an app that loads the conversation with scripts has fetched it by then)."""
        response = self.page.goto(self.url_for("conversation_page", conversation_id=conversation_id))
        self.page.wait_for_load_state("networkidle")
        return response.status if response else 0

    def _replies(self) -> Locator:
        return self.el("assistant_message", within=self.el("messages"))

    def _reply_text(self, reply: Locator) -> str:
        if self.has("reply_complete"):  # apps that stream show their reply's controls only once it is complete
            expect(self.el("reply_complete", within=reply).first).to_be_attached()
        return self.el("message_text", within=reply).first.inner_text()

    def submit(self, text: str) -> Callable[[], str]:
        """Send one turn without waiting; returns a function that waits for the answer to it and returns its text."""
        before = self._replies().count()
        self.el("message_input").fill(text)
        self.el("send").click()

        def answer() -> str:
            reply = self._replies().nth(before)
            expect(reply).to_be_visible()
            return self._reply_text(reply)

        return answer

    def send(self, text: str) -> str:
        """Send one turn and wait for the assistant's answer to it; returns the answer's text."""
        return self.submit(text)()

    def recalled_in_last_reply(self) -> list[str]:
        if not self.has("recalled_memory"):
            return []
        return self.el("recalled_memory", within=self._replies().last).all_inner_texts()

    def _role_of(self, item: Locator) -> str:
        spec = self.spec("message")
        if "role_attribute" in spec:
            return item.get_attribute(spec["role_attribute"]) or ""
        classes = (item.get_attribute("class") or "").split()
        return next((role for role, cls in spec.get("role_classes", {}).items() if cls in classes), "")

    def history(self) -> list[Turn]:
        expect(self.el("messages")).to_be_visible()
        items = self.el("message", within=self.el("messages")).all()
        if items and self.has("reply_complete") and self._role_of(items[-1]) == "assistant":
            expect(self.el("reply_complete", within=items[-1]).first).to_be_attached()
        return [Turn(self._role_of(item), self.el("message_text", within=item).first.inner_text()) for item in items]

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
        self.reveal("current_user")
        return self.el("current_user").first.inner_text().strip()

    def expect_signed_in(self) -> None:
        self.expect_ready()
        self.reveal("current_user")
        expect(self.el("current_user").first).to_be_visible()

    def page_text(self) -> str:
        return self.page.locator("body").inner_text()
