"""Whether a list the app shows is in the order it promises, to the resolution of the app's own timestamps: items
made within that resolution of each other may come in either order, anything further apart may not. Each item's
making is known as a span of the suite's clock (the request that made it), not an instant."""

from __future__ import annotations

from collections.abc import Sequence

Span = tuple[float, float]  # (the request that made it started, it answered)


def out_of_order(listed: Sequence[str], made_at: dict[str, Span], newest_first: bool,
                 resolution_s: float = 0.0) -> list[tuple[str, str]]:
    """Pairs (earlier in the list, later in the list) that break the order by more than `resolution_s` for certain:
    an item shown above another although it was surely made later (oldest first) or surely earlier (newest first).
    Items without a span are not judged."""
    wrong: list[tuple[str, str]] = []
    for i, above in enumerate(listed):
        if above not in made_at:
            continue
        for below in listed[i + 1:]:
            if below not in made_at:
                continue
            (a_start, a_end), (b_start, b_end) = made_at[above], made_at[below]
            surely_later = a_start > b_end + resolution_s  # `above` began after `below` had answered
            surely_earlier = a_end + resolution_s < b_start
            if (surely_earlier if newest_first else surely_later):
                wrong.append((above, below))
                break
    return wrong


def exactly_but_ties(listed: Sequence[str], expected: Sequence[str], made_at: dict[str, Span],
                     resolution_s: float) -> bool:
    """Whether `listed` is exactly `expected`: in its order, or, where the app's timestamps have `resolution_s`, with
    only items made within that resolution of each other swapped. Judged so only when every item is distinct and its
    span known; otherwise the order must be exact."""
    if list(listed) == list(expected):
        return True
    place = {text: i for i, text in enumerate(expected)}
    distinct = len(place) == len(expected) and sorted(listed) == sorted(place)
    if not resolution_s or not distinct or not place.keys() <= made_at.keys():
        return False

    def surely_apart(a: str, b: str) -> bool:
        (a_start, a_end), (b_start, b_end) = made_at[a], made_at[b]
        return a_end + resolution_s < b_start or b_end + resolution_s < a_start

    return not any(place[a] > place[b] and surely_apart(a, b) for i, a in enumerate(listed) for b in listed[i + 1:])
