"""Whether a list the app shows is in the order it promises, to the resolution of the app's own timestamps: items
made within that resolution of each other may come in either order, anything further apart may not."""

from __future__ import annotations

from collections.abc import Sequence


def out_of_order(listed: Sequence[str], made_at: dict[str, float], newest_first: bool,
                 resolution_s: float = 0.0) -> list[tuple[str, str]]:
    """Pairs (earlier in the list, later in the list) that break the order by more than `resolution_s`; only the
    first pair found for each item that is out of place. Items without a time are not judged."""
    wrong: list[tuple[str, str]] = []
    bound: tuple[float, str] | None = None  # the newest (oldest) time so far that later items may not pass
    for item in listed:
        if item not in made_at:
            continue
        when = made_at[item] if newest_first else -made_at[item]
        if bound is not None and when > bound[0] + resolution_s:
            wrong.append((bound[1], item))
        if bound is None or when < bound[0]:
            bound = (when, item)
    return wrong
