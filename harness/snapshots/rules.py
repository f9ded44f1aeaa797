"""What every snapshot format shares: the one-line refusal and the timestamp rule (ISO-8601 with a time zone)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from datetime import datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError


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


def iso_time(value: object) -> datetime | None:
    """The ISO-8601 time `value` says, with or without a zone; None when it is not one."""
    try:
        return datetime.fromisoformat(value) if isinstance(value, str) and value else None
    except ValueError:
        return None


def known_zone(name: str) -> bool:
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return False
    return True


def json_objects(lines: Iterable[str], name: str, rule: str = "") -> Iterator[tuple[int, dict]]:
    """(line number, object) of each non-blank line; a line that is not a JSON object is refused by its number.
    `rule`: what to add to the refusal, e.g. the format."""
    for number, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        try:
            data = json.loads(raw)
        except ValueError as e:
            raise MalformedSnapshot(f"{name}:{number}: not valid JSON ({e}){rule}") from None
        if not isinstance(data, dict):
            raise MalformedSnapshot(f"{name}:{number}: a line must be a JSON object{rule}")
        yield number, data
