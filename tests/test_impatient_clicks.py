"""A person's two clicks (pages/impatient.py) on a real Chromium: on a control below the fold as well, which a
person scrolls to before clicking (a long list of long memories puts the one to delete there)."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect, sync_playwright

from harness.browser.chromium import find_chromium, playwright_chromium
from pages.impatient import click_twice

# Tall items, the last one's Delete far below a window of 720 pixels; a click removes its item.
LIST = """<ul id="list">{items}</ul>
<script>
document.getElementById("list").addEventListener("click", (event) => {{
  if (event.detail > 1) return;
  event.target.closest("button")?.closest("li")?.remove();
}});
</script>"""
ITEM = '<li style="height: 400px">memory {n} <button type="button">Delete</button></li>'


@pytest.fixture(scope="module")
def page() -> Iterator[Page]:
    with sync_playwright() as pw:
        browser = pw.chromium.launch(**find_chromium(None, playwright_chromium()).launch_args())
        try:
            yield browser.new_page(viewport={"width": 1280, "height": 720})
        finally:
            browser.close()


def test_a_control_below_the_fold_is_scrolled_to_and_clicked(page: Page) -> None:
    page.set_content(LIST.format(items="".join(ITEM.format(n=n) for n in range(8))))
    items = page.locator("li")
    last = items.filter(has_text="memory 7").get_by_role("button")

    def gone() -> None:
        expect(items).to_have_count(7)

    click_twice(page, last, gone, second_after_answer=True, requests=re.compile("^$"), method="DELETE")
    expect(items).to_have_count(7)  # that one only: the second press, on whatever slid under it, is no click
    expect(page.get_by_text("memory 7")).to_have_count(0)
