"""Golden memory snapshots: historical memories with the recall they must keep giving.

Two formats, both documented in snapshots/README.md: `memory-snapshot/1`, one JSON document for the small golden
snapshots under version control, and `memory-snapshot/2`, JSON Lines (optionally gzip) streamed line by line, for
histories of any size, generated or captured from a running app. `read_history` reads either as the same records.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from harness.snapshots.format1 import FORMAT, SNAPSHOT_DIR, Memory, Probe, Snapshot, load_snapshot
from harness.snapshots.format2 import (
    FORMAT2,
    GoldenProbe,
    Header,
    HistoricalMemory,
    Record,
    SnapshotWriter,
    is_format2,
    read_snapshot,
    write_snapshot,
)
from harness.snapshots.rules import MalformedSnapshot

__all__ = ["FORMAT", "FORMAT2", "SNAPSHOT_DIR", "GoldenProbe", "Header", "HistoricalMemory", "MalformedSnapshot",
           "Memory", "Probe", "Record", "Snapshot", "SnapshotWriter", "load_snapshot", "read_history",
           "snapshot_path", "write_snapshot"]


def snapshot_path(name_or_path: str | Path) -> Path:
    """A path as given, or a name of snapshots/ (household -> snapshots/household.json)."""
    path = Path(name_or_path)
    if path.suffix or path.parent != Path("."):
        found = path
    else:
        found = next((SNAPSHOT_DIR / f"{path}{ext}" for ext in (".json", ".jsonl", ".jsonl.gz")
                      if (SNAPSHOT_DIR / f"{path}{ext}").is_file()), SNAPSHOT_DIR / f"{path}.json")
    if not found.is_file():
        known = sorted({p.name.split(".")[0] for p in SNAPSHOT_DIR.glob("*.json*")})
        raise MalformedSnapshot(f"snapshot {found} not found; the ones in {SNAPSHOT_DIR}: {', '.join(known)}")
    return found


def read_history(name_or_path: str | Path) -> Iterator[Record]:
    """Any format as format-2 records: the header, every memory, every probe (format 1 is small: loaded whole)."""
    path = snapshot_path(name_or_path)
    if is_format2(path):
        yield from read_snapshot(path)
        return
    old = load_snapshot(path)
    embedders = sorted({e for p in old.probes for e in p.expected}) or [old.legacy_embedder]
    yield Header(old.description, embedders, old.legacy_embedder or embedders[0], old.threshold, old.k,
                 len(old.memories), len(old.probes), len({m.owner for m in old.memories}))
    for m in old.memories:
        yield HistoricalMemory(m.id, m.owner, m.text, m.created_at)
    for p in old.probes:
        yield GoldenProbe(p.owner, p.query, old.k, p.expected)
