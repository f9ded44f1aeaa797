"""Failures on the way between the page and the app, made with Playwright's routing only (the app is never patched):
the request the page sends is answered by a server error in the app's place, or reaches the app and its answer is
lost on the way back (the connection drops mid-reply), or is held back while the user acts (a slow server)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import Page, Route

# What a request meets the one time it fails.
Failure = Callable[[Route], None]

# A 503 as the app's server answers one: memchat says what went wrong in `error`, FastAPI apps (Open WebUI) in
# `detail`; the page shows whichever it reads.
_UNAVAILABLE = {"error": "Service Unavailable", "detail": "Service Unavailable"}


def refused_by_server(route: Route) -> None:
    """The app never sees the request: a server error answers it (a proxy in front of a restarting app)."""
    route.fulfill(status=503, content_type="application/json", body=json.dumps(_UNAVAILABLE))


def dropped_after_answer(route: Route) -> None:
    """The app gets the request and answers it in full; the page never gets the answer (the connection reset)."""
    route.fetch().dispose()  # returns once the app has answered: whatever it stores of the request is stored
    route.abort("connectionreset")


def once(failure: Failure, method: str = "POST") -> Failure:
    """`failure` for the first `method` request only; every other request goes on to the app untouched."""
    left = [failure]

    def handle(route: Route) -> None:
        if route.request.method == method and left:
            left.pop()(route)
        else:
            route.fallback()

    return handle


@contextmanager
def held_back(page: Page, requests: str | re.Pattern[str], method: str, act: Callable[[], None]) -> Iterator[None]:
    """`act` (a click that sends one `method` request to `requests`), its request held back on its way until the
    block ends, as a slow server holds it; the block runs once the page has sent it. Every other request goes on."""
    held: list[Route] = []
    released = False

    def hold(route: Route) -> None:
        if route.request.method != method or held or released:
            route.fallback()
        else:
            held.append(route)

    matches = requests.search if isinstance(requests, re.Pattern) else (lambda url: url == requests)
    page.route(requests, hold)
    try:
        with page.expect_request(lambda r: r.method == method and bool(matches(r.url))):
            act()
        yield
    finally:
        released = True
        for route in held:
            try:
                route.continue_()
            except PlaywrightError:
                pass  # the page left without it: the request was dropped with the page
        page.unroute(requests, hold)
