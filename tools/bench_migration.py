"""Bench of the migration replay at 1k, 10k, 100k and 1M memories: each size a fresh run on fresh databases.

For each size, with new embedded PostgreSQL + pgvector and Redis and the reference app started on them (not timed):
  generate_s  tools/make_snapshot.py --memories N: texts, the app's vectors, probes and their exact expectations
  load_s      the snapshot streamed into the app's legacy Redis store with its own loading tool, owners imported
  migrate_s   the app's own migration tool on the loaded store (index build included); under "migrate", the
              tool's own split: copy_s (Redis to PostgreSQL) and index_s (the index build after)
  verify_s    every memory by its own text through the store's similarity query, every probe through the search API
  total_s     wall time from the start of generation to the end of verification
  peak_rss_mb the peak of the summed proportional set size (PSS) of this process, its children, PostgreSQL and Redis,
              sampled every 0.2 s, or less often where a sample costs more than 2 % of a core
  floor_s     the machine's floor for the same history, measured after the app stopped, on the same PostgreSQL: the
              unavoidable work alone, each part the plain library call (tools/bench_floor.py: embed_s, copy_s,
              index_s, nn_s under "floor"); total_over_floor = total_s / floor_s
Every memory and probe must check out (the clean app): a failing check fails the bench.

    python tools/bench_migration.py [--sizes 1000,10000,100000,1000000]    # prints JSON; bench_suite.py calls main()
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

import psycopg

from harness.app.app_handle import AppHandle
from harness.app.target import load_target
from harness.drivers import load_driver
from harness.replay.checks import ReplayChecks, check_memories, check_probes, query_vectors
from harness.replay.history import import_owners, stream_for_replay
from harness.services.databases import create_database, drop_database, provide_databases, scalar
from tools.bench_floor import app_vector_indexes, measure_floor, phase

ROOT = Path(__file__).resolve().parent.parent

SIZES = (1000, 10_000, 100_000, 1_000_000)  # 1M: about 14 minutes and 6 GB here, its floor 6 more
SAMPLE_S = 0.2
# A sample reads every process's smaps_rollup, whose cost grows with what the process maps: about 100 ms for the three
# processes of a parallel HNSW build over a million rows. Sampling that every 0.2 s took half a core from what it
# measured, so the sampler waits SAMPLE_COST_RATIO times a sample's own cost when that is longer (2 % of a core).
SAMPLE_COST_RATIO = 50
EMBEDDER = "hash-ngram-v1"


def _pss_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/smaps_rollup", encoding="ascii") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def _children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        tree.setdefault(ppid, []).append(int(entry))
    return tree


def _tree(roots: list[int]) -> set[int]:
    tree, seen, todo = _children(), set(), list(roots)
    while todo:
        pid = todo.pop()
        if pid not in seen:
            seen.add(pid)
            todo += tree.get(pid, [])
    return seen


class PeakPss:
    """Samples the summed PSS of the process trees under `roots()` until stopped; keeps the peak."""

    def __init__(self, roots: Callable[[], list[int]]) -> None:
        self.roots, self.peak_kb = roots, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _sample(self) -> None:
        self.peak_kb = max(self.peak_kb, sum(_pss_kb(pid) for pid in _tree(self.roots())))

    def _run(self) -> None:
        while not self._stop.is_set():
            started = time.perf_counter()
            self._sample()
            self._stop.wait(max(SAMPLE_S, SAMPLE_COST_RATIO * (time.perf_counter() - started)))

    def __enter__(self) -> PeakPss:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self._sample()  # the end, which a long wait may have left out


def _postmaster_pid(dsn: str) -> int:
    with psycopg.connect(dsn, connect_timeout=10) as conn:
        data_dir = scalar(conn, "SHOW data_directory")
    return int(Path(data_dir, "postmaster.pid").read_text().split()[0])


def _migrate_parts(output: str) -> dict[str, float]:
    """The migrate tool's own split of migrate_s: "rows copied in X s, index built in Y s" (empty if not said)."""
    m = re.search(r"rows copied in ([\d.]+) s, index built in ([\d.]+) s", output)
    return {"copy_s": float(m[1]), "index_s": float(m[2])} if m else {}


