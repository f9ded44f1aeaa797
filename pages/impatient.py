"""A person who clicks a control twice: the two ways a second click meets a page whose first one is still being
answered, or has just been."""

from __future__ import annotations

import re
from collections.abc import Callable

from playwright.sync_api import Locator, Page, Request

from pages.network_failures import held_back


def click_twice(page: Page, control: Locator, done: Callable[[], None], second_after_answer: bool,
                requests: re.Pattern[str], method: str) -> None:
    """Click `control` twice where it is and return once `done` (what the first click does, shown) holds and
    every request the clicks sent is answered. `second_after_answer`: a double click on a server quicker than a
    person, the second press landing once the page has shown what the first did, on whatever took the control's
    place (a page that counts it as a click of its own acts on that too); else a second click, a while later, as the
    first's request (`method` to `requests`) is still on its way, held back as a slow server holds it (a page that
    lets it through acts twice)."""
    # A person scrolls to what they click: the mouse clicks where the control is in the window, and a control below
    # the fold (a long list of long memories) is not there to be clicked until it is scrolled to.
    control.scroll_into_view_if_needed()
    box = control.bounding_box()
    assert box is not None, f"{control} is not on the screen to be clicked"
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    sent: list[Request] = []

    def record(request: Request) -> None:
        sent.append(request)

    page.on("request", record)
    try:
        if second_after_answer:
            page.mouse.click(x, y)
            done()
            page.mouse.down(click_count=2)  # the same double click's second press, where the first was
            page.mouse.up(click_count=2)
        else:
            with held_back(page, requests, method, lambda: page.mouse.click(x, y)):
                page.mouse.click(x, y)  # again: nothing seems to happen yet
        done()
    finally:
        page.remove_listener("request", record)
    for request in sent:  # every answer to what the clicks sent, then the page's next frame, drawn after them
        request.response()
    page.evaluate("() => new Promise(requestAnimationFrame)")
