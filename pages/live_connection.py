"""A page's live connection to its app: a WebSocket the page keeps open and its app streams replies over (the
target's `[api] live_socket`, as Open WebUI's socket.io). When the app restarts under an open page, the page is back
only once it has opened a new socket and heard the app on it; a message typed before then races the page's own
reconnection (its reply streamed to the socket that closed), which is a move of its own, not a restart's."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import Page, WebSocket


class NotReconnected(AssertionError):
    pass


@contextmanager
def back_after(page: Page, socket_path: str, within_s: float, who: str, back_frame: str = "") -> Iterator[None]:
    """Around something that drops the page's socket (the app's restart): on leaving, wait until the page has a new
    socket to `socket_path` that the app has spoken on, at most `within_s` seconds after the block. `back_frame`: the
    text of the frame the app sends once it has taken the page back (the page rejoined what it shows), where the
    app's first frame comes before that (a handshake); empty: any frame."""
    opened: list[tuple[WebSocket, list[bool]]] = []

    def on_socket(socket: WebSocket) -> None:
        if socket_path in socket.url:
            heard = [False]

            def on_frame(frame: str | bytes) -> None:
                if not back_frame or (isinstance(frame, str) and back_frame in frame):
                    heard[0] = True
            socket.on("framereceived", on_frame)
            opened.append((socket, heard))

    page.on("websocket", on_socket)
    try:
        yield
        deadline = time.monotonic() + within_s
        while not any(heard[0] and not socket.is_closed() for socket, heard in opened):
            left_ms = (deadline - time.monotonic()) * 1000
            if left_ms <= 0:
                heard_what = f"none sent {back_frame!r}" if back_frame else "none heard from"
                raise NotReconnected(f"{who}'s page never reconnected to the app ({socket_path}) within {within_s:g} s "
                                     f"after it restarted: {len(opened)} socket(s) opened, {heard_what}")
            try:  # the page's events (its new socket, the app's first frame on it) arrive while it waits
                if opened and not opened[-1][0].is_closed():
                    opened[-1][0].wait_for_event("framereceived", timeout=left_ms)
                else:
                    page.wait_for_event("websocket", lambda s: socket_path in s.url, timeout=left_ms)
            except PlaywrightError:
                continue  # that socket closed unheard (the app was not back yet), or the deadline: the loop says
    finally:
        page.remove_listener("websocket", on_socket)
