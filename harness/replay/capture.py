"""Capture a format-2 snapshot from a running app, so that a team freezes "before" from its own store.

Memories come from the app's export (through its driver); each probe's expected results are what the app's store
ranks now for the question (the driver's similarity query, as the app runs it), with the app's current embedding
model. Probes come from a file of questions per owner (JSON Lines `{"owner": ..., "query": ...}`, the owner being the
app's user id) or are sampled from the memories (a memory's first words, with that memory as evidence).

The export is checked against the store before anything is written: a snapshot is the "before" every later
comparison trusts, so an export that moves a memory to another owner or conversation, or changes its text or times,
is an error of the app's own (its users' backups are wrong too), named memory by memory.
"""

from __future__ import annotations

import base64
import json
import random
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

from harness.app.app_handle import AppHandle
from harness.drivers.base import MEMORY_FIELDS, OwnTextQuery, OwnTextRecall, StoreReads
from harness.replay.checks import same_time
from harness.snapshots import GoldenProbe, Header, HistoricalMemory, write_snapshot
from harness.snapshots.expectations import top_and_ties
from harness.snapshots.questions import Question, check_questions, sample_questions
from harness.vocabulary.recall import Hit


def _exported(path: Path) -> list[HistoricalMemory]:
    memories = []
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            r = json.loads(line)
            vector = base64.b64decode(r["embedding_f32"]) if r.get("embedding_f32") else None
            memories.append(HistoricalMemory(r["id"], r["user_id"], r["text"], r["created_at"], r.get("expires_at"),
                                             r.get("conversation_id"), r.get("embedder"), vector))
    return memories


EXPORT_CHECKED = 1000  # memories of the export compared with the store (all of a smaller store; a seeded sample)


class ExportMismatch(ValueError):
    """The app's export says something else than its store about some memory."""


def check_export(app: AppHandle, exported: list[HistoricalMemory], vectors: list[bytes | None], seed: int) -> None:
    """Each exported memory (up to EXPORT_CHECKED, drawn with `seed`) is the store's: same owner and text, and the
    same conversation, creation and expiry times where the app keeps them; raises ExportMismatch naming the first
    few that differ."""
    chosen = sorted(random.Random(seed).sample(range(len(exported)), min(EXPORT_CHECKED, len(exported))))
    stored = {r.memory_id: r for r in app.part(OwnTextRecall).recall_by_own_text(app.running,
        [OwnTextQuery(exported[i].id, exported[i].owner, vectors[i], exported[i].text) for i in chosen])}
    kept = [f for f in MEMORY_FIELDS if f in app.driver.kept_fields]
    resolution = app.target.limits.clock_resolution_s
    differences = []
    for i in chosen:
        m, row = exported[i], stored.get(exported[i].id)
        if row is None or row.owner_id is None:
            differences.append(f"{m.id}: exported, not in the store")
            continue
        said = {"owner": (m.owner, row.owner_id), "text": (m.text, row.text)}
        said |= {name: (getattr(m, name), row.fields.get(name)) for name in kept}
        wrong = [f"{name} exported {was!r}, stored {held!r}" for name, (was, held) in said.items()
                 if not (same_time(was, held, resolution) if name.endswith("_at") else was == held)]
        if wrong:
            differences.append(f"{m.id}: " + ", ".join(wrong))
    if differences:
        raise ExportMismatch(f"the app's export differs from its store for {len(differences)} of {len(chosen)} "
                             f"memories checked: {'; '.join(differences[:3])}")


def capture(app: AppHandle, out: Path, *, questions: list[Question] | None, sample: int, seed: int, k: int,
            description: str) -> Header:
    """Write the snapshot of the app's store as it is now to `out` (format 2)."""
    with tempfile.TemporaryDirectory(prefix="memtest-capture-") as folder:
        export = Path(folder) / "export.jsonl"
        app.part(StoreReads).export_memories(app.running, export)
        stored = _exported(export)
    embedder = str(app.health.get("embedder") or Counter(m.embedder for m in stored).most_common(1)[0][0])
    own = app.embed([m.text for m in stored], embedder)
    check_export(app, stored, own, seed)
    memories = [HistoricalMemory(m.id, m.owner, m.text, m.created_at, m.expires_at, m.conversation,
                                 embedder if m.embedder == embedder else None,
                                 m.embedding if m.embedder == embedder else None, vec is not None)
                for m, vec in zip(stored, own, strict=True)]
    owners = {m.owner for m in memories}
    asked = questions if questions is not None else sample_questions(memories, sample, seed)
    check_questions(asked, memories)
    vectors = app.embed([q.query for q in asked], embedder)
    by_owner: dict[str, list[int]] = defaultdict(list)
    for n, q in enumerate(asked):
        by_owner[q.owner].append(n)
    threshold = app.threshold
    answers: dict[int, list[Hit]] = {}
    for owner, numbers in by_owner.items():
        ranked = app.part(StoreReads).nearest(app.running, owner, [vectors[n] for n in numbers], k + 50)
        for n, hits in zip(numbers, ranked, strict=True):
            answers[n] = [Hit(h.id, h.score) for h in hits if h.score >= threshold]
    probes = []
    for n, q in enumerate(asked):
        top, tied = top_and_ties(answers[n], k)
        probes.append(GoldenProbe(q.owner, q.query, k, {embedder: top}, list(q.evidence), {embedder: tied}))
    header = Header(description, [embedder], embedder, threshold, k, len(memories), len(probes), len(owners))
    write_snapshot(out, header, memories, probes)
    return header
