"""The model client's prompt: of each fact only its newest recalled statement (memchat/README.md, model client)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from memchat.assistant import _newest_of_each_fact
from memchat.memory_store import Recalled

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def _recalled(ident: str, text: str, key: str | None, minutes: int, score: float) -> Recalled:
    return Recalled(ident, text, score, "c1", T0 + timedelta(minutes=minutes), key)


def test_a_model_is_given_the_newest_statement_of_each_fact_in_recall_order() -> None:
    old = _recalled("m1", "My order number is 4417.", "order number", 0, 0.9)
    new = _recalled("m2", "Actually, my order number is 5521.", "order number", 5, 0.8)
    dog = _recalled("m3", "My dog is Rex.", "dog", 1, 0.5)
    loose = _recalled("m4", "I like tea.", None, 2, 0.4)
    assert _newest_of_each_fact([old, new, dog, loose]) == [new, dog, loose]
    # the same time: the later id, as the built-in assistant picks it
    twin = _recalled("m5", "My order number is 7.", "order number", 5, 0.1)
    assert _newest_of_each_fact([new, twin]) == [twin]
