"""harness.snapshots.load_snapshot: the shipped golden snapshot, and one clear line for each way a file can be wrong."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from harness.snapshots import FORMAT, SNAPSHOT_DIR, MalformedSnapshot, Snapshot, load_snapshot
from harness.vocabulary.recall import Hit

VALID = {
    "format": FORMAT,
    "description": "two owners, three memories",
    "legacy_embedder": "hash-ngram-v1",
    "threshold": 0.25,
    "k": 5,
    "owners": ["ana", "ben"],
    "memories": [
        {"id": "m001", "owner": "ana", "text": "Ana's cat is called Miso.", "created_at": "2024-01-02T03:04:05Z"},
        {"id": "m002", "owner": "ana", "text": "Ana works in Lyon.", "created_at": "2024-01-03T03:04:05Z"},
        {"id": "m003", "owner": "ben", "text": "Ben plays the cello.", "created_at": "2024-01-04T03:04:05Z"},
    ],
    "probes": [
        {"owner": "ana", "query": "What is my cat called?",
         "expected": {"hash-ngram-v1": [{"id": "m001", "score": 0.7944}, {"id": "m002", "score": 0.31}],
                      "hash-ngram-v2": [{"id": "m001", "score": 0.8}]}},
    ],
}


def _write(tmp_path: Path, data: object, name: str = "snap.json") -> Path:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data, indent=2), encoding="utf-8")
    return path


def _broken(tmp_path: Path, change: Callable[[dict], None]) -> Path:
    data = copy.deepcopy(VALID)
    change(data)
    return _write(tmp_path, data)


def _refusal(path: Path) -> str:
    with pytest.raises(MalformedSnapshot) as info:
        load_snapshot(path)
    message = str(info.value)
    assert "\n" not in message, f"not one line: {message!r}"
    return message


# ------------------------------------------------------------------------------------------ valid files


def test_shipped_household_snapshot_loads() -> None:
    snap = load_snapshot("household")
    assert isinstance(snap, Snapshot)
    assert snap.name == "household"
    assert snap.path == SNAPSHOT_DIR / "household.json"
    assert snap.legacy_embedder == "hash-ngram-v1"
    assert (snap.threshold, snap.k) == (0.25, 5)
    assert snap.owners and snap.memories and snap.probes
    ids = [m.id for m in snap.memories]
    assert len(ids) == len(set(ids))
    assert {m.owner for m in snap.memories} <= set(snap.owners)


def test_household_expectations_are_rankings_within_the_recall_settings() -> None:
    snap = load_snapshot("household")
    owner_of = {m.id: m.owner for m in snap.memories}
    for probe in snap.probes:
        assert snap.legacy_embedder in probe.expected
        for embedder in probe.expected:
            hits = snap.expected_for(probe, embedder)
            assert len(hits) <= snap.k
            assert all(h.score >= snap.threshold for h in hits)
            assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
            assert {owner_of[h.id] for h in hits} <= {probe.owner}, "a probe may only recall its owner's memories"


def test_a_path_with_suffix_is_read_as_is(tmp_path: Path) -> None:
    snap = load_snapshot(_write(tmp_path, VALID, "mine.json"))
    assert snap.name == "mine"
    assert [m.id for m in snap.memories] == ["m001", "m002", "m003"]
    probe = snap.probes[0]
    assert snap.expected_for(probe, "hash-ngram-v1") == [Hit("m001", 0.7944), Hit("m002", 0.31)]
    assert snap.expected_for(probe, "hash-ngram-v2") == [Hit("m001", 0.8)]


def test_threshold_and_k_default_when_absent(tmp_path: Path) -> None:
    snap = load_snapshot(_broken(tmp_path, lambda d: (d.pop("threshold"), d.pop("k"))))
    assert (snap.threshold, snap.k) == (0.25, 5)


def test_expected_for_an_unknown_embedder_says_how_to_regenerate(tmp_path: Path) -> None:
    snap = load_snapshot(_write(tmp_path, VALID))
    with pytest.raises(MalformedSnapshot) as info:
        snap.expected_for(snap.probes[0], "no-such-embedder")
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith("snap.json: ")
    assert "'no-such-embedder'" in message
    assert "tools/make_snapshot.py --name snap" in message


# ------------------------------------------------------------------------------------------ refusals


def test_bad_json_names_the_line(tmp_path: Path) -> None:
    path = _write(tmp_path, '{\n  "format": "memory-snapshot/1",\n  "owners": [\'ana\']\n}\n')
    message = _refusal(path)
    assert message.startswith("snap.json: line 3: not valid JSON")


def test_wrong_format_string(tmp_path: Path) -> None:
    message = _refusal(_broken(tmp_path, lambda d: d.update(format="memory-snapshot/2")))
    assert message.startswith("snap.json: top level: ")
    assert f'"format" must be "{FORMAT}"' in message


def test_top_level_not_an_object(tmp_path: Path) -> None:
    message = _refusal(_write(tmp_path, [VALID]))
    assert message.startswith("snap.json: top level: ")


def test_empty_owners(tmp_path: Path) -> None:
    message = _refusal(_broken(tmp_path, lambda d: d.update(owners=[])))
    assert message.startswith("snap.json: owners: ")


def test_owner_not_in_owners(tmp_path: Path) -> None:
    message = _refusal(_broken(tmp_path, lambda d: d["memories"][1].update(owner="zoe")))
    assert message.startswith("snap.json: memories[1]: owner 'zoe' is not in owners")


def test_duplicate_id(tmp_path: Path) -> None:
    message = _refusal(_broken(tmp_path, lambda d: d["memories"][2].update(id="m001", owner="ana")))
    assert message.startswith("snap.json: memories[2]: duplicate id 'm001'")


def test_missing_text(tmp_path: Path) -> None:
    message = _refusal(_broken(tmp_path, lambda d: d["memories"][0].pop("text")))
    assert message.startswith("snap.json: memories[0]: ")
    assert '"text"' in message


def test_empty_text(tmp_path: Path) -> None:
    message = _refusal(_broken(tmp_path, lambda d: d["memories"][2].update(text="")))
    assert message.startswith("snap.json: memories[2]: ")


def test_no_memories(tmp_path: Path) -> None:
    message = _refusal(_broken(tmp_path, lambda d: d.update(memories=[])))
    assert message.startswith("snap.json: memories: must not be empty")


def test_probe_owner_not_in_owners(tmp_path: Path) -> None:
    message = _refusal(_broken(tmp_path, lambda d: d["probes"][0].update(owner="zoe")))
    assert message.startswith("snap.json: probes[0]: ")


def test_probe_without_expectations(tmp_path: Path) -> None:
    message = _refusal(_broken(tmp_path, lambda d: d["probes"][0].update(expected={})))
    assert message.startswith("snap.json: probes[0]: ")
    assert '"expected"' in message


def test_expected_hit_with_unknown_id(tmp_path: Path) -> None:
    def change(d: dict) -> None:
        d["probes"][0]["expected"]["hash-ngram-v2"].append({"id": "m999", "score": 0.5})

    message = _refusal(_broken(tmp_path, change))
    assert message.startswith("snap.json: probes[0].expected.hash-ngram-v2: ")
    assert 'known "id"' in message


def test_non_numeric_score(tmp_path: Path) -> None:
    message = _refusal(_broken(tmp_path, lambda d: d["probes"][0]["expected"]["hash-ngram-v1"][1].update(
        score="0.31")))
    assert message.startswith("snap.json: probes[0].expected.hash-ngram-v1: ")
    assert 'numeric "score"' in message


def test_missing_file_by_path_lists_the_available_snapshots(tmp_path: Path) -> None:
    message = _refusal(tmp_path / "nope.json")
    assert str(tmp_path / "nope.json") in message
    assert "not found" in message
    assert "household" in message


def test_missing_file_by_name_lists_the_available_snapshots() -> None:
    message = _refusal(Path("no-such-snapshot"))
    assert "no-such-snapshot.json not found" in message
    assert "household" in message


# ------------------------------------------------------------------------------ malformed input seen in review


def test_hit_with_unhashable_id(tmp_path: Path) -> None:
    _refusal(_broken(tmp_path, lambda d: d["probes"][0]["expected"].update({"hash-ngram-v1": [
        {"id": ["m001"], "score": 0.5}]})))


def test_non_numeric_threshold(tmp_path: Path) -> None:
    _refusal(_broken(tmp_path, lambda d: d.update(threshold="high")))
