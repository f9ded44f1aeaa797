"""Waiting for a condition with a deadline, instead of sleeping for a guessed time."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


class Timeout(AssertionError):
    pass


def wait_until(probe: Callable[[], T], done: Callable[[T], bool], *, timeout: float = 5.0, interval: float = 0.05,
               what: str = "the condition") -> T:
    """Call `probe` until `done(result)` holds; return that result. On the deadline, raise with the last result."""
    deadline = time.monotonic() + timeout
    while True:
        result = probe()
        if done(result):
            return result
        if time.monotonic() >= deadline:
            raise Timeout(f"{what} did not happen within {timeout:g} s; last seen: {result!r}")
        time.sleep(interval)  # the polling interval between two looks, not a wait for the thing itself
