"""harness.legacy_seed.MigrationCounts.parse: the counts from memchat's migrate summary, or a quoted failure."""

from __future__ import annotations

import pytest

from harness.legacy_seed import MigrationCounts

SUMMARY = "migrated: read 120, written 118, skipped 2 (2 already present, 0 with an unknown owner), re-embedded 0"


def test_parses_the_summary_line() -> None:
    counts = MigrationCounts.parse(SUMMARY + "\n")
    assert (counts.read, counts.written, counts.skipped, counts.already_present) == (120, 118, 2, 2)
    assert counts.output == SUMMARY + "\n"


def test_parses_the_summary_among_other_output() -> None:
    summary = "migrated: read 120, written 0, skipped 120 (120 already present, 0 with an unknown owner), re-embedded 0"
    output = f"connecting to redis\nbatch 1/3\n{summary}\n"
    counts = MigrationCounts.parse(output)
    assert (counts.read, counts.written, counts.skipped, counts.already_present) == (120, 0, 120, 120)


def test_matches_what_memchat_prints() -> None:
    from memchat.migration import Counts

    printed = Counts(read=7, written=4, skipped_present=2, skipped_unknown_owner=1, reembedded=0).summary()
    counts = MigrationCounts.parse(f"migrated: {printed}")
    assert (counts.read, counts.written, counts.skipped, counts.already_present) == (7, 4, 3, 2)


@pytest.mark.parametrize("garbage", ["", "Traceback: boom", "read 1, written 1", "migrated: read x, written 1"])
def test_garbage_is_an_assertion_quoting_the_output(garbage: str) -> None:
    with pytest.raises(AssertionError) as info:
        MigrationCounts.parse(garbage + "\n")
    assert str(info.value) == f"the migration printed no counts; it said: {garbage!r}"


def test_long_garbage_is_quoted_by_its_end() -> None:
    output = "x" * 1000 + "THE END"
    with pytest.raises(AssertionError) as info:
        MigrationCounts.parse(output)
    message = str(info.value)
    assert "THE END" in message
    assert len(message) < 400
