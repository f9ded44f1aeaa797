"""`python -m memchat ...` run as a person would: a subprocess, its exit code, its output."""

from __future__ import annotations

import base64
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

from memchat import cli, legacy_store
from memchat.db import Pool
from memchat.embedders import get_embedder
from memchat.faults import CATALOG
from memchat.memory_store import MemoryStore
from memchat.tests.helpers import (
    LEGACY_OWNERS,
    REPO_ROOT,
    add_user,
    legacy_records,
    migration_counts,
    settings_for,
)

NOW = datetime(2026, 6, 1, tzinfo=UTC)


def run_cli(*args: str, stdin: str | None = None, timeout: float = 60,
            env_given: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMCHAT_")} | (env_given or {})
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


def test_an_index_kind_misspelt_in_the_environment_is_refused_before_anything_starts() -> None:
    for command in (["serve", "--port", "0"], ["reembed", "--pg", "postgresql://nobody@127.0.0.1:1/x"]):
        done = run_cli(*command, timeout=30, env_given={"MEMCHAT_INDEX": "hnws"})
        assert done.returncode == 2 and done.stdout == "", (command, done)
        assert one_line(done.stderr) == ("memchat: MEMCHAT_INDEX 'hnws' is not an index kind; give one of hnsw, "
                                         "ivfflat, none"), (command, done.stderr)


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
    assert migration_counts(done.stdout) == (
        "migrated: read 30, written 27, skipped 3 (0 already present, 0 deleted by their owner, 3 with an unknown"
        " owner), re-embedded 1")
    with psycopg.connect(db) as conn:
        assert conn.execute("SELECT count(*) FROM memories").fetchone()[0] == 27
    pool = Pool(db, size=2)
    try:  # its owner deletes one in the app: the next run says it skipped it, and why
        assert MemoryStore(pool, settings_for(db)).delete("u2", "lg_001", NOW)
    finally:
        pool.close()
    again = run_cli("migrate", "--from", redis_url, "--to", db, "--batch-size", "7")
    assert migration_counts(again.stdout) == (
        "migrated: read 30, written 0, skipped 30 (26 already present, 1 deleted by their owner, 3 with an unknown"
        " owner), re-embedded 1")


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


# -- the bulk paths: base64 vectors, streamed loads, strict records ---------------------------------------------------


def f32(text: str | None) -> np.ndarray | None:
    return np.frombuffer(base64.b64decode(text), dtype="<f4") if text is not None else None


def test_embed_base64_carries_the_same_vectors_as_json() -> None:
    texts = [json.dumps({"text": t, "id": i}) for i, t in enumerate(["My dog is called Rex.", "and so it is", "Ünï"])]
    as_json = run_cli("embed", stdin="\n".join(texts) + "\n")
    as_b64 = run_cli("embed", "--encoding", "base64", stdin="\n".join(texts) + "\n")
    assert as_json.returncode == as_b64.returncode == 0, as_b64.stderr
    for j, b in zip(map(json.loads, as_json.stdout.splitlines()), map(json.loads, as_b64.stdout.splitlines()),
                    strict=True):
        assert "embedding" not in b and b["embedder"] == j["embedder"] == "hash-ngram-v1"
        assert {k: v for k, v in b.items() if k != "embedding_f32"} == {k: v for k, v in j.items() if k != "embedding"}
        want = get_embedder("hash-ngram-v1").embed(b["text"])
        if want is None:
            assert b["embedding_f32"] is None and j["embedding"] is None
        else:
            assert np.array_equal(f32(b["embedding_f32"]), want)  # exact: the float32 bits themselves
            assert np.allclose(f32(b["embedding_f32"]), j["embedding"], atol=1e-7)


def legacy_lines(tmp_path, records: list[dict]) -> str:
    path = tmp_path / "legacy.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return str(path)


def test_redis_load_refuses_a_bad_record_naming_file_line_and_field(redis_url, tmp_path, capsys) -> None:
    good = legacy_records(6, ghosts=())
    vec = get_embedder("hash-ngram-v1").embed("My dog is called Rex.")
    cases = [
        ({"created_at": "1:56 pm on 8 May, 2023"},
         "created_at '1:56 pm on 8 May, 2023' is not ISO-8601 with a time zone"),
        ({"expires_at": "2024-05-08T13:56:00"}, "expires_at '2024-05-08T13:56:00' is not ISO-8601 with a time zone, "
         "and the legacy store declares no zone for its local times (redis-load --timezone, e.g. Europe/Berlin)"),
        ({"embedding": vec[:255].tolist()}, "embedding has 255 dimensions, not the embedder's 256"),
        ({"embedding_f32": base64.b64encode(vec[:10].tobytes()).decode()},
         "embedding_f32 has 10 dimensions, not the embedder's 256"),
        ({"id": ""}, '"id" and "user_id" must be strings ("id" is not a non-empty string)'),
        ({"id": None}, '"id" and "user_id" must be strings ("id" is missing)'),
    ]
    for change, message in cases:  # in-process (the same main() as the command line): a subprocess costs 0.5 s
        path = legacy_lines(tmp_path, good[:4] + [{**good[4], **change}] + good[5:])
        assert cli.main(["redis-load", "--to", redis_url, "--file", path]) == 2
        assert one_line(capsys.readouterr().err) == f"memchat: {path}:5: {message}"
    client = legacy_store.connect(redis_url)
    try:
        assert legacy_store.all_ids(client) == []  # a refused file loads nothing, not even its good first lines
    finally:
        client.close()
    # from standard input, what was loaded before the refused chunk is said
    lines = "".join(json.dumps({**r, "id": f"s{i:05d}"}) + "\n" for i, r in enumerate(good * 400))
    done = run_cli("redis-load", "--to", redis_url, stdin=lines + '{"id": "x", "user_id": "u1", "text": 3}\n')
    assert done.returncode == 2
    assert one_line(done.stderr) == 'memchat: -:2401: "text" must be a string (2000 records were loaded before it)'


def test_redis_load_takes_base64_and_null_vectors_and_null_stays_null_through_migrate(db, redis_url, tmp_path) -> None:
    add_user(db, "u1", "x")
    v1 = get_embedder("hash-ngram-v1")
    texts = ["My dog is called Rex.", "My car is a Fiat Panda.", "My shoe size is 42.", "My flight is BA117."]
    records = [
        {"id": "a", "user_id": "u1", "text": texts[0], "embedding_f32": base64.b64encode(v1.embed(texts[0])).decode(),
         "created_at": "2024-05-08T13:56:00+00:00", "expires_at": ""},
        {"id": "b", "user_id": "u1", "text": texts[1], "embedding": None, "created_at": "2024-05-08T13:56:00+02:00"},
        {"id": "c", "user_id": "u1", "text": texts[2], "embedding_f32": None},
        {"id": "d", "user_id": "u1", "text": texts[3], "conversation_id": "c1"},
    ]
    done = run_cli("redis-load", "--to", redis_url, "--file", legacy_lines(tmp_path, records))
    assert done.returncode == 0 and done.stdout.strip() == f"loaded 4 memories into {redis_url}", done.stderr
    client = legacy_store.connect(redis_url)
    try:
        back = {r["id"]: r for r in legacy_store.iter_all(client)}
    finally:
        client.close()
    assert np.array_equal(back["a"]["embedding"], v1.embed(texts[0]))
    assert np.array_equal(back["d"]["embedding"], v1.embed(texts[3]))
    assert back["b"]["embedding"] is None and back["c"]["embedding"] is None
    done = run_cli("migrate", "--from", redis_url, "--to", db, "--index-build-memory", "64MB")
    assert done.returncode == 0, done.stderr
    assert migration_counts(done.stdout) == (
        "migrated: read 4, written 4, skipped 0 (0 already present, 0 deleted by their owner, 0 with an unknown owner),"
        " re-embedded 0")
    with psycopg.connect(db) as conn:
        register_vector(conn)
        got = {r[0]: r[1:] for r in conn.execute("SELECT id, embedding, created_at, conversation_id FROM memories")}
    assert got["b"][0] is None and got["c"][0] is None  # kept without a vector, not embedded on the way
    assert np.array_equal(got["a"][0].to_numpy(), v1.embed(texts[0])) and got["d"][2] == "c1"
    assert got["b"][1] == datetime(2024, 5, 8, 11, 56, tzinfo=UTC)


def test_migrate_stops_at_a_bad_timestamp_naming_the_memory(db, redis_url) -> None:
    add_user(db, "u1", "x")
    client = legacy_store.connect(redis_url)
    try:
        legacy_store.put(client, [{"id": "m1", "user_id": "u1", "text": "My dog is called Rex.",
                                   "created_at": "1:56 pm on 8 May, 2023"}], "hash-ngram-v1")
    finally:
        client.close()
    done = run_cli("migrate", "--from", redis_url, "--to", db)
    assert done.returncode == 2 and one_line(done.stderr).startswith(
        "memchat: memory m1: created_at '1:56 pm on 8 May, 2023' is not ISO-8601 with a time zone")
    bad = run_cli("migrate", "--from", redis_url, "--to", db, "--index-build-memory", "lots")
    assert bad.returncode == 2 and "--index-build-memory 'lots'" in one_line(bad.stderr)


def test_export_base64_round_trips_through_redis_load(db, redis_url, tmp_path) -> None:
    add_user(db, "u1", "x")
    pool = Pool(db, size=2)
    try:
        ids = MemoryStore(pool, settings_for(db)).write("u1", "c9", ["My shoe size is 42.", "so it is"], NOW)
    finally:
        pool.close()
    path = tmp_path / "out.jsonl"
    done = run_cli("export", "--from", db, "--out", str(path), "--encoding", "base64")
    assert done.returncode == 0 and done.stderr.strip() == "exported 2 memories"
    out = {r["id"]: r for r in map(json.loads, path.read_text().splitlines())}
    assert set(out) == set(ids) and all("embedding" not in r for r in out.values())
    shoe = next(r for r in out.values() if r["text"] == "My shoe size is 42.")
    assert np.array_equal(f32(shoe["embedding_f32"]), get_embedder("hash-ngram-v1").embed(shoe["text"]))
    assert (shoe["user_id"], shoe["conversation_id"], shoe["embedder"]) == ("u1", "c9", "hash-ngram-v1")
    assert datetime.fromisoformat(shoe["created_at"]) == NOW and datetime.fromisoformat(shoe["expires_at"]) > NOW
    assert next(r for r in out.values() if r["text"] == "so it is")["embedding_f32"] is None
    assert run_cli("redis-load", "--to", redis_url, "--file", str(path)).returncode == 0
    again = run_cli("export", "--from", redis_url, "--encoding", "base64")
    assert {r["id"]: r["embedding_f32"] for r in map(json.loads, again.stdout.splitlines())} == {
        i: r["embedding_f32"] for i, r in out.items()}


def test_redis_load_from_a_pipe_named_as_the_file(redis_url) -> None:
    lines = "".join(json.dumps(r) + "\n" for r in legacy_records(3, ghosts=()))
    done = run_cli("redis-load", "--to", redis_url, "--file", "/dev/stdin", stdin=lines)
    assert done.returncode == 0 and done.stdout.strip() == f"loaded 3 memories into {redis_url}", done.stderr
