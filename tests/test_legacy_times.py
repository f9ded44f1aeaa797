"""The times a generated history's legacy store holds: every way a Redis-era app wrote them, and the UTC time each
means under the documented daylight-saving rule, carried by format 2 and refused in one line when they cannot mean
anything."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from harness.snapshots import Header, HistoricalMemory, MalformedSnapshot, read_history, write_snapshot
from harness.snapshots.generate import _DAYS, _EPOCH
from harness.snapshots.legacy_times import LEGACY_ZONES, LegacyClock, zone_changes


def _clock(zone: str) -> LegacyClock:
    rng = random.Random(zone)
    clock = LegacyClock(rng, _EPOCH, _EPOCH + timedelta(days=_DAYS))
    while clock.zone_name != zone:
        clock = LegacyClock(rng, _EPOCH, _EPOCH + timedelta(days=_DAYS))
    return clock


def test_the_changes_are_found_where_the_zone_makes_them() -> None:
    berlin = zone_changes(ZoneInfo("Europe/Berlin"), _EPOCH, _EPOCH + timedelta(days=_DAYS))
    assert [(c.at, c.odd_walls) for c in berlin[2:]] == [
        (datetime(2024, 3, 31, 1), (datetime(2024, 3, 31, 2), datetime(2024, 3, 31, 3))),  # skipped
        (datetime(2024, 10, 27, 1), (datetime(2024, 10, 27, 2), datetime(2024, 10, 27, 3))),  # repeated
    ]


@pytest.mark.parametrize("zone", LEGACY_ZONES)
def test_every_way_of_writing_is_drawn_and_means_what_zoneinfo_reads_with_fold_0(zone: str) -> None:
    """The suite works the UTC time out from the changes it found, not through a zone library: zoneinfo agreeing is
    the proof that both follow the documented rule."""
    clock = _clock(zone)
    drawn = {"Z": 0, "offset": 0, "local": 0, "skipped or repeated": 0}
    for n in range(4000):
        when = _EPOCH + timedelta(seconds=clock.rng.randrange(_DAYS * 86400), microseconds=n % 7)
        written = clock.write(when)
        read = datetime.fromisoformat(written.written)
        assert (read.replace(tzinfo=clock.zone) if read.tzinfo is None else read).astimezone(UTC) == written.means
        if written.written.endswith("Z"):
            drawn["Z"] += 1
        elif read.tzinfo is not None:
            drawn["offset"] += 1
        elif clock._odd(read):
            drawn["skipped or repeated"] += 1
        else:
            drawn["local"] += 1
            assert written.means == when  # an ordinary local time is the time drawn
    assert min(drawn.values()) >= 100, drawn


def test_a_naive_legacy_time_needs_the_headers_zone_and_old_files_still_load(tmp_path: Path) -> None:
    memory = HistoricalMemory("m1", "ana", "My gate code is 7731.", "2024-03-31T01:30:00+00:00",
                              legacy_created_at="2024-03-31T02:30:00")
    header = Header("one", ["e1"], "e1", 0.25, 1, 1, 0, 1, "Europe/Berlin")
    path = tmp_path / "local.jsonl"
    write_snapshot(path, header, [memory], [])
    assert list(read_history(path)) == [header, memory]
    lines = path.read_text(encoding="utf-8").splitlines()
    plain = json.loads(lines[0])
    del plain["legacy_timezone"]
    path.write_text("\n".join([json.dumps(plain), *lines[1:]]) + "\n", encoding="utf-8")
    with pytest.raises(MalformedSnapshot, match=r"^local.jsonl:2: legacy_created_at: '2024-03-31T02:30:00' has no "
                                                r"zone and the header declares no legacy_timezone .*: add one"):
        list(read_history(path))
    old = HistoricalMemory("m1", "ana", "My gate code is 7731.", "2024-03-31T01:30:00+00:00")
    write_snapshot(path, Header("old", ["e1"], "e1", 0.25, 1, 1, 0, 1), [old], [])
    written = path.read_text(encoding="utf-8")
    assert "legacy_timezone" not in written and "legacy_created_at" not in written  # as before legacy times
    assert list(read_history(path))[1] == old


@pytest.mark.parametrize(("change", "says"), [
    ({"legacy_timezone": "Europe/Atlantis"}, "legacy_timezone: 'Europe/Atlantis' is not a time zone name"),
    ({"legacy_created_at": "31 March, 2:30"}, "legacy_created_at: '31 March, 2:30' is not an ISO-8601 time"),
])
def test_a_legacy_time_or_zone_that_means_nothing_is_refused_by_line_and_field(tmp_path: Path, change: dict,
                                                                               says: str) -> None:
    header = Header("one", ["e1"], "e1", 0.25, 1, 1, 0, 1, "Europe/Berlin")
    memory = HistoricalMemory("m1", "ana", "My gate code is 7731.", "2024-03-31T01:30:00+00:00")
    path = tmp_path / "bad.jsonl"
    write_snapshot(path, header, [memory], [])
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    lines["legacy_timezone" not in change].update(change)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    with pytest.raises(MalformedSnapshot, match=f"^bad.jsonl:{1 + ('legacy_timezone' not in change)}: {says}"):
        list(read_history(path))
