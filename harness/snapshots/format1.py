"""Format `memory-snapshot/1`: one JSON document, loaded whole; for the small golden snapshots under version control
(documented in snapshots/README.md):
{
  "format": "memory-snapshot/1",
  "description": "...",
  "legacy_embedder": "hash-ngram-v1",              # the model the legacy store wrote with
  "threshold": 0.25, "k": 5,                       # the recall settings the expectations were computed for
  "owners": ["ana", ...],                          # symbolic: each replay maps them to fresh users
  "memories": [{"id": "m001", "owner": "ana", "text": "...", "created_at": "ISO-8601"}],
  "probes": [{"owner": "ana", "query": "...",
              "expected": {"<embedder>": [{"id": "m001", "score": 0.7944}]}}]
}
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from harness.snapshots.rules import MalformedSnapshot, iso_with_zone
from harness.vocabulary.recall import Hit

FORMAT = "memory-snapshot/1"
SNAPSHOT_DIR = Path(__file__).resolve().parents[2] / "snapshots"


@dataclass(frozen=True)
class Memory:
    id: str
    owner: str
    text: str
    created_at: str


@dataclass(frozen=True)
class Probe:
    owner: str
    query: str
    expected: dict[str, list[Hit]]


@dataclass(frozen=True)
class Snapshot:
    name: str
    path: Path
    description: str
    legacy_embedder: str
    threshold: float
    k: int
    owners: list[str]
    memories: list[Memory]
    probes: list[Probe]

    def expected_for(self, probe: Probe, embedder: str) -> list[Hit]:
        if embedder not in probe.expected:
            raise MalformedSnapshot(f"{self.path.name}: no expectations for embedder {embedder!r}; regenerate it with"
                                    f" `python tools/make_snapshot.py --name {self.name}`")
        return probe.expected[embedder]


def _require(cond: bool, path: Path, where: str, what: str) -> None:
    if not cond:
        raise MalformedSnapshot(f"{path.name}: {where}: {what} (format {FORMAT}, see snapshots/README.md)")


def load_snapshot(name_or_path: str | Path) -> Snapshot:
    path = Path(name_or_path)
    if not path.suffix:
        path = SNAPSHOT_DIR / f"{path}.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise MalformedSnapshot(f"snapshot {path} not found; the ones here: "
                                f"{', '.join(p.stem for p in SNAPSHOT_DIR.glob('*.json'))}") from None
    except json.JSONDecodeError as e:
        raise MalformedSnapshot(f"{path.name}: line {e.lineno}: not valid JSON ({e.msg})") from None
    _require(isinstance(data, dict) and data.get("format") == FORMAT, path, "top level",
             f'"format" must be "{FORMAT}"')
    owners = data.get("owners")
    _require(isinstance(owners, list) and bool(owners) and all(isinstance(o, str) for o in owners), path, "owners",
             "must be a non-empty list of names")
    memories, seen = [], set()
    for i, m in enumerate(data.get("memories") or []):
        where = f"memories[{i}]"
        _require(isinstance(m, dict) and all(isinstance(m.get(f), str) and m.get(f) for f in
                                             ("id", "owner", "text", "created_at")), path, where,
                 'needs non-empty strings "id", "owner", "text", "created_at"')
        _require(m["owner"] in owners, path, where, f"owner {m['owner']!r} is not in owners")
        problem = iso_with_zone(m["created_at"])
        _require(problem is None, path, f"{where}.created_at", str(problem))
        _require(m["id"] not in seen, path, where, f"duplicate id {m['id']!r}")
        seen.add(m["id"])
        memories.append(Memory(m["id"], m["owner"], m["text"], m["created_at"]))
    _require(bool(memories), path, "memories", "must not be empty")
    probes = []
    for i, p in enumerate(data.get("probes") or []):
        where = f"probes[{i}]"
        _require(isinstance(p, dict) and p.get("owner") in owners and isinstance(p.get("query"), str), path, where,
                 'needs an "owner" from owners and a "query" string')
        expected = p.get("expected")
        _require(isinstance(expected, dict) and bool(expected), path, where, '"expected" must map embedder -> hits')
        hits: dict[str, list[Hit]] = {}
        for embedder, rows in expected.items():
            _require(isinstance(rows, list) and all(isinstance(r, dict) and isinstance(r.get("id"), str) and
                                                    r["id"] in seen and isinstance(r.get("score"), (int, float))
                                                    and not isinstance(r.get("score"), bool) for r in rows),
                     path, f"{where}.expected.{embedder}", 'each hit needs a known "id" and a numeric "score"')
            hits[embedder] = [Hit(r["id"], float(r["score"])) for r in rows]
        probes.append(Probe(p["owner"], p["query"], hits))
    threshold, k = data.get("threshold", 0.25), data.get("k", 5)
    _require(isinstance(threshold, (int, float)) and not isinstance(threshold, bool), path, "threshold",
             "must be a number")
    _require(isinstance(k, int) and not isinstance(k, bool) and k > 0, path, "k", "must be a whole number above 0")
    return Snapshot(path.stem, path, str(data.get("description", "")), str(data.get("legacy_embedder", "")),
                    float(threshold), k, owners, memories, probes)
