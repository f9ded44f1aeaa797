"""`python -m memchat ...` run as a person would: a subprocess, its exit code, its output."""

from __future__ import annotations

import json
import os
import queue
import re
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime

import httpx
import numpy as np
import psycopg
from pgvector.psycopg import register_vector

from memchat import legacy_store
from memchat.db import Pool
from memchat.embedders import get_embedder
from memchat.faults import CATALOG
from memchat.memory_store import MemoryStore
from memchat.tests.helpers import LEGACY_OWNERS, REPO_ROOT, add_user, legacy_records, settings_for

NOW = datetime(2026, 6, 1, tzinfo=UTC)


def run_cli(*args: str, stdin: str | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMCHAT_")}
    return subprocess.run([sys.executable, "-m", "memchat", *args], input=stdin, capture_output=True, text=True,
                          timeout=timeout, cwd=REPO_ROOT, env=env)


def one_line(text: str) -> str:
    lines = text.strip().splitlines()
    assert len(lines) == 1, f"expected one line, got {lines}"
    return lines[0]


def test_serve_refuses_an_unknown_fault_naming_the_known_ones() -> None:
    done = run_cli("serve", "--faults", "nope,write-race", "--port", "0")
    assert done.returncode == 2 and done.stdout == ""  # nothing was started
    line = one_line(done.stderr)
    assert "'nope'" in line and all(name in line for name in CATALOG)


def test_serve_with_unreachable_databases_exits_2_with_one_line() -> None:
    done = run_cli("serve", "--pg", "postgresql://nobody:s3cret@127.0.0.1:1/x", "--redis", "redis://127.0.0.1:1",
                   "--port", "0", timeout=30)
    assert done.returncode == 2 and done.stdout == ""
    line = one_line(done.stderr)
    assert line.startswith("memchat: cannot connect to PostgreSQL at postgresql://nobody:***@127.0.0.1:1/x")
    assert "s3cret" not in line


def test_serve_with_an_unreachable_redis_exits_2_with_one_line(db) -> None:
    done = run_cli("serve", "--pg", db, "--redis", "redis://127.0.0.1:1", "--port", "0", timeout=30)
    assert done.returncode == 2
    assert one_line(done.stderr).startswith("memchat: cannot connect to Redis at redis://127.0.0.1:1")


def test_embed_writes_each_record_with_its_vector() -> None:
    texts = ["My favourite colour is teal.", "and so it is", "Ünïcödé naïve café"]
    lines = [json.dumps({"text": t, "id": i}) for i, t in enumerate(texts)]
    done = run_cli("embed", "--embedder", "hash-ngram-v2", stdin="\n".join(lines) + "\n\n")
    assert done.returncode == 0, done.stderr
    out = [json.loads(line) for line in done.stdout.splitlines()]
    assert [(r["id"], r["text"], r["embedder"]) for r in out] == [(i, t, "hash-ngram-v2") for i, t in enumerate(texts)]
    v2 = get_embedder("hash-ngram-v2")
    assert out[1]["embedding"] is None
    for rec in (out[0], out[2]):
        assert np.allclose(rec["embedding"], v2.embed(rec["text"]), atol=1e-7)


def test_embed_refuses_a_bad_line_with_its_number() -> None:
    done = run_cli("embed", stdin='{"text": "fine"}\n{"text": \n')
    assert done.returncode == 2 and one_line(done.stderr).startswith("memchat: -:2: not valid JSON")
    done = run_cli("embed", stdin='{"text": "fine"}\n["text"]\n')
    assert done.returncode == 2 and "-:2: each line must be an object" in one_line(done.stderr)


def test_redis_load_writes_the_legacy_store(redis_url, tmp_path) -> None:
    records = legacy_records(10, ghosts=())
    path = tmp_path / "memories.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    done = run_cli("redis-load", "--to", redis_url, "--file", str(path))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"loaded 10 memories into {redis_url}"
    client = legacy_store.connect(redis_url)
    try:
        back = {r["id"]: r for r in legacy_store.iter_all(client)}
    finally:
        client.close()
    assert sorted(back) == [r["id"] for r in records]
    assert all(back[r["id"]]["text"] == r["text"] and back[r["id"]]["user_id"] == r["user_id"] for r in records)


def test_redis_load_refuses_records_without_ids(redis_url) -> None:
    done = run_cli("redis-load", "--to", redis_url, stdin='{"text": "My dog is called Rex.", "user_id": "u1"}\n')
    assert done.returncode == 2 and '-:1: "id" and "user_id" must be strings' in one_line(done.stderr)
    client = legacy_store.connect(redis_url)
    try:
        assert legacy_store.all_ids(client) == []
    finally:
        client.close()


def test_export_from_redis(redis_url) -> None:
    client = legacy_store.connect(redis_url)
    try:
        legacy_store.put(client, legacy_records(8, ghosts=()), "hash-ngram-v1")
    finally:
        client.close()
    done = run_cli("export", "--from", redis_url)
    assert done.returncode == 0 and done.stderr.strip() == "exported 8 memories"
    out = [json.loads(line) for line in done.stdout.splitlines()]
    v1 = get_embedder("hash-ngram-v1")
    assert [r["id"] for r in out] == [f"lg_{i:03d}" for i in range(8)]
    for rec in out:
        want = v1.embed(rec["text"])
        assert (rec["embedding"] is None) if want is None else np.allclose(rec["embedding"], want, atol=1e-7)


def test_export_from_postgres_to_a_file(db, tmp_path) -> None:
    add_user(db, "u1", "x")
    pool = Pool(db, size=2)
    try:
        ids = MemoryStore(pool, settings_for(db)).write("u1", None, ["My shoe size is 42.", "so it is"], NOW)
    finally:
        pool.close()
    path = tmp_path / "out.jsonl"
    done = run_cli("export", "--from", db, "--out", str(path))
    assert done.returncode == 0 and done.stderr.strip() == "exported 2 memories"
    out = {r["id"]: r for r in map(json.loads, path.read_text().splitlines())}
    assert set(out) == set(ids)
    shoe = next(r for r in out.values() if r["text"] == "My shoe size is 42.")
    assert np.allclose(shoe["embedding"], get_embedder("hash-ngram-v1").embed(shoe["text"]), atol=1e-7)
    assert shoe["user_id"] == "u1" and shoe["embedder"] == "hash-ngram-v1"
    assert datetime.fromisoformat(shoe["created_at"]) == NOW
    assert next(r for r in out.values() if r["text"] == "so it is")["embedding"] is None


def test_migrate_copies_and_reports_its_counts(db, redis_url) -> None:
    for uid in LEGACY_OWNERS:
        add_user(db, uid, "x")
    client = legacy_store.connect(redis_url)
    try:
        legacy_store.put(client, legacy_records(), "hash-ngram-v1")
    finally:
        client.close()
    done = run_cli("migrate", "--from", redis_url, "--to", db, "--batch-size", "7")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ("migrated: read 30, written 27, skipped 3 (0 already present, 3 with an unknown"
                                   " owner), re-embedded 1")
    with psycopg.connect(db) as conn:
        assert conn.execute("SELECT count(*) FROM memories").fetchone()[0] == 27
    again = run_cli("migrate", "--from", redis_url, "--to", db, "--batch-size", "7")
    assert "written 0, skipped 30 (27 already present, 3 with an unknown owner)" in again.stdout


def test_migrate_from_an_unreachable_redis_exits_2(db) -> None:
    done = run_cli("migrate", "--from", "redis://127.0.0.1:1", "--to", db)
    assert done.returncode == 2 and one_line(done.stderr).startswith("memchat: cannot connect to Redis")


def test_reembed_moves_rows_to_the_new_model(db) -> None:
    add_user(db, "u1", "x")
    pool = Pool(db, size=2)
    try:
        MemoryStore(pool, settings_for(db)).write("u1", None, ["My car is a Fiat Panda.", "My dog is called Rex."],
                                                  NOW)
    finally:
        pool.close()
    done = run_cli("reembed", "--pg", db, "--embedder", "hash-ngram-v2")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "re-embedded 2 memories with hash-ngram-v2"
    v2 = get_embedder("hash-ngram-v2")
    with psycopg.connect(db) as conn:
        register_vector(conn)
        for text, embedding, embedder in conn.execute("SELECT text, embedding, embedder FROM memories"):
            assert embedder == "hash-ngram-v2" and np.array_equal(embedding.to_numpy(), v2.embed(text))
    assert run_cli("reembed", "--pg", db, "--embedder", "hash-ngram-v2").stdout.strip() == (
        "re-embedded 0 memories with hash-ngram-v2")


def test_faults_lists_the_catalogue_and_checks_names() -> None:
    done = run_cli("faults")
    assert done.returncode == 0 and all(f"| `{name}` |" in done.stdout for name in CATALOG)
    assert run_cli("faults", "--check", "write-race,ttl-too-short").returncode == 0
    bad = run_cli("faults", "--check", "write-race,nope")
    assert bad.returncode == 2 and "'nope'" in one_line(bad.stderr)


def test_serve_answers_http_promptly_and_stops_on_sigterm(db, redis_url) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMCHAT_")}
    proc = subprocess.Popen([sys.executable, "-m", "memchat", "serve", "--pg", db, "--redis", redis_url, "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO_ROOT, env=env)
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in proc.stdout], daemon=True).start()
    try:
        line = lines.get(timeout=30)
        url = re.search(r"serving on (http://\S+) \(faults: none\)", line).group(1)
        with httpx.Client(base_url=url, timeout=10) as client:
            assert client.get("/healthz").json()["app"] == "memchat"
            timings = []
            for _ in range(15):
                started = time.perf_counter()
                assert client.get("/static/app.css").status_code == 200
                timings.append(time.perf_counter() - started)
        # A response written in two parts waits for the client's delayed ACK (40 ms) unless TCP_NODELAY is set.
        assert sorted(timings)[7] < 0.030, f"median {sorted(timings)[7] * 1000:.1f} ms"
    finally:
        proc.terminate()
        proc.wait(timeout=20)
    assert proc.returncode == 0  # exits through Python (its clean-up runs), not killed by the re-raised SIGTERM
