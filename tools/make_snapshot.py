"""Generate a golden memory snapshot (format memory-snapshot/1, see snapshots/README.md).

The memories come from faker with a fixed seed; the expected recall of every probe is a brute-force cosine ranking
over the owner's memories, with vectors from the app's own `embed` tool, for every embedding model named. Review the
diff of a regenerated snapshot like code: a changed expectation is a changed behaviour.

    .venv/bin/python tools/make_snapshot.py --name household [--seed 7] [--per-owner 24]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from faker import Faker

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness.app_tools import embed_texts  # noqa: E402
from harness.recall import brute_force  # noqa: E402
from harness.snapshots import FORMAT, SNAPSHOT_DIR, load_snapshot  # noqa: E402
from harness.target import load_target  # noqa: E402

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
    ("anniversary", lambda f: f.date_this_century().strftime("%d %B")),
    ("passport number", lambda f: f.bothify("?########").upper()),
]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--name", default="household")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--per-owner", type=int, default=24)
    ap.add_argument("--embedders", default="hash-ngram-v1,hash-ngram-v2")
    ap.add_argument("--threshold", type=float, default=0.25)
    ap.add_argument("--k", type=int, default=5)
    args = ap.parse_args()

    fake = Faker("en_US")
    fake.seed_instance(args.seed)
    memories, probes = [], []
    for owner in OWNERS:
        for i, (key, value) in enumerate(FACTS[: args.per_owner]):
            memories.append({"id": f"{owner}-{i:03d}", "owner": owner, "text": f"My {key} is {value(fake)}.",
                             "created_at": fake.date_time_this_decade().isoformat() + "+00:00"})
        for key, _ in fake.random_sample(FACTS[: args.per_owner], length=6):
            probes.append({"owner": owner, "query": f"What is my {key}?"})
        probes.append({"owner": owner, "query": "Which city do I live in, my home city?"})
    target = load_target()
    for embedder in args.embedders.split(","):
        texts = [m["text"] for m in memories] + [p["query"] for p in probes]
        vectors = embed_texts(target, texts, embedder)
        rows = dict(zip([m["id"] for m in memories], vectors[: len(memories)], strict=True))
        for probe, qvec in zip(probes, vectors[len(memories):], strict=True):
            own = {m["id"]: rows[m["id"]] for m in memories if m["owner"] == probe["owner"]}
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
