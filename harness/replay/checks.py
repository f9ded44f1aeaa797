"""The replay's two checks, and the figures a team reads after every change of its memory store.

Memory by memory: every memory's row is there, with its owner and text unchanged, and the store's own similarity
query ranks it first for its own text (set-based, through the driver). What is a property of the data is told apart
from what was lost: a memory whose text equals another of its owner's ties with it at the top and counts as
recalled; a memory with no content words has no vector in any version of the store and is checked for owner and text
only; a memory past its expiry is not expected to be recalled.

Field by field: each memory's conversation, creation and expiry times, as far as the app keeps each field (the
driver's kept_fields); a field the app does not keep is reported as not applicable, never as passed. A difference is
named per memory and counted per field. A creation time is compared exactly (to the microsecond) with the UTC time the
history says it means, never with what the app read back; where the legacy store wrote it otherwise (local time, an
offset), the difference names that too.

Probe by probe: every golden question through the app's search API, compared with the snapshot's expectation (ids in
order, scores within the tolerance, ties in either order), summarised as recall@k, nDCG@k, empty results, unexpected
ids, rank moves and score deltas, with the worst probes as a table.
"""

from __future__ import annotations

import csv
import io
import math
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from harness.app.app_handle import AppHandle
from harness.drivers.base import MEMORY_FIELDS, Account, OwnTextQuery, OwnTextRecall, OwnTextResult
from harness.replay.history import ReplayHistory
from harness.vocabulary.recall import SCORE_TOLERANCE, Hit, RecallComparison, as_text

TIE = 1e-6  # identical vectors score identically in any store: a tie at the top is this close


# -- memory by memory --------------------------------------------------------------------------------------------------

LOST = ("missing", "owner changed", "text changed", "no vector", "unreachable", "outranked")
DATA = ("tied with an identical text", "cannot be embedded", "expired")


@dataclass
class MemoryCheck:
    checked: int = 0
    recalled: int = 0
    verdicts: Counter = field(default_factory=Counter)
    lost: list[str] = field(default_factory=list)  # one line per lost memory: id, text, what happened
    kept_fields: tuple[str, ...] = ()  # compared, of MEMORY_FIELDS; the others the app does not keep
    field_changes: Counter = field(default_factory=Counter)  # per field, how many memories differ in it
    changed: list[str] = field(default_factory=list)  # one line per memory with a field changed: which, from, to

    @property
    def ok(self) -> bool:
        return not self.lost

    def summary(self) -> str:
        data = ", ".join(f"{self.verdicts[v]} {v}" for v in DATA if self.verdicts[v]) or "none"
        lost = ", ".join(f"{self.verdicts[v]} {v}" for v in LOST if self.verdicts[v]) or "none"
        return (f"memories checked: {self.checked:,}; recalled by their own text: {self.recalled:,}; "
                f"properties of the data (not failures): {data}; LOST: {lost}\n{self.fields_summary()}")

    def fields_summary(self) -> str:
        compared = ", ".join(f"{name} {self.field_changes[name]:,} changed" for name in self.kept_fields)
        absent = [name for name in MEMORY_FIELDS if name not in self.kept_fields]
        return (f"fields of the memories found: {compared or 'none compared'}"
                + (f"; not applicable (the app does not keep them): {', '.join(absent)}" if absent else ""))


def _verdict(result: OwnTextResult | None, run_owner: str, text: str, embeddable: bool,
             expired: bool) -> str:
    if result is None or result.owner_id is None:
        return "missing"
    if result.owner_id != run_owner:
        return "owner changed"
    if result.text != text:
        return "text changed"
    if not embeddable:
        return "cannot be embedded"
    if expired:
        return "expired"
    if not result.has_vector:
        return "no vector"
    if result.own_score is None:
        return "unreachable"
    other = result.best_other_score
    if other is not None and result.own_score < other - TIE:
        return "outranked"
    return "tied with an identical text" if other is not None and abs(other - result.own_score) <= TIE else "recalled"


def _expired(when: str | None, now: datetime) -> bool:
    return when is not None and datetime.fromisoformat(when) <= now


