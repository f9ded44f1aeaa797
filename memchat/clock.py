"""The app's notion of now: the wall clock, or one that tests may move (for memory expiry)."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta


class Clock:
    def __init__(self, settable: bool = False) -> None:
        self.settable = settable
        self._offset = timedelta(0)
        self._lock = threading.Lock()

    def now(self) -> datetime:
        with self._lock:
            return datetime.now(UTC) + self._offset

    def set(self, when: datetime) -> datetime:
        """Move to `when`; time keeps running from there."""
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        with self._lock:
            self._offset = when - datetime.now(UTC)
        return self.now()

    def advance(self, days: float) -> datetime:
        with self._lock:
            self._offset += timedelta(days=days)
        return self.now()
