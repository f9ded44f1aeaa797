"""Shrinking a failing run to a shorter list of actions that still fails the same way (delta debugging)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")


def shrink(items: Sequence[T], still_fails: Callable[[list[T]], bool], valid: Callable[[list[T]], bool],
           budget_s: float, first_try: list[T] | None = None) -> list[T]:
    """The shortest sublist found within `budget_s` seconds that is `valid` and `still_fails`.

    `first_try`: a guess worth one replay before the systematic search (e.g. only the failing user's actions).
    Chunks of halving size are removed in turn, as in Zeller's ddmin, keeping every removal that still fails.
    """
    deadline = time.monotonic() + budget_s
    current = list(items)
    if first_try is not None and len(first_try) < len(current) and valid(first_try) and still_fails(first_try):
        current = list(first_try)
    parts = 2
    while len(current) > 1 and time.monotonic() < deadline:
        size = max(1, len(current) // parts)
        removed = False
        for start in range(len(current) - size, -1, -size):  # later chunks first: they depend on earlier ones
            if time.monotonic() >= deadline:
                break
            candidate = current[:start] + current[start + size:]
            if candidate and valid(candidate) and still_fails(candidate):
                current, removed = candidate, True
                break
        if removed:
            parts = max(parts - 1, 2)
        elif size == 1:
            break
        else:
            parts = min(parts * 2, len(current))
    return current
