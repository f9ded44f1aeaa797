"""harness.snapshots, format memory-snapshot/2: written and read back line by line (plain or gzip), and one line
naming the file, the line number and the field for each way a line can be wrong."""

from __future__ import annotations

import gzip
import json
import random
import subprocess
import sys
from pathlib import Path

import pytest
from faker import Faker

from harness.app.target import load_target
from harness.snapshots import (
    FORMAT2,
    GoldenProbe,
    Header,
    HistoricalMemory,
    MalformedSnapshot,
    read_history,
    write_snapshot,
)
from harness.snapshots.generate import (
    _owner_ids,
    _owner_sizes,
    _Pools,
    generate_history,
    memory_ids,
    stream_history,
)
from harness.vocabulary.recall import Hit

ROOT = Path(__file__).resolve().parent.parent

VECTOR = bytes(range(16))  # four float32 values


def _records() -> tuple[Header, list[HistoricalMemory], list[GoldenProbe]]:
    memories = [
        HistoricalMemory("m1", "ana", "My cat is called \"Miso\" 🐈.", "2024-01-02T03:04:05+00:00",
                         conversation="c1", embedder="e1", embedding=VECTOR),
        HistoricalMemory("m2", "ana", "Where is it?", "2024-01-03T03:04:05Z", embedder="e1", embeddable=False),
        HistoricalMemory("m3", "ana1", "Line one\nline two <b>東京</b>", "2024-01-04T03:04:05+02:00",
                         expires_at="2034-01-04T03:04:05+02:00"),
    ]
    probes = [GoldenProbe("ana", "What is my cat called?", 1, {"e1": [Hit("m1", 0.79)]}, ["m1"],
                          {"e1": [Hit("m2", 0.79)]})]
    return Header("two owners", ["e1"], "e1", 0.25, 2, 3, 1, 2), memories, probes


def _write(path: Path) -> Path:
    write_snapshot(path, *_records())
    return path


def _lines(tmp_path: Path) -> list[dict]:
    return [json.loads(line) for line in _write(tmp_path / "ok.jsonl").read_text(encoding="utf-8").splitlines()]


def _refusal(tmp_path: Path, lines: list[dict | str]) -> str:
    path = tmp_path / "bad.jsonl"
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines), encoding="utf-8")
    with pytest.raises(MalformedSnapshot) as info:
        list(read_history(path))
    message = str(info.value)
    assert "\n" not in message, f"not one line: {message!r}"
    return message


@pytest.mark.parametrize("name", ["h.jsonl", "h.jsonl.gz"])
def test_written_records_read_back_the_same(tmp_path: Path, name: str) -> None:
    path = _write(tmp_path / name)
    if name.endswith(".gz"):
        assert path.read_bytes()[:2] == b"\x1f\x8b"
    header, memories, probes = _records()
    assert list(read_history(path)) == [header, *memories, *probes]


def test_gzip_is_told_by_its_magic_bytes_not_its_name(tmp_path: Path) -> None:
    plain = _write(tmp_path / "h.jsonl")
    renamed = tmp_path / "history.data"
    renamed.write_bytes(gzip.compress(plain.read_bytes()))
    assert len(list(read_history(renamed))) == 5


def test_a_line_that_is_not_json_is_refused_by_number(tmp_path: Path) -> None:
    lines = _lines(tmp_path)
    message = _refusal(tmp_path, [lines[0], lines[1], '{"type": "memory", "id": ', *lines[3:]])
    assert message.startswith("bad.jsonl:3: not valid JSON")


@pytest.mark.parametrize("value", ["1:56 pm on 8 May, 2023", "2024-05-08T13:56:00", ""])
def test_a_timestamp_that_is_not_iso_with_a_zone_is_refused_by_line_and_field(tmp_path: Path, value: str) -> None:
    lines = _lines(tmp_path)
    lines[2]["created_at"] = value
    message = _refusal(tmp_path, lines)
    assert message.startswith("bad.jsonl:3: created_at: ")


@pytest.mark.parametrize(("line", "change", "field"), [
    (0, {"format": "memory-snapshot/1"}, "format"),
    (0, {"embedders": []}, "embedders"),
    (1, {"id": ""}, "id"),
    (1, {"embedding_f32": "not base64!"}, "embedding_f32"),
    (1, {"embedder": None}, "embedder"),
    (2, {"type": "thought"}, "type"),
    (2, {"embeddable": "no"}, "embeddable"),
    (4, {"owner": "zoe"}, "owner"),
    (4, {"expected": {"e1": [{"id": "m3", "score": 0.5}]}}, "expected.e1[0].id"),
    (4, {"expected": {"e1": [{"id": "m1", "score": "high"}]}}, "expected.e1[0].score"),
    (4, {"k": 0, "expected": {"e1": [{"id": "m1", "score": 0.5}]}}, "expected.e1"),
])
def test_each_broken_field_is_named(tmp_path: Path, line: int, change: dict, field: str) -> None:
    lines = _lines(tmp_path)
    lines[line].update(change)
    message = _refusal(tmp_path, lines)
    assert message.startswith(f"bad.jsonl:{line + 1}: {field}: "), message
    assert FORMAT2 in message


