"""Every HTTP client of the suite: one TLS context, and pooled connections given up before the app's server gives them
up.

httpx builds a new TLS context for each client or one-off request (about 25 ms: it loads the CA bundle), which cost
the default run 6.7 s in 261 clients (measured with cProfile), although the apps it talks to are mostly on plain HTTP.
The trust store is httpx's own (certifi's bundle)."""

from __future__ import annotations

import ssl
from functools import lru_cache
from typing import Any

import certifi
import httpx

# A server closes a keep-alive connection left idle for its timeout (uvicorn, which Letta, Open WebUI and Khoj run
# on: 5 s; gunicorn: 2 s), and httpx keeps one for 5 s. With the two equal, a request sent as the server closes the
# connection gets no answer at all ("Server disconnected without sending a response", once in CI on Letta's
# DELETE of a memory): the verdict would be the connection's, not the app's. A client that gives its idle
# connections up first opens a new one instead (a local connect, well under a millisecond).
KEEP_ALIVE = httpx.Limits(keepalive_expiry=1.0)


@lru_cache(maxsize=1)
def tls() -> ssl.SSLContext:
    return ssl.create_default_context(cafile=certifi.where())


def client(**options: Any) -> httpx.Client:  # noqa: ANN401 - httpx.Client's own options
    """An httpx client with the suite's TLS context and keep-alive."""
    return httpx.Client(verify=tls(), limits=KEEP_ALIVE, **options)
