"""Generate a golden memory snapshot (see snapshots/README.md).

The memories come from faker with a fixed seed; the expected recall of every probe is a brute-force cosine ranking
over the owner's memories, with vectors from the app's own `embed` tool, for every embedding model named. Review the
diff of a regenerated snapshot like code: a changed expectation is a changed behaviour.

    .venv/bin/python tools/make_snapshot.py --name household [--seed 7] [--per-owner 24]    # format 1, small
    .venv/bin/python tools/make_snapshot.py --memories 100000 --out /tmp/history.jsonl.gz   # format 2, any size
    .venv/bin/python tools/make_snapshot.py --import memories.jsonl [--questions questions.jsonl] --out F
                                            # format 2, from outside data (snapshots/examples/import/)
"""

from __future__ import annotations

import argparse
import datetime
import json
import time
from pathlib import Path
from typing import Any

from faker import Faker

from harness.app.app_tools import ToolFailed, embed_texts
from harness.app.target import TargetError, load_target
from harness.snapshots import (
    FORMAT,
    SNAPSHOT_DIR,
    MalformedSnapshot,
    load_snapshot,
    read_history,
    write_snapshot,
)
from harness.snapshots.generate import stream_history
from harness.snapshots.importer import import_history
from harness.vocabulary.recall import brute_force

# Fixed bounds, not Faker's date_this_century or date_time_this_decade (which end today): a seed makes the same history
# on any day it is run.
_CENTURY_FROM, _CENTURY_TO = datetime.date(2000, 1, 1), datetime.date(2025, 12, 31)
_DECADE_FROM, _DECADE_TO = datetime.datetime(2020, 1, 1), datetime.datetime(2025, 12, 31)

OWNERS = ["ana", "ana1", "ben", "bea", "carl"]  # near-colliding names on purpose
FACTS = [
    ("order number", lambda f: str(f.random_int(1000, 9999))),
    ("previous order number", lambda f: str(f.random_int(1000, 9999))),
    ("favourite colour", lambda f: f.color_name().lower()),
    ("home city", lambda f: f.city()),
    ("work city", lambda f: f.city()),
    ("dentist", lambda f: f"Doctor {f.last_name()}"),
    ("gym locker", lambda f: str(f.random_int(1, 400))),
    ("locker code", lambda f: f"{f.random_int(1, 40)}-{f.random_int(1, 40)}-{f.random_int(1, 40)}"),
    ("pet's name", lambda f: f.first_name()),
    ("partner's name", lambda f: f.first_name()),
    ("favourite book", lambda f: f.catch_phrase()),
    ("employer", lambda f: f.company()),
    ("wifi password", lambda f: f"{f.word()}-{f.random_int(10, 99)}"),
    ("car plate", lambda f: f.license_plate()),
    ("blood type", lambda f: f.random_element(["A+", "A-", "B+", "O+", "O-", "AB+"])),
    ("shoe size", lambda f: str(f.random_int(36, 47))),
    ("favourite food", lambda f: f.random_element(["ramen", "paella", "pierogi", "tacos", "curry", "pho"])),
    ("train to work", lambda f: f"the {f.random_int(6, 9)}:{f.random_int(10, 59)}"),
    ("library card", lambda f: f"{f.random_int(10, 99)}-{f.random_int(1000, 9999)}"),
    ("insurance number", lambda f: f.bothify("??-####-?").upper()),
    ("piano teacher", lambda f: f.name()),
    ("bank branch", lambda f: f"{f.city()} {f.street_suffix()}"),
    ("anniversary", lambda f: f.date_between(_CENTURY_FROM, _CENTURY_TO).strftime("%d %B")),
    ("passport number", lambda f: f.bothify("?########").upper()),
]


MIN_MEMORIES, MAX_MEMORIES = 100, 1_000_000  # a million: the largest history make replay-scale replays


def write_history(args: argparse.Namespace) -> int:
    """Format 2: `--memories` nominal memories (+3), streamed to --out."""
    if not MIN_MEMORIES <= args.memories <= MAX_MEMORIES:
        raise SystemExit(f"make_snapshot: --memories must be from {MIN_MEMORIES} to {MAX_MEMORIES}, "
                         f"not {args.memories}")
    out = Path(args.out or SNAPSHOT_DIR / f"{args.name}.jsonl.gz")
    started = time.perf_counter()
    history = stream_history(load_target(args.target), nominal=args.memories, seed=args.seed,
                             embedders=args.embedders.split(","), threshold=args.threshold, k=args.k,
                               progress=lambda what: print(f"  {time.perf_counter() - started:5.1f} s  {what}"))
    write_snapshot(out, history.header, history.memories, history.probes)
    if args.check:
        sum(1 for _ in read_history(out))  # what we write must be what we can read
    h = history.header
    print(f"wrote {out} ({h.memories} memories of {h.owners} owners, {h.probes} probes) in "
          f"{time.perf_counter() - started:.1f} s")
    return 0


