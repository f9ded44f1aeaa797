"""The memories page: a user's long-term memories, each edited or deleted, all cleared, and memory turned off or on.
Every change is made once the page shows the server's answer to it (the page shows a change only then)."""

from __future__ import annotations

from playwright.sync_api import Locator, expect

from pages.base import BasePage
from pages.impatient import click_twice


def _words(text: str) -> str:
    return " ".join(text.split())


class NotShown(AssertionError):
    """A memory looked for by its text that the page does not list, with every memory it lists."""

    def __init__(self, text: str, shown: list[str]) -> None:
        super().__init__(f"the memories page lists no memory that reads {text!r}; it lists: {shown}")
        self.text = text
        self.shown = shown


class MemoriesPage(BasePage):
    def open(self) -> MemoriesPage:
        self.page.goto(self.url_for("memories_page"))
        return self.expect_shown()

    def expect_shown(self) -> MemoriesPage:
        expect(self.el("memory_switch")).to_be_visible()
        return self

    def _item(self, text: str) -> Locator:
        """The one memory that reads `text` exactly (the first, where several do). The loaded list is read first: a
        text it does not hold anywhere fails at once with what it holds, not after a locator's timeout (a typo in
        a scenario's memory, or a memory the app never stored)."""
        shown = self.texts()
        if not any(_words(text) in _words(listed) for listed in shown):  # a looser match than the locator's exact one
            raise NotShown(text, shown)
        items = self.el("memory_item")
        return items.filter(has=self.el("memory_text").get_by_text(text, exact=True)).first

    def _pinned(self, item: Locator) -> Locator:
        """The same item whatever it shows next (editing replaces its text with a textbox): by its id attribute, where
        the target names one (`id_attribute` of memory_item), else as found."""
        attribute = self.spec("memory_item").get("id_attribute")
        if attribute is None:
            return item
        return self.with_id(self.el("memory_item"), attribute, item.get_attribute(attribute) or "")

    def texts(self) -> list[str]:
        """Every memory shown, oldest first, once the list (or its empty state) shows."""
        items = self.el("memory_item")
        expect(items.first.or_(self.el("no_memories")),
               "the memories page shows neither a memory nor that there are none").to_be_visible()
        return self.el("memory_text").all_inner_texts()

    def delete(self, text: str, second_click_after_answer: bool = False) -> str:
        """Delete, clicked twice as an impatient person does; returns once the item is gone and what the clicks sent
        is answered, with what the page then says ('' when no error). Either a double click whose second click lands
        once the item is gone, as on a server quicker than a person's double click: on the next memory's Delete, slid
        under the pointer (a page that takes it as a click of its own deletes that memory too); or a second click
        while the deletion is on its way, held back as a slow server holds it (a page that lets it through sends the
        deletion twice)."""
        item = self._item(text)
        shown = self.el("memory_item").count()
        left = f"deleting {text!r} (clicked twice) should leave {shown - 1} of the {shown} memories shown"

        def gone() -> None:
            expect(self.el("memory_item"), left).to_have_count(shown - 1)

        click_twice(self.page, self.el("delete_memory", within=item), gone, second_click_after_answer,
                    self.urls_of("memory"), "DELETE")
        gone()
        return self.error() if self.has("memories_error") else ""

    def edit(self, text: str, new_text: str) -> None:
        """Edit, which opens on the memory as it reads, the new text typed over the old, Save; returns once the item
        shows what the server stored."""
        item = self._pinned(self._item(text))
        self.el("edit_memory", within=item).click()
        expect(self.el("memory_edit_input", within=item), f"the editor of the memory {text!r} opened on other text"
               ).to_have_value(text)
        self.el("memory_edit_input", within=item).fill(new_text)
        self.el("save_memory", within=item).click()
        expect(self.el("memory_text", within=item)).to_have_text(new_text)

    def cancel_edit(self, text: str, typed: str) -> str:
        """Edit, `typed` over the old text, Cancel; returns what the item reads once its textbox is gone and its Edit
        is back."""
        item = self._pinned(self._item(text))
        self.el("edit_memory", within=item).click()
        self.el("memory_edit_input", within=item).fill(typed)
        self.el("cancel_memory_edit", within=item).click()
        still_open = "the memory's editor is still open after Cancel"
        expect(self.el("memory_edit_input", within=item), still_open).to_have_count(0)
        expect(self.el("edit_memory", within=item)).to_be_visible()
        return self.el("memory_text", within=item).inner_text()

    def cancel_clear_all(self) -> list[str]:
        """Clear all, then Cancel instead of confirming; returns the memories shown once the question has gone."""
        self.el("clear_memories").click()
        expect(self.el("confirm_clear_memories")).to_be_visible()
        self.el("cancel_clear_memories").click()
        still_asking = "the page still asks to clear every memory after Cancel"
        expect(self.el("confirm_clear_memories"), still_asking).to_be_hidden()
        return self.texts()

    def clear_all(self) -> None:
        self.el("clear_memories").click()
        self.el("confirm_clear_memories").click()
        expect(self.el("no_memories")).to_be_visible()

    def set_memory(self, enabled: bool) -> None:
        """The switch set, once the page shows the change saved: the switch enabled again (pages disable it while
        its change is on its way) and, where the target locates one, the page's status line changed."""
        switch = self.el("memory_switch")
        if switch.is_checked() == enabled:
            return
        status = self.el("memory_status") if self.has("memory_status") else None
        before = status.inner_text() if status is not None else ""
        switch.click()
        expect(switch).to_be_enabled()
        expect(switch).to_be_checked(checked=enabled)
        if status is not None:
            expect(status).not_to_have_text(before)

    # -- a change the app refuses: its one request answered by a server error in the app's place -------------------
    def _unchanged(self, item: Locator, text: str) -> None:
        """The item reads as before, its controls back and ready for another try."""
        expect(self.el("memory_text", within=item), "the page shows a change the app refused").to_have_text(text)
        for control in ("edit_memory", "delete_memory"):
            expect(self.el(control, within=item), "a control of the memory is not back after the app refused "
                                                  "its change").to_be_enabled()

    def edit_refused(self, text: str, new_text: str) -> str:
        """Edit, the new text typed, Save, the save refused; returns what the page says, the memory reading as
        before."""
        item = self._pinned(self._item(text))
        self.el("edit_memory", within=item).click()
        self.el("memory_edit_input", within=item).fill(new_text)
        shown = self.refused_once("memory", "PUT", self.el("save_memory", within=item).click)
        self._unchanged(item, text)
        return shown

    def delete_refused(self, text: str) -> str:
        """Delete clicked once, refused; returns what the page says, the memory still listed."""
        item = self._pinned(self._item(text))
        shown = self.refused_once("memory", "DELETE", self.el("delete_memory", within=item).click)
        self._unchanged(item, text)
        return shown

    def clear_all_refused(self) -> str:
        """Clear all, confirmed, refused; returns what the page says, every memory still listed."""
        before = self.texts()
        self.el("clear_memories").click()
        shown = self.refused_once("memories", "DELETE", self.el("confirm_clear_memories").click)
        expect(self.el("memory_text"), "the page shows a clearing the app refused").to_have_text(before)
        still_asking = "the page still asks to clear after the app refused it"
        expect(self.el("confirm_clear_memories"), still_asking).to_be_hidden()
        return shown

    def set_memory_refused(self, enabled: bool) -> str:
        """The switch clicked, its saving refused; returns what the page says, the switch as before and enabled."""
        switch = self.el("memory_switch")
        status = self.el("memory_status") if self.has("memory_status") else None
        before = status.inner_text() if status is not None else ""
        shown = self.refused_once("settings", "PUT", switch.click)
        expect(switch, "the memory switch is not back after the app refused its change").to_be_enabled()
        expect(switch, "the switch shows a setting the app refused").to_be_checked(checked=not enabled)
        if status is not None:
            expect(status, "the page's status line shows a setting the app refused").to_have_text(before)
        return shown

    def error(self) -> str:
        """What the page says when the server refused a change ('' when it refused none)."""
        alert = self.el("memories_error")
        return alert.inner_text() if alert.count() else ""
