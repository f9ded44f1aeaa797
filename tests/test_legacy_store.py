"""harness.app.legacy_store.MigrationCounts.parse: the counts from memchat's migrate summary, or a quoted failure."""

from __future__ import annotations

import pytest

from harness.app.legacy_store import MigrationCounts

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


def test_matches_what_memchat_prints(tmp_path) -> None:  # noqa: ANN001
    """memchat's own migration, run as the suite runs it (its command line), on an empty legacy store."""
    import subprocess
    import sys

    from harness.services.databases import provide_databases

    with provide_databases("embedded") as servers:
        proc = subprocess.run([sys.executable, "-m", "memchat", "migrate", "--from", servers.redis_url, "--to",
                               servers.pg_admin_dsn, "--batch-size", "7"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    counts = MigrationCounts.parse(proc.stdout)
    assert (counts.read, counts.written, counts.skipped, counts.already_present) == (0, 0, 0, 0)


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
