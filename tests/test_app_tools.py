"""harness.app_tools.run_tool_fed: a tool fed its standard input as the lines are made, with the failures that can
happen on either side of the pipe."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import pytest

from harness.app_tools import ToolFailed, run_tool_fed
from harness.target import load_target

MANY = 100_000  # lines of 20 bytes: far more than a pipe holds, so a writer blocks if nobody reads


def _target(script: str, marker: Path | None = None):  # noqa: ANN202
    command = [sys.executable, "-c", script] + ([str(marker)] if marker else [])
    return replace(load_target(None), tools={"tool": command})


def test_every_line_reaches_the_tool_in_order() -> None:
    target = _target("import sys; lines = sys.stdin.read().splitlines(); print(len(lines), lines[0], lines[-1])")
    lines = (f"line {n:014d}\n" for n in range(MANY))
    assert run_tool_fed(target, "tool", lines).split() == [str(MANY), "line", f"{0:014d}", "line", f"{MANY - 1:014d}"]


def test_a_tool_that_stops_reading_fails_with_its_own_last_words() -> None:
    target = _target("import sys; sys.stdin.readline(); sys.exit('record 1: text must be a string')")
    with pytest.raises(ToolFailed, match="tool failed: record 1: text must be a string"):
        run_tool_fed(target, "tool", (f"line {n:014d}\n" for n in range(MANY)))


def test_lines_that_fail_to_be_made_never_reach_the_tool_as_a_whole(tmp_path: Path) -> None:
    marker = tmp_path / "took-it-as-whole"
    target = _target("import sys, pathlib; sys.stdin.read(); pathlib.Path(sys.argv[1]).write_text('yes')", marker)

    def lines():  # noqa: ANN202
        yield from (f"line {n:014d}\n" for n in range(MANY))
        raise ValueError("the snapshot is malformed at line 100001")

    with pytest.raises(ValueError, match="malformed"):
        run_tool_fed(target, "tool", lines())
    assert not marker.exists()


def test_a_tool_that_outlives_its_timeout_is_stopped_and_named() -> None:
    target = _target("import time; time.sleep(60)")
    with pytest.raises(ToolFailed, match="stopped after 1 s"):
        run_tool_fed(target, "tool", (f"line {n:014d}\n" for n in range(MANY)), timeout=1)
