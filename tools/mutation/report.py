"""reports/mutation.json and reports/mutation.md: what each drawn mutant came to, the score, and every survivor with
its diff, module and line."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from tools.mutation.population import Mutant


@dataclass(frozen=True)
class Outcome:
    mutant: Mutant
    status: str  # killed | survived | equivalent | error
    reason: str  # the failing scenario, the equivalence, or the error, in a line
    diff: str
    seconds: float = 0.0

    def as_json(self) -> dict:
        m = self.mutant
        return {"id": m.id, "tool": m.tool, "module": m.module, "line": m.line, "operator": m.operator,
                "diff": self.diff, "status": self.status, "reason": self.reason}


@dataclass(frozen=True)
class Score:
    counts: Counter

    @property
    def judged(self) -> int:
        """The mutants a run judged: killed or survived. Errors (an app that did not start, a timeout, pytest
        exiting 2-5) are reported apart: neither a failing scenario nor a passing run says what the suite saw."""
        return self.counts["killed"] + self.counts["survived"]

    @property
    def percent(self) -> float:
        return 100.0 * self.counts["killed"] / self.judged if self.judged else 100.0

    @property
    def summary(self) -> str:
        return (f"{self.counts['killed']} of {self.judged} non-equivalent mutants killed ({self.percent:.1f} %); "
                f"{self.counts['survived']} survived, {self.counts['equivalent']} equivalent, and apart "
                f"{self.counts['error']} errors")


def write_reports(reports: Path, sample: int, seed: str, seconds: float, outcomes: list[Outcome]) -> Score:
    score = Score(Counter(o.status for o in outcomes))
    reports.mkdir(parents=True, exist_ok=True)
    data = {"sample": sample, "seed": seed, "seconds": seconds,
            **{status: score.counts[status] for status in ("killed", "survived", "equivalent")},
            "errors": score.counts["error"], "mutants": [o.as_json() for o in outcomes]}
    (reports / "mutation.json").write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    (reports / "mutation.md").write_text(markdown(data, score, outcomes), encoding="utf-8")
    return score


def markdown(data: dict, score: Score, outcomes: list[Outcome]) -> str:
    tools = Counter(o.mutant.tool for o in outcomes)
    lines = [f"# Mutation testing of the reference app: {score.percent:.1f} % killed", "",
             f"Sample of {data['sample']} mutants (seed `{data['seed']}`: "
             f"{', '.join(f'{n} by {t}' for t, n in sorted(tools.items()))}) in {data['seconds'] / 60:.1f} minutes: "
             f"{score.summary}.", "",
             "| status | tool | module | line | operator | scenario or reason |", "|---|---|---|---|---|---|"]
    for o in outcomes:
        m = o.mutant
        lines.append(f"| {o.status} | {m.tool} | {m.module} | {m.line} | {m.operator} | "
                     f"{o.reason.replace('|', '/')[:160]} |")
    for title, status in (("Survivors", "survived"), ("Errors", "error")):
        chosen = [o for o in outcomes if o.status == status]
        if not chosen:
            continue
        lines += ["", f"## {title}", ""]
        for o in chosen:
            lines += [f"### {o.mutant.module}:{o.mutant.line} ({o.mutant.operator})", "", o.reason, "",
                      "```diff", o.diff.rstrip(), "```", ""]
    return "\n".join(lines).rstrip() + "\n"
