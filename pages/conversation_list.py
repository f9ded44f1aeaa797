"""The sidebar listing the signed-in user's conversations, newest first."""

from __future__ import annotations

from playwright.sync_api import Locator, expect

from pages.base import BasePage, css_of
from pages.impatient import click_twice


class ConversationList(BasePage):
    def _items(self) -> Locator:
        return self.el("conversation_item", within=self.el("conversation_list"))

    def ids(self) -> list[str]:
        """Conversation ids, read from each link's address (the last path segment)."""
        self.reveal("conversation_list")
        hrefs = self._items().evaluate_all("links => links.map(a => a.getAttribute('href') || '')")
        return [href.rstrip("/").rsplit("/", 1)[-1] for href in hrefs]

    def titles(self) -> dict[str, str]:
        """Each listed conversation's title as the page shows it (its link's text), by id."""
        self.reveal("conversation_list")
        shown = self._items().evaluate_all(
            "links => links.map(a => [a.getAttribute('href') || '', a.textContent || ''])")
        return {href.rstrip("/").rsplit("/", 1)[-1]: text for href, text in shown}

    def previews(self) -> dict[str, str]:
        """Each listed conversation's preview as the page shows it (the text of its `conversation_preview`, found in
        the item's list entry), by id; "" for an entry that shows none."""
        self.reveal("conversation_list")
        css = css_of(self.spec("conversation_preview"))
        if css is None:
            raise ValueError("the target's conversation_preview locator must be a testid or css: it is read inside "
                             "each list entry")
        shown = self._items().evaluate_all(
            "(links, css) => links.map(a => [a.getAttribute('href') || '',"
            " (a.closest('li') || a.parentElement).querySelector(css)?.textContent ?? ''])", css)
        return {href.rstrip("/").rsplit("/", 1)[-1]: text for href, text in shown}

    def marked_open(self) -> list[str] | None:
        """The ids of the listed conversations the page marks as the one open (the item's `current_attribute`, as
        aria-current, set to anything but "false"), once it marks exactly one; None where the target declares no
        such marking."""
        attribute = self.spec("conversation_item").get("current_attribute")
        if not attribute:
            return None
        self.reveal("conversation_list")
        marked = self._items().and_(self.page.locator(f'[{attribute}]:not([{attribute}="false"])'))
        try:
            expect(marked).to_have_count(1)
        except AssertionError:
            pass  # the caller compares what is marked with what it expected
        hrefs = marked.evaluate_all("links => links.map(a => a.getAttribute('href') || '')")
        return [href.rstrip("/").rsplit("/", 1)[-1] for href in hrefs]

    def ids_once_listed(self, count: int, timeout_ms: float = 5000) -> list[str]:
        """The ids once the list shows `count` conversations (lists load after the page, and apps that page their
        list load more as its end is scrolled into view), or what it shows by then."""
        self.reveal("conversation_list")
        items = self._items()
        while (shown := items.count()) < count:
            if shown:
                items.last.scroll_into_view_if_needed()  # an app that pages its list loads the next page
            try:
                expect(items).not_to_have_count(shown, timeout=timeout_ms)
            except AssertionError:
                break  # the caller compares what is shown with what it expected
        return self.ids()

    def open_by_id(self, conversation_id: str) -> None:
        """Click the conversation in the list; returns once the browser is at its address (apps may finish what the
        page was doing before they navigate)."""
        self.click_open(conversation_id)
        self.wait_open(conversation_id)

    def click_open(self, conversation_id: str) -> None:
        """Click the conversation in the list, and no more."""
        if "reveal_with" in self.spec("conversation_list"):
            self.reveal("conversation_list")
        self._items().and_(self.page.locator(f'[href$="/{conversation_id}"]')).click()

    def wait_open(self, conversation_id: str) -> None:
        """Once the browser is at the conversation's address."""
        self.page.wait_for_url(self.url_for("conversation_page", conversation_id=conversation_id))

    def delete(self, conversation_id: str, second_click_after_answer: bool = False) -> None:
        """Through the item's own delete control, clicked twice as an impatient person does (pages.impatient);
        returns once the list no longer shows it (the page shows a deletion once the app has made it) and what the
        clicks sent is answered."""
        self.reveal("conversation_list")
        link = self.page.locator(f'[href$="/{conversation_id}"]')
        item = self._items().and_(link)
        row = self.el("conversation_row").filter(has=link).first

        def gone() -> None:
            expect(item, "the conversation is still listed after its deletion was clicked").to_have_count(0)

        click_twice(self.page, self.el("delete_conversation", within=row), gone, second_click_after_answer,
                    self.urls_of("conversation"), "DELETE")

    def delete_refused(self, conversation_id: str) -> str:
        """Through the item's own delete control, clicked once, its request answered by a server error in the app's
        place (pages.network_failures); returns what the page then says, once it says it, the item still listed."""
        self.reveal("conversation_list")
        link = self.page.locator(f'[href$="/{conversation_id}"]')
        row = self.el("conversation_row").filter(has=link).first
        shown = self.refused_once("conversation", "DELETE", self.el("delete_conversation", within=row).click)
        expect(self._items().and_(link), "the page let the conversation the app did not delete go").to_have_count(1)
        return shown

    def change_errors(self) -> list[str]:
        """What the page says now of changes the app refused (a deletion), as it is."""
        return self.el("memories_error").all_inner_texts()

    def start_new(self) -> None:
        """Through the app's own control; returns once the browser is at the app's start address."""
        self.click_new()
        self.wait_new()

    def click_new(self) -> None:
        """Click the app's control for a new conversation, and no more."""
        self.to_act_on("new_conversation").click()

    def wait_new(self) -> None:
        """Once the browser is at the app's start address (apps may finish what the page was doing before they
        navigate)."""
        self.page.wait_for_url(self.url_for("home_page"))