def query_vectors(app: AppHandle, history: ReplayHistory, embedder: str) -> Sequence[bytes | None]:
    """Each memory's own text as the app's current model embeds it: the snapshot's vectors when they are that
    model's, else the app's own embedder."""
    if embedder == history.header.legacy_embedder and all(
            v is not None or not e for v, e in zip(history.vectors, history.embeddable, strict=True)):
        return history.vectors
    return app.embed(history.texts, embedder)


def same_time(before: str | None, after: str | None, resolution_s: float = 0.0) -> bool:
    """The same time, as far as the app's timestamps can tell (an app that keeps whole seconds keeps 12:00:00.6 as
    12:00:00): a wrong conversion moves a time by hours, never by less than the resolution."""
    if before == after:  # the same text is the same time; only different texts need parsing
        return True
    if before is None or after is None:
        return False
    first, second = datetime.fromisoformat(before), datetime.fromisoformat(after)
    if (first.tzinfo is None) != (second.tzinfo is None):  # a zone lost (or made up) is a changed time, not a crash
        return False
    apart = abs((first - second).total_seconds())
    return apart < resolution_s if resolution_s else apart == 0


def _field_changes(history: ReplayHistory, i: int, stored: dict[str, str | None], kept: tuple[str, ...],
                   resolution_s: float = 0.0) -> list[tuple[str, str | None, str | None]]:
    """(field, before, after) for each kept field of memory `i` that the store holds otherwise."""
    changes = []
    for name in kept:
        now = stored.get(name) or None
        if name == "conversation":  # told in the snapshot's own ids
            if history.conversation_id(history.conversations[i]) != now:
                changes.append((name, history.conversations[i], now and history.snapshot_id(now)))
        else:
            before = history.created_at[i] if name == "created_at" else history.expires_at[i]
            if not same_time(before, now, resolution_s):
                changes.append((name, before, now))
    return changes


def _as_written(history: ReplayHistory, i: int, name: str) -> str:
    """How the legacy store wrote a creation time it wrote otherwise than in UTC, and in which zone if naive."""
    written = history.legacy_created_at[i] if name == "created_at" and i < len(history.legacy_created_at) else None
    if written is None:
        return ""
    naive = datetime.fromisoformat(written).tzinfo is None
    return f" (the legacy store wrote {written!r}" + (f", local time in {history.header.legacy_timezone})"
                                                        if naive else ")")


def check_memories(app: AppHandle, history: ReplayHistory, vectors: Sequence[bytes | None]) -> MemoryCheck:
    app_ids = [history.memory_id(mid) for mid in history.ids]
    user_ids = {owner: history.user_id(owner) for owner in set(history.owners)}
    queries = [OwnTextQuery(app_id, user_ids[owner], vec, text)
               for app_id, owner, vec, text in zip(app_ids, history.owners, vectors, history.texts, strict=True)]
    found = {r.memory_id: r for r in app.part(OwnTextRecall).recall_by_own_text(app.running, queries)}
    del queries
    now = datetime.now(UTC)
    kept = tuple(f for f in MEMORY_FIELDS if f in app.driver.kept_fields)
    check = MemoryCheck(checked=history.size, kept_fields=kept)
    for i, mid in enumerate(history.ids):
        result = found.get(app_ids[i])
        verdict = _verdict(result, user_ids[history.owners[i]], history.texts[i], history.embeddable[i],
                           _expired(history.expires_at[i], now))
        if result is not None and verdict not in ("missing", "owner changed"):
            changes = _field_changes(history, i, result.fields, kept, app.target.limits.clock_resolution_s)
            if changes:
                check.field_changes.update(name for name, _, _ in changes)
                check.changed.append(f"  {mid} of {history.owners[i]} {history.texts[i][:60]!r}: " + "; ".join(
                    f"{name} was {was!r}{_as_written(history, i, name)}, now {now_!r}" for name, was, now_ in changes))
        check.verdicts[verdict] += 1
        if verdict in ("recalled", "tied with an identical text"):
            check.recalled += 1
        elif verdict in LOST:
            detail = ""
            if verdict == "outranked" and result is not None:
                detail = (f": {history.snapshot_id(result.best_other_id or '?')} scores "
                          f"{result.best_other_score:.4f}, its own text {result.own_score:.4f}")
            elif verdict == "owner changed" and result is not None:
                detail = f": now {result.owner_id}"
            check.lost.append(f"  {mid} of {history.owners[i]} {history.texts[i][:60]!r}: {verdict}{detail}")
    return check