def import_outside(args: argparse.Namespace) -> int:
    """Format 2 from a team's memories (and questions): expectations by the target's own embedding models."""
    if not args.out:
        raise SystemExit("make_snapshot: --import needs --out (where to write the snapshot)")
    started = time.perf_counter()
    source = Path(args.import_file)
    try:
        header = import_history(load_target(args.target), source, Path(args.out),
                                questions_file=Path(args.questions) if args.questions else None, sample=args.sample,
                                seed=args.seed, embedders=args.embedders.split(","), threshold=args.threshold,
                                k=args.k, description=args.description or f"imported from {source.name}",
                                progress=lambda what: print(f"  {time.perf_counter() - started:5.1f} s  {what}"))
        sum(1 for _ in read_history(args.out))  # what we write must be what we can read
    except (MalformedSnapshot, OSError, TargetError, ToolFailed) as e:
        raise SystemExit(f"make_snapshot: {e}") from None
    print(f"wrote {args.out} ({header.memories} memories of {header.owners} owners, {header.probes} probes) in "
          f"{time.perf_counter() - started:.1f} s")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--name", default="household")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--per-owner", type=int, default=24)
    ap.add_argument("--embedders", default="hash-ngram-v1,hash-ngram-v2")
    ap.add_argument("--threshold", type=float, help="the similarity below which nothing is recalled (default: the "
                                                   "target's [recall] threshold)")
    ap.add_argument("--k", type=int, help="memories recalled per question (default: the target's [recall] top_k)")
    ap.add_argument("--memories", type=int,
                    help=f"format 2: this many memories (+3), {MIN_MEMORIES} to {MAX_MEMORIES}")
    ap.add_argument("--out", help="format 2: where to write (.jsonl, or .jsonl.gz for gzip)")
    ap.add_argument("--target", default=None, help="the app whose embed tool makes the vectors (default: reference)")
    ap.add_argument("--check", action="store_true", help="format 2: read the written file back and validate it")
    ap.add_argument("--import", dest="import_file", metavar="MEMORIES",
                    help="format 2 from outside data: a JSON Lines file of memories (snapshots/README.md)")
    ap.add_argument("--questions", help="with --import: JSON Lines of {owner, query[, evidence]}; else sampled")
    ap.add_argument("--sample", type=int, default=40, help="with --import and no --questions: how many to sample")
    ap.add_argument("--description", help="with --import: the snapshot's description")
    args = ap.parse_args()
    try:
        recall = load_target(args.target).recall
    except TargetError as e:
        raise SystemExit(f"make_snapshot: {e}") from None
    args.threshold = recall.threshold if args.threshold is None else args.threshold
    args.k = recall.top_k if args.k is None else args.k
    if args.import_file is not None:
        return import_outside(args)
    if args.memories is not None:
        return write_history(args)

    fake = Faker("en_US")
    fake.seed_instance(args.seed)
    memories: list[dict[str, str]] = []
    probes: list[dict[str, Any]] = []
    for owner in OWNERS:
        for i, (key, value) in enumerate(FACTS[: args.per_owner]):
            memories.append({"id": f"{owner}-{i:03d}", "owner": owner, "text": f"My {key} is {value(fake)}.",
                             "created_at": fake.date_time_between(_DECADE_FROM, _DECADE_TO).isoformat() + "+00:00"})
        for key, _ in fake.random_sample(FACTS[: args.per_owner], length=6):
            probes.append({"owner": owner, "query": f"What is my {key}?"})
        probes.append({"owner": owner, "query": "Which city do I live in, my home city?"})
    target = load_target(args.target)
    for embedder in args.embedders.split(","):
        texts = [m["text"] for m in memories] + [p["query"] for p in probes]
        vectors = embed_texts(target, texts, embedder)
        rows = dict(zip([m["id"] for m in memories], vectors[: len(memories)], strict=True))
        for probe, qvec in zip(probes, vectors[len(memories):], strict=True):
            if qvec is None:
                raise SystemExit(f"make_snapshot: the {embedder} embedder gives no vector for {probe['query']!r}")
            own = {m["id"]: v for m in memories if m["owner"] == probe["owner"] and (v := rows[m["id"]]) is not None}
            hits = brute_force(own, qvec, args.k, args.threshold)
            probe.setdefault("expected", {})[embedder] = [{"id": h.id, "score": round(h.score, 5)} for h in hits]
    snapshot = {"format": FORMAT, "description": f"{len(OWNERS)} households' facts, faker seed {args.seed}",
                "legacy_embedder": args.embedders.split(",")[0], "threshold": args.threshold, "k": args.k,
                "owners": OWNERS, "memories": memories, "probes": probes}
    path = SNAPSHOT_DIR / f"{args.name}.json"
    path.write_text(json.dumps(snapshot, indent=1) + "\n", encoding="utf-8")
    load_snapshot(path)  # what we write must be what we can read
    print(f"wrote {path} ({len(memories)} memories, {len(probes)} probes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
