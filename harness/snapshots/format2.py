"""Format `memory-snapshot/2`: JSON Lines, optionally gzip (told by its magic bytes), streamed line by line, for
histories of any size (documented in snapshots/README.md):

    {"format": "memory-snapshot/2", "description": ..., "embedders": [...], "legacy_embedder": ...,
     "recall": {"threshold": 0.25, "k": 5}, "counts": {"memories": N, "probes": N, "owners": N},
     "legacy_timezone": "Europe/Berlin"}
    {"type": "memory", "id": ..., "owner": ..., "conversation": ... | null, "text": ..., "created_at": ISO-8601,
     "expires_at": ISO-8601 | null, "embedder": ..., "embedding_f32": base64 | null, "embeddable": false,
     "legacy_created_at": ISO-8601, with or without a zone}
    ...
    {"type": "probe", "owner": ..., "query": ..., "k": 5, "expected": {"<embedder>": [{"id": ..., "score": ...}]},
     "tied_beyond_k": {"<embedder>": [{"id": ..., "score": ...}]}, "evidence": [ids]}

Memory lines come before probe lines. The embedding is optional (the little-endian float32 bytes in base64, with the
embedder that made it); `"embeddable": false` marks a memory the target cannot embed (no content words), which is
checked for its owner and text only. `tied_beyond_k` lists the memories beyond the k-th that score the same as the
k-th: a store may return any of them in its place. `legacy_created_at` (optional) is the creation time as the legacy
store holds it, where it is written otherwise than `created_at` (the UTC time it means, which the replay compares):
with "Z" or an offset, or naive local in the zone of the header's optional `"legacy_timezone"` (the daylight-saving
rule: harness/snapshots/legacy_times.py). A line that breaks a rule is refused with the file, its line number and
field.
"""

from __future__ import annotations

import base64
import binascii
import gzip
import io
import json
import math
from collections.abc import Iterable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from harness.snapshots.rules import MalformedSnapshot, iso_time, iso_with_zone, json_objects, known_zone
from harness.vocabulary.recall import Hit

FORMAT2 = "memory-snapshot/2"
GZIP_MAGIC = b"\x1f\x8b"


@dataclass(frozen=True)
class Header:
    description: str
    embedders: list[str]  # the embedders each probe has expectations for
    legacy_embedder: str  # the embedder of the vectors in the source store
    threshold: float
    k: int
    memories: int
    probes: int
    owners: int
    legacy_timezone: str | None = None  # the zone of the legacy store's naive local times, when it has any

    def as_json(self) -> dict:
        return {"format": FORMAT2, "description": self.description, "embedders": self.embedders,
                "legacy_embedder": self.legacy_embedder, "recall": {"threshold": self.threshold, "k": self.k},
                "counts": {"memories": self.memories, "probes": self.probes, "owners": self.owners},
                **({"legacy_timezone": self.legacy_timezone} if self.legacy_timezone else {})}


@dataclass(frozen=True)
class HistoricalMemory:
    id: str
    owner: str
    text: str
    created_at: str
    expires_at: str | None = None
    conversation: str | None = None
    embedder: str | None = None  # which model made `embedding`
    embedding: bytes | None = None  # little-endian float32
    embeddable: bool = True
    # created_at as the legacy store wrote it, when otherwise: "Z", an offset, or naive in the header's legacy_timezone
    legacy_created_at: str | None = None

    def as_json(self) -> dict[str, object]:
        line: dict[str, object] = {"type": "memory", "id": self.id, "owner": self.owner,
                                   "conversation": self.conversation, "text": self.text,
                                   "created_at": self.created_at, "expires_at": self.expires_at}
        if self.legacy_created_at is not None:
            line["legacy_created_at"] = self.legacy_created_at
        if self.embedder is not None:
            line["embedder"] = self.embedder
            line["embedding_f32"] = base64.b64encode(self.embedding).decode() if self.embedding else None
        if not self.embeddable:
            line["embeddable"] = False
        return line


