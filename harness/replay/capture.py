"""Capture a format-2 snapshot from a running app, so that a team freezes "before" from its own store.

Memories come from the app's export (through its driver); each probe's expected results are what the app's store
ranks now for the question (the driver's similarity query, as the app runs it), with the app's current embedding
model. Probes come from a file of questions per owner (JSON Lines `{"owner": ..., "query": ...}`, the owner being the
app's user id) or are sampled from the memories (a memory's first words, with that memory as evidence).
"""

from __future__ import annotations

import base64
import json
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

from harness.app_handle import AppHandle
from harness.recall import Hit
from harness.snapshots import GoldenProbe, Header, HistoricalMemory, write_snapshot
from harness.snapshots.expectations import top_and_ties
from harness.snapshots.questions import Question, check_questions, sample_questions


def _exported(path: Path) -> list[HistoricalMemory]:
    memories = []
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            r = json.loads(line)
            vector = base64.b64decode(r["embedding_f32"]) if r.get("embedding_f32") else None
            memories.append(HistoricalMemory(r["id"], r["user_id"], r["text"], r["created_at"], r.get("expires_at"),
                                             r.get("conversation_id"), r.get("embedder"), vector))
    return memories


def capture(app: AppHandle, out: Path, *, questions: list[Question] | None, sample: int, seed: int, k: int,
            description: str) -> Header:
    """Write the snapshot of the app's store as it is now to `out` (format 2)."""
    with tempfile.TemporaryDirectory(prefix="memtest-capture-") as folder:
        export = Path(folder) / "export.jsonl"
        app.export_memories(export)
        stored = _exported(export)
    embedder = str(app.health.get("embedder") or Counter(m.embedder for m in stored).most_common(1)[0][0])
    own = app.embed([m.text for m in stored], embedder)
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
        ranked = app.nearest(owner, [vectors[n] for n in numbers], k + 50)
        for n, hits in zip(numbers, ranked, strict=True):
            answers[n] = [Hit(h.id, h.score) for h in hits if h.score >= threshold]
    probes = []
    for n, q in enumerate(asked):
        top, tied = top_and_ties(answers[n], k)
        probes.append(GoldenProbe(q.owner, q.query, k, {embedder: top}, list(q.evidence), {embedder: tied}))
    header = Header(description, [embedder], embedder, threshold, k, len(memories), len(probes), len(owners))
    write_snapshot(out, header, memories, probes)
    return header