def bench_size(size: int, say: Callable[[str], None]) -> dict[str, object]:
    """One size on fresh databases; its folder (the snapshot: 1.6 GB at 1M, the app's log) is removed once it has
    checked out, and kept, named in the error, when it has not."""
    work = Path(tempfile.mkdtemp(prefix=f"memtest-bench-{size}-"))
    try:
        result = _bench_size_in(work, size, say)
    except BaseException:
        say(f"bench_migration: kept {work} (the snapshot and the app's log) for a look")
        raise
    shutil.rmtree(work, ignore_errors=True)
    return result


def _bench_size_in(work: Path, size: int, say: Callable[[str], None]) -> dict[str, object]:
    driver = load_driver(load_target(None))
    with provide_databases("embedded", workdir=Path("/tmp")) as servers:
        databases = servers.describe()
        pg_dsn = create_database(servers.pg_admin_dsn, "bench_replay")
        running = driver.start(pg_dsn=pg_dsn, redis_url=servers.redis_url, settings={}, log_path=work / "app.log")
        app = AppHandle(driver, running)
        try:
            postmaster = _postmaster_pid(pg_dsn)
            times: dict[str, float] = {}
            with PeakPss(lambda: [os.getpid(), postmaster]) as memory:
                started = time.perf_counter()
                with phase(times, "generate_s"):
                    subprocess.run([sys.executable, str(ROOT / "tools" / "make_snapshot.py"), "--memories",
                                    str(size), "--out", str(work / "history.jsonl"), "--embedders", EMBEDDER],
                                   check=True, capture_output=True, text=True, cwd=ROOT)
                with phase(times, "load_s"):
                    history, records = stream_for_replay(work / "history.jsonl", "b")
                    app.load_legacy_store(records, EMBEDDER)
                    accounts = import_owners(app, history)
                with phase(times, "migrate_s"):
                    counts = app.migrate(500, EMBEDDER)
                with phase(times, "verify_s"):
                    checks = ReplayChecks(check_memories(app, history, query_vectors(app, history, EMBEDDER)),
                                          check_probes(app, history, accounts, EMBEDDER, history.header.k))
                times["total_s"] = round(time.perf_counter() - started, 2)
            times["peak_rss_mb"] = round(memory.peak_kb / 1024, 1)
        finally:
            running.stop()
        indexes = app_vector_indexes(pg_dsn)  # the floor builds the same
        drop_database(servers.pg_admin_dsn, "bench_replay")
        floor_dsn = create_database(servers.pg_admin_dsn, "bench_floor")
        floor = measure_floor(driver.target, work / "history.jsonl", floor_dsn, indexes)
        drop_database(servers.pg_admin_dsn, "bench_floor")
    times["floor_s"] = floor.pop("floor_s")
    times["total_over_floor"] = round(times["total_s"] / times["floor_s"], 2)
    output = counts.output
    migrate = _migrate_parts(output)
    say(f"  {size:>7,} ({databases}): {json.dumps(times)}\n           migrate: {json.dumps(migrate)}\n"
        f"           floor: {json.dumps(floor)}\n           {checks.figures()}")
    if counts.written != history.size or not checks.memories.ok or checks.probes.failing or checks.leaks(history):
        raise SystemExit(f"bench_migration: the clean app failed the replay of {size:,} memories:\n"
                         f"{output.strip()}\n{checks.figures()}\n{checks.lost_memories()}")
    return {**times, "migrate": migrate, "floor": floor, "memories": history.size, "probes": len(history.probes),
            "owners": len(set(history.owners)), "databases": databases}


def bench_migration(sizes: tuple[int, ...] = SIZES, say: Callable[[str], None] = print) -> dict[str, dict]:
    say(f"migration replay (fresh databases per size), {os.cpu_count()} cores, Python {platform.python_version()}:")
    return {str(size): bench_size(size, say) for size in sizes}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)))
    args = ap.parse_args(argv)
    result = bench_migration(tuple(int(s) for s in args.sizes.split(",")))
    print(json.dumps({"migration": result}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
