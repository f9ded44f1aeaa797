"""What every snapshot format shares: the one-line refusal and the timestamp rule (ISO-8601 with a time zone)."""

from __future__ import annotations

from datetime import datetime


class MalformedSnapshot(Exception):
    """One line: which file, where, and what is wrong."""


def iso_with_zone(value: object) -> str | None:
    """None when `value` is an ISO-8601 timestamp with a zone, else what is wrong with it, in a few words."""
    if not isinstance(value, str) or not value:
        return "must be an ISO-8601 timestamp with a zone, e.g. 2024-05-08T13:56:00+00:00"
    try:
        when = datetime.fromisoformat(value)
    except ValueError:
        return f"{value!r} is not an ISO-8601 timestamp (e.g. 2024-05-08T13:56:00+00:00)"
    if when.tzinfo is None:
        return f"{value!r} has no time zone (add +00:00 or Z)"
    return None
