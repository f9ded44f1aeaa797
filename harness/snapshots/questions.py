"""The questions a snapshot's probes ask: read from a team's file, or sampled from the memories themselves."""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

from harness.snapshots.format2 import HistoricalMemory
from harness.snapshots.rules import MalformedSnapshot, json_objects


@dataclass(frozen=True)
class Question:
    owner: str
    query: str
    evidence: tuple[str, ...] = ()  # the memories that answer it, when known


def read_questions(path: Path) -> list[Question]:
    """A questions file: one `{"owner": ..., "query": ..., "evidence": [memory ids, optional]}` per line; refused
    by line and field."""
    questions = []
    with path.open(encoding="utf-8") as lines:
        for n, data in json_objects(lines, path.name):
            if not (isinstance(data.get("owner"), str) and data["owner"]
                    and isinstance(data.get("query"), str) and data["query"]):
                raise MalformedSnapshot(f'{path.name}:{n}: needs "owner" (a user id) and "query", both non-empty')
            evidence = data.get("evidence", [])
            if not (isinstance(evidence, list) and all(isinstance(e, str) and e for e in evidence)):
                raise MalformedSnapshot(f'{path.name}:{n}: evidence: must be a list of memory ids')
            questions.append(Question(data["owner"], data["query"], tuple(evidence)))
    return questions


def sample_questions(memories: list[HistoricalMemory], count: int, seed: int) -> list[Question]:
    """`count` memories at random, each asked back by its first eight words."""
    rng = random.Random(seed)
    chosen = rng.sample(memories, min(count, len(memories)))
    return [Question(m.owner, " ".join(m.text.split()[:8]) or m.text, (m.id,)) for m in chosen]


def check_questions(questions: list[Question], memories: list[HistoricalMemory]) -> None:
    """Every question's owner owns a memory, and its evidence is theirs: refused in one line otherwise."""
    owner_of = {m.id: m.owner for m in memories}
    unknown = sorted({q.owner for q in questions} - set(owner_of.values()))
    if unknown:
        raise MalformedSnapshot(f"questions for owners with no memory: {', '.join(unknown[:5])}")
    for q in questions:
        wrong = [e for e in q.evidence if owner_of.get(e) != q.owner]
        if wrong:
            raise MalformedSnapshot(f"the question {q.query!r} of {q.owner} gives as evidence {wrong[0]!r}, "
                                    f"which is not a memory of {q.owner}")