@dataclass(frozen=True)
class GoldenProbe:
    owner: str
    query: str
    k: int
    expected: dict[str, list[Hit]]  # per embedder: ids in order, with scores
    evidence: list[str] = field(default_factory=list)  # the memories the question is about, when known
    tied_beyond_k: dict[str, list[Hit]] = field(default_factory=dict)  # per embedder: as good as the k-th hit

    def as_json(self) -> dict:
        def hits(by_embedder: dict[str, list[Hit]]) -> dict:
            return {e: [{"id": h.id, "score": round(h.score, 6)} for h in rows] for e, rows in by_embedder.items()}
        ties = {e: rows for e, rows in self.tied_beyond_k.items() if rows}
        return {"type": "probe", "owner": self.owner, "query": self.query, "k": self.k,
                "expected": hits(self.expected), **({"tied_beyond_k": hits(ties)} if ties else {}),
                **({"evidence": self.evidence} if self.evidence else {})}


Record = Header | HistoricalMemory | GoldenProbe


def is_format2(path: Path) -> bool:
    """Told by gzip's magic bytes or a first line that is a whole JSON object (format 1 is one indented document),
    without reading the rest; the header's own "format" is checked by the reader."""
    with path.open("rb") as raw:
        start = raw.read(2)
        if start == GZIP_MAGIC:
            return True
        raw.seek(0)
        first = raw.readline(1 << 16)
    try:
        data = json.loads(first)
    except ValueError:
        return False
    return isinstance(data, dict)


def _open_text(path: Path) -> IO[str]:
    with path.open("rb") as raw:
        magic = raw.read(2)
    if magic == GZIP_MAGIC:
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8")
    return path.open(encoding="utf-8")


class _Line:
    """One line being validated: every refusal names the file, the line number and the field."""

    def __init__(self, path: Path, number: int, data: dict, rule: str = f"format {FORMAT2}") -> None:
        self.path, self.number, self.data, self.rule = path, number, data, rule

    def refuse(self, where: str, what: str) -> MalformedSnapshot:
        return MalformedSnapshot(f"{self.path.name}:{self.number}: {where}: {what} ({self.rule}, "
                                 f"see snapshots/README.md)")

    def text(self, key: str) -> str:
        value = self.data.get(key)
        if not isinstance(value, str) or not value:
            raise self.refuse(key, "must be a non-empty string")
        return value

    def optional_text(self, key: str) -> str | None:
        if self.data.get(key) is None:
            return None
        value = self.data[key]
        if not isinstance(value, str) or not value:
            raise self.refuse(key, "must be a non-empty string or null")
        return value

    def timestamp(self, key: str) -> str:
        value = self.data.get(key)
        problem = iso_with_zone(value)
        if problem is not None:
            raise self.refuse(key, problem)
        return str(value)

    def optional_timestamp(self, key: str) -> str | None:
        return None if self.data.get(key) is None else self.timestamp(key)

    def whole(self, key: str, default: int | None = None) -> int:
        value = self.data.get(key, default)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise self.refuse(key, "must be a whole number, 0 or more")
        return value

    def number_(self, key: str, value: object) -> float:
        if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
            raise self.refuse(key, "must be a finite number")
        return float(value)


def _header(line: _Line) -> Header:
    if line.data.get("format") != FORMAT2:
        raise line.refuse("format", f'the first line must be the header, with "format": "{FORMAT2}"')
    embedders = line.data.get("embedders")
    if not (isinstance(embedders, list) and embedders and all(isinstance(e, str) and e for e in embedders)):
        raise line.refuse("embedders", "must be a non-empty list of embedder names")
    recall, counts = line.data.get("recall"), line.data.get("counts")
    if not isinstance(recall, dict):
        raise line.refuse("recall", 'must be {"threshold": number, "k": whole number}')
    if not isinstance(counts, dict):
        raise line.refuse("counts", 'must be {"memories": N, "probes": N, "owners": N}')
    k = _Line(line.path, line.number, recall).whole("k")
    if k < 1:
        raise line.refuse("recall.k", "must be 1 or more")
    whole = _Line(line.path, line.number, counts).whole
    zone = line.optional_text("legacy_timezone")
    if zone is not None and not known_zone(zone):
        raise line.refuse("legacy_timezone", f"{zone!r} is not a time zone name (IANA, e.g. Europe/Berlin)")
    return Header(str(line.data.get("description", "")), list(embedders),
                  line.optional_text("legacy_embedder") or embedders[0],
                  line.number_("recall.threshold", recall.get("threshold")), k,
                  whole("memories"), whole("probes"), whole("owners"), zone)


