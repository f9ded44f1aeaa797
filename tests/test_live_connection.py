"""A page's live connection after the app restarts (pages/live_connection.py), on a real Chromium and a small
WebSocket server in place of an app: the page is back only once the app has taken it back, not at its handshake."""

from __future__ import annotations

import base64
import hashlib
import socket
import threading
import time
from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, sync_playwright

from harness.browser.chromium import find_chromium, playwright_chromium
from pages.live_connection import NotReconnected, back_after

GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"  # RFC 6455's
PRESENCE = '42["events",{"data":{"type":"chat:presence"}}]'


class App:
    """Answers one socket: its handshake frame at once; the page's "join" with the presence frame, 300 ms later
    (when `presence`), noting when it sent it."""

    def __init__(self, presence: bool) -> None:
        self.presence, self.sent_at = presence, 0.0
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        conn, _ = self.server.accept()
        request = conn.recv(4096).decode()
        key = next(line.split(":", 1)[1].strip() for line in request.split("\r\n")
                   if line.lower().startswith("sec-websocket-key:"))
        accept = base64.b64encode(hashlib.sha1((key + GUID).encode()).digest()).decode()
        conn.sendall(f"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                     f"Sec-WebSocket-Accept: {accept}\r\n\r\n".encode())
        self._send(conn, '0{"sid":"s1"}')
        head = conn.recv(2)  # the page's "join": a short masked text frame (its mask and payload read, unused)
        conn.recv(4 + (head[1] & 0x7F))
        if self.presence:
            time.sleep(0.3)  # the app's own pace between the handshake and taking the page back
            self.sent_at = time.monotonic()
            self._send(conn, PRESENCE)
        conn.recv(1)  # held open until the page goes

    @staticmethod
    def _send(conn: socket.socket, text: str) -> None:
        data = text.encode()
        conn.sendall(bytes([0x81, len(data)]) + data)


@pytest.fixture(scope="module")
def page() -> Iterator[Page]:
    with sync_playwright() as pw:
        browser = pw.chromium.launch(**find_chromium(None, playwright_chromium()).launch_args())
        try:
            yield browser.new_page()
        finally:
            browser.close()


def open_socket(page: Page, app: App) -> None:
    page.evaluate("""port => { const sock = new WebSocket(`ws://127.0.0.1:${port}/ws/socket.io/?EIO=4`);
                              sock.onopen = () => sock.send("join"); window.sock = sock; }""", app.port)


def test_a_page_is_back_once_the_app_has_taken_it_back_not_at_its_handshake(page: Page) -> None:
    app = App(presence=True)
    with back_after(page, "/ws/socket.io", 10, "Ana", back_frame="chat:presence"):
        open_socket(page, app)
    assert app.sent_at, "back at the handshake, before the app took the page back"  # it sends 300 ms after


def test_a_page_the_app_never_takes_back_is_named_with_what_it_lacked(page: Page) -> None:
    app = App(presence=False)
    with pytest.raises(NotReconnected, match="Ana's page never reconnected .* 1 socket\\(s\\) opened, none sent "
                                             "'chat:presence'"):
        with back_after(page, "/ws/socket.io", 2, "Ana", back_frame="chat:presence"):
            open_socket(page, app)