# -- probe by probe ----------------------------------------------------------------------------------------------------

@dataclass
class ProbeOutcome:
    comparison: RecallComparison
    k: int

    @property
    def expected_ids(self) -> list[str]:
        return [h.id for h in self.comparison.expected]

    @property
    def recall(self) -> float | None:
        expected = set(self.expected_ids)
        if not expected:
            return None
        if self.comparison.matches:
            return 1.0  # a tie beyond k in the place of the k-th is as good
        return len(expected & {h.id for h in self.comparison.actual}) / len(expected)

    @property
    def ndcg(self) -> float | None:
        """Graded by the expected rank (the first expected memory counts most)."""
        gain = {h.id: len(self.expected_ids) - r for r, h in enumerate(self.comparison.expected)}
        if not gain:
            return None
        if self.comparison.matches:
            return 1.0
        dcg = sum(gain.get(h.id, 0) / math.log2(r + 2) for r, h in enumerate(self.comparison.actual[:self.k]))
        ideal = sum(g / math.log2(r + 2) for r, g in enumerate(sorted(gain.values(), reverse=True)))
        return dcg / ideal

    def faults(self) -> Counter:
        c = self.comparison
        if c.matches:
            return Counter()
        expected, actual = {h.id: r for r, h in enumerate(c.expected)}, {h.id: r for r, h in enumerate(c.actual)}
        out: Counter = Counter()
        out["missing ids"] = len(set(expected) - set(actual))
        out["unexpected ids"] = len(set(actual) - set(expected))
        out["rank moves"] = sum(1 for i in set(expected) & set(actual)
                                if expected[i] != actual[i] and not self._tied(i))
        scores = {h.id: h.score for h in c.expected}
        out["score deltas"] = sum(1 for h in c.actual if h.id in scores and abs(h.score - scores[h.id]) > c.tolerance)
        out["empty results"] = int(bool(expected) and not actual)
        return out

    def _tied(self, mid: str) -> bool:
        score = next(h.score for h in self.comparison.expected if h.id == mid)
        return sum(1 for h in self.comparison.expected if abs(h.score - score) <= self.comparison.tolerance) > 1


@dataclass
class ProbeCheck:
    outcomes: list[ProbeOutcome]

    @property
    def failing(self) -> list[ProbeOutcome]:
        return [o for o in self.outcomes if not o.comparison.matches]

    def figures(self) -> dict[str, float | int]:
        recalls = [r for o in self.outcomes if (r := o.recall) is not None]
        ndcgs = [n for o in self.outcomes if (n := o.ndcg) is not None]
        faults = sum((o.faults() for o in self.outcomes), Counter())
        k = self.outcomes[0].k if self.outcomes else 0
        return {"probes": len(self.outcomes),
                "expecting nothing (they check that nothing is recalled)": sum(
                    1 for o in self.outcomes if not o.comparison.expected),
                "differing": len(self.failing),
                f"recall@{k}": round(sum(recalls) / len(recalls), 4) if recalls else 1.0,
                f"nDCG@{k}": round(sum(ndcgs) / len(ndcgs), 4) if ndcgs else 1.0,
                **{name: faults[name] for name in ("empty results", "missing ids", "unexpected ids", "rank moves",
                                                   "score deltas")}}

    def summary(self) -> str:
        return "probes: " + ", ".join(f"{name} {value}" for name, value in self.figures().items())

    def worst(self, limit: int = 20) -> list[ProbeOutcome]:
        return sorted(self.failing, key=lambda o: (o.recall if o.recall is not None else 1.0,
                                                   o.ndcg if o.ndcg is not None else 1.0))[:limit]

    def worst_as_csv(self) -> str:
        buf = io.StringIO()
        writer = csv.writer(buf)
        writer.writerow(["owner", "query", f"recall@{self.outcomes[0].k if self.outcomes else 0}", "nDCG",
                         *RecallComparison.HEADER])
        for o in self.worst():
            recall, ndcg = (1.0 if v is None else v for v in (o.recall, o.ndcg))
            for row in o.comparison.rows():
                writer.writerow([o.comparison.owner, o.comparison.query, f"{recall:.2f}", f"{ndcg:.2f}", *row])
        return buf.getvalue()

    def worst_as_text(self) -> str:
        return as_text([o.comparison for o in self.worst()])


