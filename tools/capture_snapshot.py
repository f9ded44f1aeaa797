"""Capture a golden snapshot (format memory-snapshot/2) from a running app: its memories, and what it answers now.

    .venv/bin/python tools/capture_snapshot.py --base-url http://app:8000 --pg-dsn postgresql://... \\
        --out before.jsonl.gz [--target targets/your-app.toml] [--questions questions.jsonl | --sample 200]

Freeze "before" from your own store, then replay the snapshot through the change (a migration, a new embedding model,
an index, a pgvector upgrade) with a scenario that names it: `Given the legacy Redis store holds the golden snapshot
"path/to/before.jsonl.gz"` (see snapshots/README.md). The app's driver needs direct access to its database (the
memchat driver: --pg-dsn).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import time
from pathlib import Path

from harness.app.app_handle import AppHandle
from harness.app.target import load_target
from harness.drivers import load_driver
from harness.drivers.base import Capability, DriverError
from harness.replay.capture import ExportMismatch, capture
from harness.snapshots import MalformedSnapshot
from harness.snapshots.questions import read_questions


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base-url", required=True, help="the running app")
    ap.add_argument("--pg-dsn", default=os.environ.get("MEMTEST_PG_DSN"), help="its PostgreSQL (env MEMTEST_PG_DSN)")
    ap.add_argument("--admin-token", default=os.environ.get("MEMTEST_ADMIN_TOKEN"))
    ap.add_argument("--target", default=os.environ.get("MEMTEST_TARGET"))
    ap.add_argument("--out", required=True, type=Path, help="the snapshot to write (.jsonl, or .jsonl.gz)")
    source = ap.add_mutually_exclusive_group()
    source.add_argument("--questions", type=Path, help='JSON Lines {"owner": user id, "query": ...} to ask')
    source.add_argument("--sample", type=int, default=200, help="else: this many questions sampled from memories")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--k", type=int, help="hits per question (default: the target's [recall] top_k)")
    ap.add_argument("--description", default="")
    args = ap.parse_args(argv)
    driver = load_driver(load_target(args.target))
    try:
        if Capability.DATABASE_ACCESS not in driver.capabilities:
            raise DriverError(f"the {driver.name} driver cannot read the app's store, which capture needs")
        if not args.pg_dsn:
            raise DriverError("capture reads the app's store: give --pg-dsn (or MEMTEST_PG_DSN)")
        app = AppHandle(driver, dataclasses.replace(driver.attach(args.base_url, args.admin_token),
                                                    pg_dsn=args.pg_dsn))
        started = time.perf_counter()
        header = capture(app, args.out, questions=read_questions(args.questions) if args.questions else None,
                         sample=args.sample, seed=args.seed, k=args.k or app.recall_k,
                         description=args.description or f"captured from {args.base_url}")
    except (DriverError, MalformedSnapshot, ExportMismatch) as e:
        print(f"capture_snapshot: {e}", file=sys.stderr)
        return 2
    print(f"wrote {args.out}: {header.memories} memories of {header.owners} owners, {header.probes} probes "
          f"({header.embedders[0]}) in {time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
