"""harness.vocabulary.polling.wait_until: returns as soon as the condition holds, fails with the last thing it saw."""

from __future__ import annotations

import itertools
import time

import pytest

from harness.vocabulary.polling import Timeout, wait_until


def test_returns_the_result_that_satisfied_the_condition() -> None:
    counter = itertools.count(1)
    calls: list[int] = []

    def probe() -> int:
        calls.append(next(counter))
        return calls[-1]

    assert wait_until(probe, lambda n: n >= 3, timeout=5, interval=0.001) == 3
    assert calls == [1, 2, 3], "no call after the condition held"


def test_a_condition_true_at_once_does_not_wait_even_with_no_time_left() -> None:
    start = time.monotonic()
    assert wait_until(lambda: "ready", lambda s: s == "ready", timeout=0, interval=10) == "ready"
    assert time.monotonic() - start < 1


def test_deadline_raises_timeout_quoting_the_last_result() -> None:
    counter = itertools.count(1)
    start = time.monotonic()
    with pytest.raises(Timeout) as info:
        wait_until(lambda: f"state-{next(counter)}", lambda s: False, timeout=0.05, interval=0.01,
                   what="the memory to appear")
    assert time.monotonic() - start < 2
    assert isinstance(info.value, AssertionError)
    message = str(info.value)
    assert message.startswith("the memory to appear did not happen within 0.05 s; last seen: 'state-")
    last = int(message.rsplit("state-", 1)[1].rstrip("'"))
    assert last == next(counter) - 1, "the message quotes the last result, not the first"


def test_timeout_zero_looks_exactly_once() -> None:
    calls: list[None] = []
    with pytest.raises(Timeout, match=r"the condition did not happen within 0 s; last seen: \[None\]"):
        wait_until(lambda: calls.append(None) or calls, lambda _: False, timeout=0)
    assert len(calls) == 1
