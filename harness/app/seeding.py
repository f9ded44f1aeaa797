"""Many conversations and memories put into one user's account at once, each request timed on the suite's clock, so
that lists longer than a page can be checked for order against when each item was made."""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from harness.drivers.base import UserSession
from harness.vocabulary.order import Span


@dataclass(frozen=True)
class Seeded:
    """What was stored for a user, and when: the span of the request that stored each, on the suite's clock."""

    name: str
    conversations: dict[str, Span]  # conversation id -> when
    memories: dict[str, Span]  # every memory's text (those told in the conversations too) -> when


def _timed(call: Callable[[str], object]) -> Callable[[str], tuple[object, Span]]:
    def timed(text: str) -> tuple[object, Span]:
        started = time.monotonic()
        return call(text), (started, time.monotonic())
    return timed


def seed_many(name: str, session: UserSession, told: list[str], stored: list[str], concurrency: int) -> Seeded:
    """A conversation telling each sentence of `told`, and each of `stored` remembered directly, one request each,
    `concurrency` at a time (as many as the app's driver says it serves: requests made side by side may be listed
    either way, which their spans say)."""
    conversations: dict[str, Span] = {}
    memories: dict[str, Span] = {}
    with ThreadPoolExecutor(concurrency) as pool:
        for sentence, (conversation, span) in zip(told, pool.map(_timed(session.seed_conversation), told),
                                                  strict=True):
            conversations[str(conversation)] = memories[sentence] = span
        for sentence, (_, span) in zip(stored, pool.map(_timed(lambda s: session.remember([s])), stored),
                                       strict=True):
            memories[sentence] = span
    return Seeded(name, conversations, memories)
