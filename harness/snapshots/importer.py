"""Outside data into a `memory-snapshot/2`: a team's own memories (an export of their store, a public dataset) and,
optionally, their questions, with every probe's expected recall computed by the target's own embedding model (its
`embed` tool) by exact cosine, as the generator does. `tools/make_snapshot.py --import` is the command.

The memories file is JSON Lines, one memory per line, as a format-2 memory line without "type" and vectors:
    {"id": ..., "owner": ..., "text": ..., "created_at": ISO-8601 with a zone,
     "expires_at": ISO-8601 | null (optional), "conversation": ... | null (optional)}
Vectors, if a line has any, are not kept: the target's model makes them. Questions: harness.snapshots.questions.
A memory already expired when importing is expected by no probe (no app recalls it); one that expires between the
import and a replay would be, so give such memories an expiry far ahead or import again.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from harness.app.app_tools import embed_texts_f32
from harness.app.target import Target
from harness.snapshots.expectations import expectations
from harness.snapshots.format2 import (
    GoldenProbe,
    Header,
    HistoricalMemory,
    memory_line,
    probes_expecting_nothing,
    write_snapshot,
)
from harness.snapshots.questions import Question, check_questions, read_questions, sample_questions
from harness.snapshots.rules import MalformedSnapshot, json_objects
from harness.vocabulary.recall import Hit

RULE = "an import file: a format-2 memory line without type and vectors"


def read_outside_memories(path: Path) -> list[HistoricalMemory]:
    """Every memory of an import file, refused by line and field (a duplicate id too)."""
    memories: list[HistoricalMemory] = []
    seen: set[str] = set()
    with path.open(encoding="utf-8") as lines:
        for n, data in json_objects(lines, path.name, f" ({RULE})"):
            data = {key: value for key, value in data.items() if key not in ("embedder", "embedding_f32")}
            memory = memory_line(path, n, data, RULE)
            if memory.id in seen:
                raise MalformedSnapshot(f"{path.name}:{n}: id: duplicate id {memory.id!r} ({RULE})")
            seen.add(memory.id)
            memories.append(memory)
    if not memories:
        raise MalformedSnapshot(f"{path.name}: no memory in the file ({RULE})")
    return memories


def import_history(target: Target, memories_file: Path, out: Path, *, questions_file: Path | None, sample: int,
                   seed: int, embedders: list[str], threshold: float, k: int, description: str,
                   progress: Callable[[str], None] = lambda _: None) -> Header:
    """Write the snapshot of `memories_file` (and `questions_file`, else `sample` questions drawn from the
    memories) to `out`; the first embedder is the one the memories' vectors are kept for."""
    memories = read_outside_memories(memories_file)
    asked: list[Question] = (read_questions(questions_file) if questions_file is not None
                             else sample_questions(memories, sample, seed))
    check_questions(asked, memories)
    progress(f"read {len(memories):,} memories and {len(asked):,} questions")
    ids, owners = [m.id for m in memories], [m.owner for m in memories]
    texts, queries = [m.text for m in memories], [q.query for q in asked]
    now = datetime.now(UTC)  # a memory already expired is recalled by no app: no probe expects it
    expired = {m.id for m in memories if m.expires_at is not None and datetime.fromisoformat(m.expires_at) <= now}
    expected: list[dict[str, list[Hit]]] = [{} for _ in asked]
    tied: list[dict[str, list[Hit]]] = [{} for _ in asked]
    kept: list[bytes | None] = []
    for embedder in embedders:
        vectors = embed_texts_f32(target, texts + queries, embedder)
        own, questions = vectors[:len(texts)], vectors[len(texts):]
        if embedder == embedders[0]:
            kept = own
        recallable = [None if m.id in expired else v for m, v in zip(memories, own, strict=True)]
        ranked = expectations(ids, owners, recallable,
                              [(q.owner, v) for q, v in zip(asked, questions, strict=True)], k, threshold)
        for n, (top, ties) in enumerate(ranked):
            expected[n][embedder], tied[n][embedder] = top, ties
        progress(f"embedded them with {embedder} and ranked every question's expected memories")
    snapshot_memories = [HistoricalMemory(m.id, m.owner, m.text, m.created_at, m.expires_at, m.conversation,
                                          embedders[0], vec, vec is not None)
                         for m, vec in zip(memories, kept, strict=True)]
    probes = [GoldenProbe(q.owner, q.query, k, expected[n], list(q.evidence), tied[n]) for n, q in enumerate(asked)]
    nothing = probes_expecting_nothing(probes)
    progress(f"{nothing} of the {len(probes)} questions expect no memory (they check that nothing is recalled)")
    if nothing * 2 > len(probes):
        raise MalformedSnapshot(f"{nothing} of the {len(probes)} questions expect no memory at all under "
                                f"{', '.join(embedders)}: a replay of them would test little; ask what the "
                                f"memories answer (threshold {threshold})")
    header = Header(description, embedders, embedders[0], threshold, k, len(memories), len(probes),
                    len(set(owners)))
    write_snapshot(out, header, snapshot_memories, probes)
    return header
