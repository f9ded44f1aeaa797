"""A cosmic-ray session as the suite's mutation run needs it, through cosmic-ray's own WorkDB (in its environment):

    memtest-cr-session list SESSION            every mutation of the session, as JSON lines
    memtest-cr-session keep SESSION IDS.json   mark every job not in the list skipped (cosmic-ray exec runs the rest)
    memtest-cr-session results SESSION         every job that ran: its outcome and diff, as JSON lines
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from cosmic_ray.work_db import WorkDB, use_db
from cosmic_ray.work_item import WorkerOutcome, WorkResult


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) < 2 or args[0] not in ("list", "keep", "results") or (args[0] == "keep") != (len(args) == 3):
        print(__doc__, file=sys.stderr)
        return 2
    command, session = args[0], args[1]
    with use_db(session, WorkDB.Mode.open) as db:
        if command == "list":
            for item in db.work_items:
                for m in item.mutations:
                    print(json.dumps({"job": item.job_id, "module": str(m.module_path), "operator": m.operator_name,
                                      "occurrence": m.occurrence, "start": list(m.start_pos),
                                      "end": list(m.end_pos), "definition": m.definition_name}))
        elif command == "keep":
            kept = set(json.loads(Path(args[2]).read_text(encoding="utf-8")))
            skipped = [item.job_id for item in db.work_items if item.job_id not in kept]
            db.set_multiple_results(skipped, WorkResult(worker_outcome=WorkerOutcome.SKIPPED))
        else:
            for job, result in db.results:
                if result.worker_outcome == WorkerOutcome.SKIPPED:
                    continue
                print(json.dumps({"job": job, "worker": str(result.worker_outcome),
                                  "test": str(result.test_outcome) if result.test_outcome else None,
                                  "diff": result.diff or "", "output": (result.output or "")[-2000:]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
