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
    def open_new(self) -> ChatPage:
        self.page.goto(self.url_for("home_page"))
        expect(self.el("message_input")).to_be_editable()
        return self

    def open_conversation(self, conversation_id: str) -> int:
        """Open a conversation by its address; returns the HTTP status the app answered with."""
        response = self.page.goto(self.url_for("conversation_page", conversation_id=conversation_id))
        return response.status if response else 0

    def _replies(self) -> Locator:
        return self.el("assistant_message", within=self.el("messages"))

    def submit(self, text: str) -> Callable[[], str]:
        """Send one turn without waiting; returns a function that waits for the answer to it and returns its text."""
        before = self._replies().count()
        self.el("message_input").fill(text)
        self.el("send").click()

        def answer() -> str:
            reply = self._replies().nth(before)
            expect(reply).to_be_visible()
            return self.el("message_text", within=reply).inner_text()

        return answer

    def send(self, text: str) -> str:
        """Send one turn and wait for the assistant's answer to it; returns the answer's text."""
        return self.submit(text)()

    def last_reply(self) -> str:
        return self.el("message_text", within=self._replies().last).inner_text()

    def recalled_in_last_reply(self) -> list[str]:
        return self.el("recalled_memory", within=self._replies().last).all_inner_texts()

    def history(self) -> list[Turn]:
        expect(self.el("messages")).to_be_visible()
        role_attribute = self._locators["message"].get("role_attribute", "data-role")
        return [Turn(item.get_attribute(role_attribute) or "", self.el("message_text", within=item).inner_text())
                for item in self.el("message", within=self.el("messages")).all()]

    def conversation_id(self) -> str:
        """The open conversation's id, once the app has given it an address."""
        expect(self.page).to_have_url(re.compile(r"/c/[^/]+$"))
        return self.page.url.rstrip("/").rsplit("/", 1)[-1]

    def signed_in_as(self) -> str:
        return self.el("current_user").inner_text().strip()

    def expect_signed_in(self) -> None:
        expect(self.el("current_user")).to_be_visible()

    def not_found_shown(self) -> bool:
        alert = self.el("not_found")
        return alert.count() > 0 and "not found" in alert.first.inner_text().lower()

    def page_text(self) -> str:
        return self.page.locator("body").inner_text()