def test_a_duplicate_id_is_refused(tmp_path: Path) -> None:
    lines = _lines(tmp_path)
    lines[2]["id"] = "m1"
    assert _refusal(tmp_path, lines).startswith("bad.jsonl:3: id: duplicate id 'm1'")


def test_memories_must_come_before_probes(tmp_path: Path) -> None:
    lines = _lines(tmp_path)
    message = _refusal(tmp_path, [lines[0], lines[1], lines[2], lines[4], lines[3]])
    assert message.startswith("bad.jsonl:5: type: memory lines must all come before the probe lines")


def test_a_truncated_file_is_refused_at_its_end(tmp_path: Path) -> None:
    lines = _lines(tmp_path)
    message = _refusal(tmp_path, lines[:-1])
    assert message.startswith("bad.jsonl:4: end of file: the header counts memories, probes, owners (3, 1, 2)")


def test_a_missing_snapshot_names_the_known_ones() -> None:
    with pytest.raises(MalformedSnapshot, match="household"):
        list(read_history("no-such-snapshot"))


def test_format_1_reads_as_the_same_records() -> None:
    records = list(read_history("household"))
    header = records[0]
    assert isinstance(header, Header) and header.memories == 120 and header.probes == 35
    assert sum(isinstance(r, HistoricalMemory) for r in records) == 120


def test_a_snapshot_whose_probes_mostly_expect_nothing_is_refused(tmp_path: Path) -> None:
    header, memories, probes = _records()
    empty = [GoldenProbe("ana", f"Which moon {n}?", 1, {"e1": []}) for n in range(2)]
    path = tmp_path / "empty.jsonl"
    write_snapshot(path, Header("mostly empty", ["e1"], "e1", 0.25, 2, 3, 3, 2), memories, probes + empty)
    with pytest.raises(MalformedSnapshot, match=r"^empty.jsonl: 2 of its 3 probes expect no memory at all"):
        list(read_history(path))


@pytest.mark.parametrize(("target", "threshold", "k"), [("memchat", 0.25, 5), ("open-webui", -1.0, 8)])
def test_a_generated_history_asks_a_question_with_nothing_to_embed_only_of_an_app_with_a_threshold(
        target: str, threshold: float, k: int) -> None:
    """With a threshold, a question with no vector expects nothing; without one the app answers its k nearest in an
    order no model defines, so no such question is asked (300 memories: two of them drawn)."""
    history = generate_history(load_target(target), nominal=300, seed=20261130, embedders=["hash-ngram-v1"],
                               threshold=threshold, k=k)
    expecting_nothing = [p for p in history.probes if not p.expected["hash-ngram-v1"]]
    assert history.header.probes == len(history.probes)
    if threshold > -1.0:
        assert len(history.probes) == 40 and expecting_nothing
    else:
        assert len(history.probes) == 38 and not expecting_nothing



def test_owner_ids_go_on_past_what_the_names_give() -> None:
    """About 39,000 ids come from the names; a million memories need about 41,000 owners (the loop never ended), and
    the ids of the smaller histories are the ones they always were."""
    fake = Faker("en_US")
    fake.seed_instance(20261130)
    pools = _Pools(fake)
    ids = _owner_ids(random.Random(1), pools, 45_000)
    assert len(set(ids)) == 45_000
    rng = random.Random(1003)
    assert _owner_ids(rng, pools, len(_owner_sizes(rng, 1003)))[:4] == ["kristie43", "katherine64", "katelyn", "emily"]


def test_memory_ids_keep_six_digits_up_to_a_million_and_sort_as_their_numbers_past_it() -> None:
    assert memory_ids(100_003)[-1] == "h100002" and memory_ids(3) == ["h000000", "h000001", "h000002"]
    million = memory_ids(1_000_003)
    assert million[0] == "h0000000" and million[-1] == "h1000002"
    assert million == sorted(million) and len(set(million)) == 1_000_003


@pytest.mark.parametrize("memories", ["99", "1000001"])
def test_make_snapshot_says_in_one_line_which_sizes_it_makes(memories: str, tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "tools/make_snapshot.py", "--memories", memories, "--out",
                           str(tmp_path / "h.jsonl")], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode != 0
    assert proc.stderr.strip() == f"make_snapshot: --memories must be from 100 to 1000000, not {memories}"


def test_a_streamed_history_is_the_listed_one_whatever_its_chunk(tmp_path: Path) -> None:
    """The generator embeds and yields the memories a chunk at a time (a million never sit in memory at once): the
    same seed still gives the same history, byte for byte, and the file written from the stream reads back."""
    kwargs = {"nominal": 1000, "seed": 20261130, "embedders": ["hash-ngram-v1", "hash-ngram-v2"],
              "threshold": 0.25, "k": 5}
    listed = generate_history(load_target(None), **kwargs)
    streamed = stream_history(load_target(None), chunk=97, **kwargs)
    assert not isinstance(streamed.memories, list)
    write_snapshot(tmp_path / "listed.jsonl", listed.header, listed.memories, listed.probes)
    write_snapshot(tmp_path / "streamed.jsonl", streamed.header, streamed.memories, streamed.probes)
    assert (tmp_path / "listed.jsonl").read_bytes() == (tmp_path / "streamed.jsonl").read_bytes()
    assert sum(1 for _ in read_history(tmp_path / "streamed.jsonl")) > 0
