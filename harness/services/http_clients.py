"""One TLS context for every HTTP client of the suite. httpx builds a new one for each client or one-off request
(about 25 ms: it loads the CA bundle), which cost the default run 6.7 s in 261 clients (measured with cProfile),
although the apps it talks to are mostly on plain HTTP. The trust store is httpx's own (certifi's bundle)."""

from __future__ import annotations

import ssl
from functools import lru_cache

import certifi


@lru_cache(maxsize=1)
def tls() -> ssl.SSLContext:
    return ssl.create_default_context(cafile=certifi.where())
