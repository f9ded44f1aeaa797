"""harness.app.app_tools: run_tool_fed, a tool fed its standard input as the lines are made, and stream_embed_f32,
vectors read in order while the embed tool makes them; with the failures that can happen on either side of the pipes."""

from __future__ import annotations

import struct
import sys
import threading
from dataclasses import replace
from pathlib import Path

import pytest

from harness.app import app_tools
from harness.app.app_tools import ToolFailed, embed_texts_f32, run_tool_fed, stream_embed_f32
from harness.app.target import load_target

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


# -- stream_embed_f32: vectors in order while lanes of the embed tool make them -------------------------------------
_ECHO_LENGTH = ("import sys, json, base64, struct\n"
                "for n, line in enumerate(sys.stdin, 1):\n"
                "    text = json.loads(line)['text']\n"
                "    {fail}\n"
                "    vec = base64.b64encode(struct.pack('<f', len(text))).decode() if text.strip() else None\n"
                "    print(json.dumps(dict(embedding_f32=vec)))\n"
                "{after}")


def _embedder(fail: str = "pass", after: str = "") -> object:
    """An embed_f32 tool whose vector of a text is its length (none for a blank text); the script has no braces,
    which a target's command would take for placeholders."""
    return replace(load_target(None), tools={"embed_f32": [sys.executable, "-c",
                                                           _ECHO_LENGTH.format(fail=fail, after=after)]})


def _lengths(vectors: list[bytes | None]) -> list[float | None]:
    return [struct.unpack("<f", v)[0] if v is not None else None for v in vectors]


def test_a_stream_gives_every_vector_in_order_across_blocks_lanes_and_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(app_tools, "STREAM_RUN", 21)  # three blocks of 7 per run: many runs per lane
    texts = [" " if n % 13 == 0 else "x" * (n % 50 + 1) for n in range(1000)]
    vectors = list(stream_embed_f32(_embedder(), texts, "any", block=7))
    assert _lengths(vectors) == [None if t == " " else float(len(t)) for t in texts]


def test_a_stream_is_the_app_embedders_own_vectors() -> None:
    texts = ["My order number is 4417.", ";)", "Where do I live?", "東京"] * 60
    target = load_target(None)
    assert list(stream_embed_f32(target, texts, "hash-ngram-v1", block=50)) == embed_texts_f32(
        target, texts, "hash-ngram-v1")


def test_a_stream_from_an_app_with_only_the_json_embed_tool_gives_that_tools_vectors_in_order() -> None:
    texts = [f"My locker number is {n}." if n % 9 else ";)" for n in range(400)]  # three chunks of 175
    target = load_target(None)
    json_only = replace(target, tools={"embed": target.tools["embed"]})
    assert list(stream_embed_f32(json_only, texts, "hash-ngram-v1", block=7)) == embed_texts_f32(
        json_only, texts, "hash-ngram-v1")


def test_a_stream_whose_tool_fails_fails_with_its_own_last_words() -> None:
    target = _embedder(fail="if n == 40: sys.exit('the embedder crashed on line 40')")
    with pytest.raises(ToolFailed, match="embed_f32 failed: the embedder crashed on line 40"):
        list(stream_embed_f32(target, ["text"] * 500, "any", block=10))


def test_a_stream_whose_tool_gives_more_vectors_than_texts_is_refused() -> None:
    target = _embedder(after="print(json.dumps(dict(embedding_f32=None)))")
    with pytest.raises(ToolFailed, match="gave more vectors than it was given texts"):
        list(stream_embed_f32(target, ["text"] * 30, "any", block=10))


def test_a_stream_whose_tool_outlives_its_timeout_is_stopped_and_named() -> None:
    target = _embedder(fail="import time; time.sleep(60)")
    with pytest.raises(ToolFailed, match="stopped after 1 s"):
        list(stream_embed_f32(target, ["text"] * 30, "any", block=10, timeout=1))


def test_a_stream_left_early_stops_its_tools() -> None:
    stream = stream_embed_f32(_embedder(), ["text"] * MANY, "any", block=100)
    assert next(stream) is not None
    closing = threading.Thread(target=stream.close)
    closing.start()
    closing.join(timeout=60)
    assert not closing.is_alive(), "the stream did not stop its tools when left"
