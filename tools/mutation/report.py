"""reports/mutation.json and reports/mutation.md: what each drawn mutant came to, both scores, every survivor with its
diff, module and line, and every error with its cause."""

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
    cause: str = ""  # an error's kind (tools.mutation.mutant_test's NO_START, TIMED_OUT, ...); "" for the others

    def as_json(self) -> dict:
        m = self.mutant
        cause = {"cause": self.cause} if self.status == "error" else {}
        return {"id": m.id, "tool": m.tool, "module": m.module, "line": m.line, "operator": m.operator,
                "column": m.column, "replacement": m.replacement, "source": m.source, "diff": self.diff,
                "status": self.status, "reason": self.reason, **cause}


@dataclass(frozen=True)
class Score:
    counts: Counter

    @property
    def judged(self) -> int:
        """The mutants a run judged: killed or survived. Errors (a mutant cosmic-ray made invalid Python of, a
        timeout, pytest exiting 2-5, an app that started neither with the mutant nor without it) are listed apart
        with their causes: neither a failing scenario nor a passing run says what the suite saw."""
        return self.counts["killed"] + self.counts["survived"]

    @property
    def percent(self) -> float:
        """The score MIN_SCORE gates: killed over the non-equivalent mutants that are not errors."""
        return 100.0 * self.counts["killed"] / self.judged if self.judged else 100.0

    @property
    def raw_percent(self) -> float:
        """Killed over every mutant that is not an error, the equivalents among them: what the score would be had
        nobody judged any mutant equivalent."""
        total = self.judged + self.counts["equivalent"]
        return 100.0 * self.counts["killed"] / total if total else 100.0

    @property
    def summary(self) -> str:
        return (f"{self.counts['killed']} of {self.judged} non-equivalent mutants killed ({self.percent:.1f} %; "
                f"{self.raw_percent:.1f} % raw, of the {self.judged + self.counts['equivalent']} with the "
                f"equivalents); {self.counts['survived']} survived, {self.counts['equivalent']} equivalent, and apart "
                f"{self.counts['error']} errors")


def write_reports(reports: Path, sample: int, seed: str, seconds: float, outcomes: list[Outcome]) -> Score:
    score = Score(Counter(o.status for o in outcomes))
    reports.mkdir(parents=True, exist_ok=True)
    errors = [o for o in outcomes if o.status == "error"]
    data = {"sample": sample, "seed": seed, "seconds": seconds,
            "score": round(score.percent, 1), "score_raw": round(score.raw_percent, 1),
            **{status: score.counts[status] for status in ("killed", "survived", "equivalent")},
            "errors": score.counts["error"],
            "error_causes": dict(Counter(o.cause for o in errors)),
            "errors_listed": [{"id": o.mutant.id, "module": o.mutant.module, "line": o.mutant.line,
                               "operator": o.mutant.operator, "cause": o.cause, "reason": o.reason} for o in errors],
            "mutants": [o.as_json() for o in outcomes]}
    (reports / "mutation.json").write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    (reports / "mutation.md").write_text(markdown(data, score, outcomes), encoding="utf-8")
    return score


def markdown(data: dict, score: Score, outcomes: list[Outcome]) -> str:
    tools = Counter(o.mutant.tool for o in outcomes)
    lines = [f"# Mutation testing of the reference app: {score.percent:.1f} % killed ({score.raw_percent:.1f} % raw)",
             "",
             f"Sample of {data['sample']} mutants (seed `{data['seed']}`: "
             f"{', '.join(f'{n} by {t}' for t, n in sorted(tools.items()))}) in {data['seconds'] / 60:.1f} minutes: "
             f"{score.summary}.", "",
             "The score is killed over the non-equivalent mutants that are not errors (what MIN_SCORE gates); the raw "
             "score, killed over every mutant that is not an error.", "",
             "| status | tool | module | line | column | operator | replacement | scenario or reason |",
             "|---|---|---|---|---|---|---|---|"]
    for o in outcomes:
        m = o.mutant
        status = f"error ({o.cause})" if o.status == "error" else o.status
        lines.append(f"| {status} | {m.tool} | {m.module} | {m.line} | {m.column} | {m.operator} | "
                     f"`{_cell(m.replacement)[:60]}` | {_cell(o.reason)[:160]} |")
    for title, status in (("Survivors", "survived"), ("Errors", "error")):
        chosen = [o for o in outcomes if o.status == status]
        if not chosen:
            continue
        lines += ["", f"## {title}", ""]
        for o in chosen:
            m = o.mutant
            lines += [f"### {m.module}:{m.line}:{m.column} ({m.operator})", "",
                      *([f"Cause: {o.cause}.", ""] if status == "error" else []), o.reason, "",
                      "```diff", o.diff.rstrip(), "```", ""]
            if status == "survived":  # only where no user or operator could ever tell it from the original
                lines += ["Named exactly, as an entry of mutation-equivalents.toml names it:", "",
                          "```toml", *entry_lines(m), "```", ""]
    return "\n".join(lines).rstrip() + "\n"


def entry_lines(m: Mutant) -> list[str]:
    """The mutant named exactly, as mutation-equivalents.toml names it (TOML strings as JSON writes them)."""
    return ["[[equivalent]]", f"module = {json.dumps(m.module)}", f"line = {m.line}",
            f"operator = {json.dumps(m.operator)}", f"column = {m.column}",
            f"replacement = {json.dumps(m.replacement, ensure_ascii=False)}",
            f"source = {json.dumps(m.source, ensure_ascii=False)}", 'reason = "..."']


def _cell(text: str) -> str:
    return text.replace("|", "/").replace("\n", " ")