def memory_line(path: Path, number: int, data: dict, rule: str) -> HistoricalMemory:
    """One memory as a format-2 memory line holds it (without "type"), refused by file, line and field; `rule`
    names the format in the refusal."""
    return _memory(_Line(path, number, data, rule))


def _memory(line: _Line) -> HistoricalMemory:
    embedder = line.optional_text("embedder")
    raw = line.data.get("embedding_f32")
    embedding = None
    if raw is not None:
        if embedder is None:
            raise line.refuse("embedder", "a memory with an embedding must name the embedder that made it")
        try:
            embedding = base64.b64decode(raw, validate=True) if isinstance(raw, str) else None
        except (binascii.Error, ValueError):
            embedding = None
        if not embedding or len(embedding) % 4:
            raise line.refuse("embedding_f32", "must be base64 of little-endian float32 values, or null")
    embeddable = line.data.get("embeddable", True)
    if not isinstance(embeddable, bool):
        raise line.refuse("embeddable", "must be true or false")
    text = line.data.get("text")
    if not isinstance(text, str) or not text:
        raise line.refuse("text", "must be a non-empty string")
    legacy = line.data.get("legacy_created_at")
    if legacy is not None and iso_time(legacy) is None:
        raise line.refuse("legacy_created_at", f"{legacy!r} is not an ISO-8601 time, with or without a zone "
                                               "(e.g. 2024-03-31T02:30:00), or null")
    return HistoricalMemory(line.text("id"), line.text("owner"), text, line.timestamp("created_at"),
                            line.optional_timestamp("expires_at"), line.optional_text("conversation"),
                            embedder, embedding, embeddable, legacy)


def _probe(line: _Line, owner_of: dict[str, str], owners: set[str]) -> GoldenProbe:
    owner, query = line.text("owner"), line.data.get("query")
    if owner not in owners:
        raise line.refuse("owner", f"{owner!r} owns no memory in this snapshot")
    if not isinstance(query, str) or not query:
        raise line.refuse("query", "must be a non-empty string")
    k = line.whole("k")
    expected = line.data.get("expected")
    if not isinstance(expected, dict) or not expected:
        raise line.refuse("expected", "must map each embedder to its hits in order")
    ties = line.data.get("tied_beyond_k", {})
    if not isinstance(ties, dict):
        raise line.refuse("tied_beyond_k", "must map embedders to hits")
    hits = {e: _hits(line, f"expected.{e}", rows, owner, owner_of, k) for e, rows in expected.items()}
    tied = {e: _hits(line, f"tied_beyond_k.{e}", rows, owner, owner_of, None) for e, rows in ties.items()}
    evidence = line.data.get("evidence", [])
    if not isinstance(evidence, list) or any(owner_of.get(e) != owner for e in evidence):
        raise line.refuse("evidence", f"must list memories of {owner!r}")
    return GoldenProbe(owner, query, k, hits, list(evidence), tied)


def _hits(line: _Line, where: str, rows: object, owner: str, owner_of: dict[str, str], k: int | None) -> list[Hit]:
    if not isinstance(rows, list) or (k is not None and len(rows) > k):
        raise line.refuse(where, "must be a list of hits" + (f", at most k={k}" if k is not None else ""))
    out = []
    for rank, row in enumerate(rows):
        mid = row.get("id") if isinstance(row, dict) else None
        if not isinstance(mid, str) or owner_of.get(mid) != owner:
            raise line.refuse(f"{where}[{rank}].id", f"{mid!r} is not a memory of {owner!r}")
        out.append(Hit(mid, line.number_(f"{where}[{rank}].score", row.get("score"))))
    return out


