"""The times of the legacy Redis store as its app wrote them, each made an aware UTC time for PostgreSQL.

Over its life the Redis-era app wrote `created_at` and `expires_at` three ways: in UTC with a "Z"
(`utcnow().isoformat() + "Z"`), with an explicit offset (`2024-05-08T19:26:00+05:30`), and, for years, as naive local
wall-clock times (`datetime.now().isoformat()`) in the zone it ran in, which the store declares in its settings hash
(legacy_store.declared_zone). A naive time is read in that zone with fold=0, as Python's zoneinfo does: a wall time
the zone skipped (spring forward) or repeated (fall back) takes the offset in force before the change, so 02:30 on 31
March 2024 in Europe/Berlin is 01:30 UTC and 02:30 on 27 October 2024 is 00:30 UTC (the first of the two). A naive
time in a store that declares no zone is refused, as it always was: nothing says which zone it was written in.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError


class LegacyTimeError(ValueError):
    """What is wrong with one legacy time, naming the field; the caller names the record."""


def zone_named(name: str) -> ZoneInfo:
    """The IANA zone of that name; an unknown name raises LegacyTimeError in one line."""
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise LegacyTimeError(f"time zone {name!r} is unknown; give an IANA name such as Europe/Berlin") from None


def parse_legacy_time(value: object, field: str, zone: tzinfo | None) -> datetime:
    """An ISO-8601 time with "Z" or an offset, or a naive one read in the store's `zone` (fold=0), as UTC; raises
    LegacyTimeError naming the field when it is not ISO-8601, or naive without a zone."""
    when = None
    if isinstance(value, str):
        try:
            when = datetime.fromisoformat(value)
        except ValueError:
            pass
    if when is None:
        shown = value if isinstance(value, str) else json.dumps(value)
        raise LegacyTimeError(f"{field} '{shown}' is not ISO-8601 with a time zone")
    if when.tzinfo is None:
        if zone is None:
            raise LegacyTimeError(f"{field} '{value}' is not ISO-8601 with a time zone, and the legacy store declares "
                                  "no zone for its local times (redis-load --timezone, e.g. Europe/Berlin)")
        when = when.replace(tzinfo=zone)  # fold=0: a skipped or repeated wall time takes the offset before the change
    return when.astimezone(UTC)



def wall_clock_as_utc(value: str) -> datetime:
    """The fault migration-local-times-as-utc: the legacy wall clock labelled UTC (`fromisoformat(t).replace(tzinfo=
    UTC)`), the store's zone ignored and any offset dropped."""
    return datetime.fromisoformat(value).replace(tzinfo=UTC)
