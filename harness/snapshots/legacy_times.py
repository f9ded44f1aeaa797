"""The times a legacy store holds, as a Redis-era app wrote them, and the UTC time each one means.

A generated history's memories carry their creation time twice: `created_at`, the UTC time the memory was told (what
the replay expects the app to keep, to the microsecond), and `legacy_created_at`, the same time as the legacy app
wrote it: in UTC with "Z" (`utcnow().isoformat() + "Z"`), with an explicit offset (+05:30, -08:00, +00:00), or as a
naive local wall-clock time (`now().isoformat()`) in the zone the legacy store declares (the snapshot header's
`legacy_timezone`), some of them right in the hour a daylight-saving change skips or repeats.

The rule for those (memchat's, and the one a migration is expected to follow): a wall time skipped or repeated means
that wall time with the offset in force before the change (Python zoneinfo's fold=0): 02:30 on 31 March 2024 in
Europe/Berlin is 01:30 UTC, 02:30 on 27 October 2024 is 00:30 UTC, the first of the two. The expectation is worked out
here from the zone's transitions and the time drawn, never by reading a wall time back through a zone library, so that
a migration and the suite do not share the code that could be wrong.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

# Zones with daylight saving, north and south, whose changes fall at different UTC hours.
LEGACY_ZONES = ("Europe/Berlin", "America/New_York", "Australia/Sydney")
OFFSETS = tuple(timezone(timedelta(minutes=m)) for m in (330, -480, 0))  # +05:30, -08:00, +00:00
# How the legacy app wrote a time over the years: (share, way); the rest is naive local time.
Z_SHARE, OFFSET_SHARE, EDGE_SHARE = 0.3, 0.15, 0.05


@dataclass(frozen=True)
class Change:
    """A daylight-saving change: at `at` (UTC, naive) the zone's offset goes from `before` to `after`."""

    at: datetime
    before: timedelta
    after: timedelta

    @property
    def odd_walls(self) -> tuple[datetime, datetime]:
        """The wall times it skips (spring) or repeats (autumn): [start, end)."""
        return self.at + min(self.before, self.after), self.at + max(self.before, self.after)


@dataclass(frozen=True)
class LegacyTime:
    written: str  # as the legacy store holds it
    means: datetime  # aware, UTC


def zone_changes(zone: ZoneInfo, start: datetime, end: datetime) -> list[Change]:
    """The zone's offset changes between two aware times, found hour by hour (every zone of LEGACY_ZONES changes on
    the hour in UTC)."""
    changes = []
    at = start.astimezone(UTC).replace(minute=0, second=0, microsecond=0)
    offset = at.astimezone(zone).utcoffset()
    while at < end:
        at += timedelta(hours=1)
        now = at.astimezone(zone).utcoffset()
        if now != offset:
            assert offset is not None and now is not None
            changes.append(Change(at.replace(tzinfo=None), offset, now))
            offset = now
    return changes


class LegacyClock:
    """Writes the times of one legacy store, its zone drawn from LEGACY_ZONES."""

    def __init__(self, rng: random.Random, start: datetime, end: datetime) -> None:
        self.rng = rng
        self.zone_name = rng.choice(LEGACY_ZONES)
        self.zone = ZoneInfo(self.zone_name)
        self.changes = zone_changes(self.zone, start, end)

    def _odd(self, wall: datetime) -> Change | None:
        return next((c for c in self.changes if c.odd_walls[0] <= wall < c.odd_walls[1]), None)

    def write(self, when: datetime) -> LegacyTime:
        """The time `when` (aware) as the legacy app wrote it, drawn; a few are replaced by a wall time in an hour a
        daylight-saving change skips or repeats, which means what the rule says."""
        roll = self.rng.random()
        utc = when.astimezone(UTC)
        if roll < Z_SHARE:
            return LegacyTime(utc.replace(tzinfo=None).isoformat() + "Z", utc)
        if roll < Z_SHARE + OFFSET_SHARE:
            return LegacyTime(utc.astimezone(self.rng.choice(OFFSETS)).isoformat(), utc)
        if roll < Z_SHARE + OFFSET_SHARE + EDGE_SHARE and self.changes:
            change = self.rng.choice(self.changes)
            start, end = change.odd_walls
            wall = start + timedelta(seconds=self.rng.randrange(int((end - start).total_seconds())))
            return LegacyTime(wall.isoformat(), (wall - change.before).replace(tzinfo=UTC))
        wall = utc.astimezone(self.zone).replace(tzinfo=None)
        repeated = self._odd(wall)  # the second pass of a repeated hour reads as the first
        means = (wall - repeated.before).replace(tzinfo=UTC) if repeated else utc
        return LegacyTime(wall.isoformat(), means)
