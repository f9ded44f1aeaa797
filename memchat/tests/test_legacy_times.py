"""The legacy store's times as its app wrote them ("Z", offsets, naive local times in its declared zone, right at
daylight-saving changes), each migrated as the aware UTC time it means."""

from __future__ import annotations

import json
from contextlib import closing
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import psycopg
import pytest

from memchat import cli, legacy_store
from memchat.db import Pool
from memchat.legacy_times import LegacyTimeError, parse_legacy_time
from memchat.migration import MigrationError, migrate
from memchat.tests.helpers import add_user, settings_for

BERLIN = ZoneInfo("Europe/Berlin")
# As written, and the UTC time it means (memchat/legacy_times.py).
WRITTEN = {
    "2024-05-08T13:56:00Z": datetime(2024, 5, 8, 13, 56, tzinfo=UTC),
    "2024-05-08T19:26:00.250000+05:30": datetime(2024, 5, 8, 13, 56, 0, 250000, tzinfo=UTC),
    "2024-05-08T05:56:00-08:00": datetime(2024, 5, 8, 13, 56, tzinfo=UTC),
    "2024-05-08T13:56:00+00:00": datetime(2024, 5, 8, 13, 56, tzinfo=UTC),
    "2024-05-08T15:56:00": datetime(2024, 5, 8, 13, 56, tzinfo=UTC),  # Berlin in summer: +02:00
    "2024-01-08T14:56:00.000001": datetime(2024, 1, 8, 13, 56, 0, 1, tzinfo=UTC),  # in winter: +01:00
    # skipped on 31 March 2024 (02:00 -> 03:00): the offset before the change, +01:00
    "2024-03-31T02:30:00": datetime(2024, 3, 31, 1, 30, tzinfo=UTC),
    # repeated on 27 October 2024 (03:00 -> 02:00): the first of the two, +02:00
    "2024-10-27T02:30:00": datetime(2024, 10, 27, 0, 30, tzinfo=UTC),
}


@pytest.mark.parametrize("written", WRITTEN)
def test_each_way_the_legacy_app_wrote_a_time_means_one_utc_time(written: str) -> None:
    assert parse_legacy_time(written, "created_at", BERLIN) == WRITTEN[written]


def test_a_naive_time_without_a_declared_zone_is_refused_as_before() -> None:
    with pytest.raises(LegacyTimeError, match=r"^created_at '2024-05-08T15:56:00' is not ISO-8601 with a time zone, "
                                              r"and the legacy store declares no zone .*--timezone"):
        parse_legacy_time("2024-05-08T15:56:00", "created_at", None)
    assert parse_legacy_time("2024-05-08T13:56:00Z", "created_at", None) == WRITTEN["2024-05-08T13:56:00Z"]


def _created(dsn: str) -> dict[str, datetime]:
    with psycopg.connect(dsn) as conn:
        return dict(conn.execute("SELECT id, created_at FROM memories").fetchall())


def test_the_migration_turns_every_legacy_time_into_the_utc_time_it_means(db, redis_url, tmp_path) -> None:
    add_user(db, "u1", "x")
    path = tmp_path / "legacy.jsonl"
    path.write_text("".join(json.dumps({"id": f"t{i}", "user_id": "u1", "text": f"My locker code is {i}.",
                                        "created_at": written}) + "\n" for i, written in enumerate(WRITTEN)))
    assert cli.main(["redis-load", "--to", redis_url, "--file", str(path), "--timezone", "Europe/Berlin"]) == 0
    with closing(legacy_store.connect(redis_url)) as client, closing(Pool(db, size=2)) as pool:
        assert legacy_store.declared_zone(client) == "Europe/Berlin"
        migrate(client, pool, settings_for(db), batch_size=3)
    assert _created(db) == {f"t{i}": want for i, want in enumerate(WRITTEN.values())}


def test_a_naive_time_in_a_store_without_a_zone_stops_the_migration_naming_the_memory(db, redis_url) -> None:
    add_user(db, "u1", "x")
    with closing(legacy_store.connect(redis_url)) as client, closing(Pool(db, size=2)) as pool:
        legacy_store.put(client, [{"id": "m1", "user_id": "u1", "text": "My dog is called Rex.",
                                   "created_at": "2024-05-08T15:56:00"}], "hash-ngram-v1")
        with pytest.raises(MigrationError, match=r"^memory m1: created_at '2024-05-08T15:56:00' is not ISO-8601 "
                                                 r"with a time zone, .*; fix it in Redis and run the migration again$"):
            migrate(client, pool, settings_for(db), batch_size=3)


def test_redis_load_refuses_an_unknown_zone_in_one_line(redis_url, capsys) -> None:
    assert cli.main(["redis-load", "--to", redis_url, "--file", "-", "--timezone", "Europe/Atlantis"]) == 2
    assert capsys.readouterr().err.strip() == (
        "memchat: --timezone: time zone 'Europe/Atlantis' is unknown; give an IANA name such as Europe/Berlin")