def _naive(legacy: str | None) -> bool:
    when = iso_time(legacy) if legacy is not None else None
    return when is not None and when.tzinfo is None


def probes_expecting_nothing(probes: Iterable[GoldenProbe]) -> int:
    """How many probes expect no memory under any embedder: each passes without testing recall."""
    return sum(1 for p in probes if not any(p.expected.values()))


def read_snapshot(path: Path) -> Iterator[Record]:
    """The header, then every memory, then every probe, each validated as it is read."""
    owner_of: dict[str, str] = {}
    owners: set[str] = set()
    header: Header | None = None
    probes = nothing = 0
    number = 0
    with _open_text(path) as lines:
        for number, data in json_objects(lines, path.name, f" (format {FORMAT2})"):
            line = _Line(path, number, data)
            if header is None:
                header = _header(line)
                yield header
                continue
            kind = data.get("type")
            if kind == "memory":
                if probes:
                    raise line.refuse("type", "memory lines must all come before the probe lines")
                memory = _memory(line)
                if header.legacy_timezone is None and _naive(memory.legacy_created_at):
                    raise line.refuse("legacy_created_at", f"{memory.legacy_created_at!r} has no zone and the header "
                                      "declares no legacy_timezone for the legacy store's local times: add one")
                if memory.id in owner_of:
                    raise line.refuse("id", f"duplicate id {memory.id!r}")
                owner_of[memory.id] = memory.owner
                owners.add(memory.owner)
                yield memory
            elif kind == "probe":
                probes += 1
                probe = _probe(line, owner_of, owners)
                nothing += probes_expecting_nothing([probe])
                yield probe
            else:
                raise line.refuse("type", 'must be "memory" or "probe"')
    if header is None:
        raise MalformedSnapshot(f"{path.name}: empty file; the first line must be the {FORMAT2} header")
    found = (len(owner_of), probes, len(owners))
    said = (header.memories, header.probes, header.owners)
    if found != said:
        raise MalformedSnapshot(f"{path.name}:{number}: end of file: the header counts memories, probes, owners "
                                f"{said} but the file holds {found}; the file is truncated or the header is wrong")
    if nothing * 2 > probes:
        raise MalformedSnapshot(f"{path.name}: {nothing} of its {probes} probes expect no memory at all (more than "
                                f"half): a replay of it would test little; give it probes that recall something")


class SnapshotWriter(AbstractContextManager):
    """Writes a format-2 snapshot line by line (gzip when the name ends in .gz); checks the header's counts."""

    def __init__(self, path: Path, header: Header) -> None:
        self.path, self.header = path, header
        self._memories = self._probes = 0
        self._owners: set[str] = set()
        raw = gzip.open(path, "wt", encoding="utf-8", compresslevel=1) if path.suffix == ".gz" else None
        self._out: IO[str] = raw if raw is not None else path.open("w", encoding="utf-8")
        self._line(header.as_json())

    def _line(self, data: dict) -> None:
        self._out.write(json.dumps(data, ensure_ascii=False) + "\n")

    def memory(self, memory: HistoricalMemory) -> None:
        self._memories += 1
        self._owners.add(memory.owner)
        self._line(memory.as_json())

    def probe(self, probe: GoldenProbe) -> None:
        self._probes += 1
        self._line(probe.as_json())

    def __exit__(self, *exc: object) -> None:
        self._out.close()
        written = (self._memories, self._probes, len(self._owners))
        said = (self.header.memories, self.header.probes, self.header.owners)
        if exc[0] is None and written != said:
            raise ValueError(f"{self.path}: the header says {said} memories, probes, owners; {written} were written")


def write_snapshot(path: Path, header: Header, memories: Iterable[HistoricalMemory],
                   probes: Iterable[GoldenProbe]) -> None:
    with SnapshotWriter(path, header) as writer:
        for memory in memories:
            writer.memory(memory)
        for probe in probes:
            writer.probe(probe)