def check_probes(app: AppHandle, history: ReplayHistory, accounts: dict[str, Account], embedder: str,
                 k: int) -> ProbeCheck:
    """Every probe through the app's search API, each owner's on one session, four owners at a time."""
    by_owner: dict[str, list[int]] = {}
    for n, probe in enumerate(history.probes):
        by_owner.setdefault(probe.owner, []).append(n)
    outcomes: list[ProbeOutcome | None] = [None] * len(history.probes)

    def ask(owner: str) -> None:
        session = app.session(accounts[owner])
        try:
            for n in by_owner[owner]:
                probe = history.probes[n]
                expected = [Hit(history.memory_id(h.id), h.score) for h in probe.expected.get(embedder, [])]
                tied = [Hit(history.memory_id(h.id), h.score) for h in probe.tied_beyond_k.get(embedder, [])]
                actual = [Hit(h.id, h.score) for h in session.search(probe.query, k=probe.k)]
                outcomes[n] = ProbeOutcome(RecallComparison(probe.query, owner, expected, actual,
                                                            tolerance=SCORE_TOLERANCE,
                                                            candidates=expected + tied), k)
        finally:
            session.close()

    missing = [p for p in history.probes if embedder not in p.expected]
    if missing:
        raise AssertionError(f"the snapshot has no expectations for the {embedder} embedding model (e.g. "
                             f"{missing[0].owner} asking {missing[0].query!r}); regenerate it with that model")
    with ThreadPoolExecutor(4) as pool:
        list(pool.map(ask, by_owner))
    return ProbeCheck([o for o in outcomes if o is not None])


@dataclass
class ReplayChecks:
    """Both checks of one replay, and the figures a report shows whether they pass or fail."""

    memories: MemoryCheck
    probes: ProbeCheck
    listing: Path | None = None  # every lost and every changed memory, one per line, where the figures say

    def figures(self) -> str:
        return f"{self.memories.summary()}\n{self.probes.summary()}"

    def lost_memories(self, limit: int = 15) -> str:
        return self._named(self.memories.lost, "are lost (a property of the data is never counted here)", limit)

    def changed_memories(self, limit: int = 15) -> str:
        return self._named(self.memories.changed, "have a field changed", limit)

    def _named(self, lines: list[str], what: str, limit: int) -> str:
        where = f"; every one in {self.listing}" if self.listing is not None else ""
        more = f"\n  ... and {len(lines) - limit} more{where}" if len(lines) > limit else ""
        return f"{len(lines)} of {self.memories.checked:,} memories {what}:\n" + "\n".join(lines[:limit]) + more

    def write_listing(self, path: Path) -> None:
        """Every lost and every changed memory to `path`, which the messages then name."""
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"{self.figures()}\n\nlost ({len(self.memories.lost)}):\n" + "\n".join(self.memories.lost)
                        + f"\n\nchanged ({len(self.memories.changed)}):\n" + "\n".join(self.memories.changed)
                        + "\n", encoding="utf-8")
        self.listing = path

    def leaks(self, history: ReplayHistory) -> list[str]:
        """Hits of a probe that belong to another owner (or to nobody in the snapshot)."""
        owner_of = {history.memory_id(mid): owner for mid, owner in zip(history.ids, history.owners, strict=True)}
        return [f"  {o.comparison.owner} asked {o.comparison.query!r} and got {h.id} "
                f"({'of ' + owner_of[h.id] if h.id in owner_of else 'not in the snapshot'})"
                for o in self.probes.outcomes for h in o.comparison.actual if owner_of.get(h.id) != o.comparison.owner]
