"""A cosmic-ray session as the suite's mutation run needs it, through cosmic-ray's own WorkDB (in its environment):

    memtest-cr-session list SESSION            every mutation of the session, as JSON lines
    memtest-cr-session keep SESSION IDS.json   mark every job not in the list skipped (cosmic-ray exec runs the rest)
    memtest-cr-session results SESSION         every job that ran: its outcome and diff, as JSON lines
    memtest-cr-session replacements SESSION IDS.json
                                               each listed job's replacement: the text its mutation writes in place of
                                               the code it changes (stripped; "" where cosmic-ray cannot make it), as
                                               JSON lines; about 20 ms a job (it mutates the module as cosmic-ray does)
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import cosmic_ray.plugins
from cosmic_ray.mutating import mutate_code
from cosmic_ray.work_db import WorkDB, use_db
from cosmic_ray.work_item import MutationSpec, WorkerOutcome, WorkResult

COMMANDS = {"list": 2, "keep": 3, "results": 2, "replacements": 3}  # how many arguments each takes


def replacement(source: str, mutation: MutationSpec) -> str:
    """What the mutation writes in place of the code from its start to its end (what its diff shows replaced),
    stripped of the spacing cosmic-ray adds or drops around it; "" where cosmic-ray cannot make it (its
    ExceptionReplacer on a dotted name raises)."""
    arguments = getattr(mutation, "operator_args", None) or {}
    operator = cosmic_ray.plugins.get_operator(mutation.operator_name)(**arguments)
    try:
        mutated = mutate_code(source, operator, mutation.occurrence)
    except Exception:  # noqa: BLE001 - cosmic-ray's own operators fail on code they cannot mutate
        return ""
    if mutated is None:
        return ""
    lines = source.splitlines(keepends=True)

    def offset(position: tuple[int, int]) -> int:
        return sum(len(line) for line in lines[:position[0] - 1]) + position[1]

    start, end = offset(mutation.start_pos), offset(mutation.end_pos)
    return mutated[start:len(mutated) - (len(source) - end)].strip()


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args or COMMANDS.get(args[0]) != len(args):
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
        elif command == "replacements":
            wanted = set(json.loads(Path(args[2]).read_text(encoding="utf-8")))
            sources: dict[Path, str] = {}
            for item in db.work_items:
                if item.job_id in wanted:
                    for m in item.mutations:
                        path = Path(m.module_path)
                        source = sources.setdefault(path, path.read_text(encoding="utf-8"))
                        print(json.dumps({"job": item.job_id, "replacement": replacement(source, m)}))
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
