"""Outside data into a snapshot (tools/make_snapshot.py --import): the shipped example imports and reads back, the
expectations are the target's own model's exact ranking, and each way an import file can be wrong is one line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from harness.app.target import load_target
from harness.snapshots import GoldenProbe, HistoricalMemory, MalformedSnapshot, read_history
from harness.snapshots.importer import import_history

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "snapshots" / "examples" / "import"


def _import(tmp_path: Path, memories: Path, questions: Path | None = None, **kw: object) -> list:
    out = tmp_path / "out.jsonl"
    import_history(load_target(None), memories, out, questions_file=questions, sample=kw.get("sample", 8),
                   seed=7, embedders=["hash-ngram-v1", "hash-ngram-v2"], threshold=0.25, k=5, description="t")
    return list(read_history(out))


def _lines(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def test_the_shipped_example_imports_with_every_field_and_the_expected_memory_first(tmp_path: Path) -> None:
    records = _import(tmp_path, EXAMPLE / "memories.jsonl", EXAMPLE / "questions.jsonl")
    memories = [r for r in records if isinstance(r, HistoricalMemory)]
    probes = [r for r in records if isinstance(r, GoldenProbe)]
    given = [json.loads(line) for line in (EXAMPLE / "memories.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [(m.id, m.owner, m.text, m.created_at, m.expires_at, m.conversation) for m in memories] == [
        (g["id"], g["owner"], g["text"], g["created_at"], g.get("expires_at"), g.get("conversation")) for g in given]
    assert all(m.embedder == "hash-ngram-v1" for m in memories)
    answered = [p for p in probes if p.evidence]
    assert answered and all(p.expected[e][0].id == p.evidence[0] for p in answered for e in p.expected), (
        [(p.query, p.evidence, p.expected) for p in answered if p.expected["hash-ngram-v1"][:1] != p.evidence[:1]])


def test_the_command_line_writes_a_snapshot_that_reads_back(tmp_path: Path) -> None:
    out = tmp_path / "example.jsonl.gz"
    proc = subprocess.run([sys.executable, "tools/make_snapshot.py", "--import", str(EXAMPLE / "memories.jsonl"),
                           "--questions", str(EXAMPLE / "questions.jsonl"), "--out", str(out)],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "wrote" in proc.stdout and sum(1 for _ in read_history(out)) == 1 + 24 + 17


def test_a_memory_already_expired_is_expected_by_no_probe(tmp_path: Path) -> None:
    memories = _lines(tmp_path / "m.jsonl", [
        {"id": "a", "owner": "o", "text": "My gate code is 7731.", "created_at": "2020-01-01T00:00:00Z",
         "expires_at": "2021-01-01T00:00:00Z"},
        {"id": "b", "owner": "o", "text": "My gate code was 1234 before.", "created_at": "2020-01-01T00:00:00Z"}])
    questions = _lines(tmp_path / "q.jsonl", [{"owner": "o", "query": "What is my gate code?"}])
    probe = next(r for r in _import(tmp_path, memories, questions) if isinstance(r, GoldenProbe))
    assert [h.id for h in probe.expected["hash-ngram-v1"]] == ["b"]


GOOD = {"id": "a", "owner": "o", "text": "My gate code is 7731.", "created_at": "2024-01-01T00:00:00Z"}


@pytest.mark.parametrize(("rows", "questions", "message"), [
    ([{**GOOD, "created_at": "8 May 2023"}], None, "m.jsonl:1: created_at: '8 May 2023' is not an ISO-8601"),
    ([GOOD, GOOD], None, "m.jsonl:2: id: duplicate id 'a'"),
    ([{**GOOD, "text": ""}], None, "m.jsonl:1: text: must be a non-empty string"),
    ([], None, "m.jsonl: no memory in the file"),
    ([GOOD], [{"owner": "zed", "query": "What is my gate code?"}], "questions for owners with no memory: zed"),
    ([GOOD], [{"owner": "o", "query": "Where?", "evidence": ["nope"]}], "gives as evidence 'nope'"),
    ([GOOD], [{"owner": "o", "query": "Which moon did I visit?"}, {"owner": "o", "query": "What is my gate code?"},
              {"owner": "o", "query": "Who painted the sky?"}], "2 of the 3 questions expect no memory at all"),
])
def test_a_bad_import_is_refused_in_one_line(tmp_path: Path, rows: list, questions: list | None,
                                             message: str) -> None:
    memories = _lines(tmp_path / "m.jsonl", rows)
    asked = _lines(tmp_path / "q.jsonl", questions) if questions is not None else None
    with pytest.raises(MalformedSnapshot) as caught:
        _import(tmp_path, memories, asked)
    assert message in str(caught.value) and "\n" not in str(caught.value)
