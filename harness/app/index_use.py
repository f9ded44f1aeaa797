"""The vector index an app's searches go through: whether its store holds the indexes the app promises for its
settings and its volume (built, usable, with the options promised), and whether a set of searches really went
through an index of the kind it was given, proven by the indexes' own scan counters in its database (whatever SQL the
app runs: an EXPLAIN of a query the suite guessed would not prove it)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from harness.app.app_handle import AppHandle
from harness.drivers.base import Capability, IndexPromises, PromisedIndex, StoreReads, UserSession
from harness.replay.run import IndexKind
from harness.services.databases import VectorIndex
from harness.suite import report
from harness.vocabulary.polling import Timeout, wait_until
from harness.vocabulary.recall import SCORE_TOLERANCE, Hit, RecallComparison

# The vector index kinds pgvector offers, as PostgreSQL names their access methods: a kind whose settings name none
# of them searches without a vector index.
VECTOR_ACCESS_METHODS = ("hnsw", "ivfflat")
# A server process reports its index scans when it goes idle, at most every 10 s (PostgreSQL 15+'s statistics), or
# when it ends: once the app has stopped, they come within moments.
STATS_FLUSH_S = 5


def index_method(index_kind: IndexKind) -> str | None:
    """The vector index kind an index kind's settings name (None: it searches without a vector index)."""
    return next((value for value in index_kind.settings.values() if value in VECTOR_ACCESS_METHODS), None)


def _words(text: str) -> str:
    """A condition as PostgreSQL prints it, without the spaces and brackets it may print otherwise."""
    return "".join(ch for ch in text if ch not in " ()")


def index_differences(promised: dict[str, PromisedIndex], held: dict[str, VectorIndex]) -> list[str]:
    """What the store's vector indexes lack or have besides what the app promises, one line each: an index missing or
    unasked for, of another kind, one queries may not use (a build that failed or never finished), another option
    than promised, another condition of a partial index."""
    wrong = [f"  {name}: missing ({index.method}{_described(index.options, index.predicate)})"
             for name, index in sorted(promised.items()) if name not in held]
    wrong += [f"  {name}: not promised ({index.method}{_described(index.options, index.predicate)})"
              for name, index in sorted(held.items()) if name not in promised]
    for name in sorted(set(promised) & set(held)):
        want, have = promised[name], held[name]
        if have.method != want.method:
            wrong.append(f"  {name}: {have.method}, where {want.method} is promised")
        if not have.valid:
            wrong.append(f"  {name}: not valid, so no query uses it (a build that failed or never finished)")
        for option, value in want.options:
            if have.option(option) != value:
                wrong.append(f"  {name}: {option} = {have.option(option)}, where {value} is promised")
        if _words(have.predicate) != _words(want.predicate):
            wrong.append(f"  {name}: built over {have.predicate or 'every row'!r}, where "
                         f"{want.predicate or 'every row'!r} is promised")
    return wrong


def promise_broken(app: AppHandle, given: Sequence[str] = ()) -> list[str]:
    """What the app's store lacks or has besides the vector indexes the app promises for its settings, the words
    `given` to its last bulk load's tool and the memories it holds (index_differences); nothing, reported as not
    checked, for a driver that knows no promise of its app's (INDEX_PROMISES)."""
    if not app.offers(Capability.INDEX_PROMISES):
        report.attach_text("not checked", f"the {app.name} driver knows no vector indexes its app promises")
        return []
    promised = app.part(IndexPromises).promised_vector_indexes(app.running, given)
    return index_differences(promised, app.part(StoreReads).vector_indexes(app.running))


def _described(options: tuple[tuple[str, str], ...], predicate: str) -> str:
    return "".join(f", {o} = {v}" for o, v in options) + (f", where {predicate}" if predicate else "")


def scans_during(app: AppHandle, method: str, searches: Callable[[], int], what: str) -> tuple[int, int]:
    """(scans of the app's `method` indexes, searches made) while `searches` runs (it returns how many searches it
    made). The app (the scenario's own) is stopped before the count is read, so that its connections report what
    they did now, not when they next go idle: a step that calls this comes last."""

    store = app.part(StoreReads)

    def scans() -> int:
        indexes = store.vector_index_scans(app.running).values()
        return sum(index.scans for index in indexes if index.method == method)

    before = scans()
    asked = searches()
    app.stop()
    try:
        total = wait_until(scans, lambda n: n - before >= asked, timeout=STATS_FLUSH_S, what=f"the {what} counted")
    except Timeout:
        total = scans()
    return total - before, asked


# Rows beyond the k-th read from the full scan: a row tied with the k-th may take its place (ties in either order).
TIES_READ = 50


@dataclass(frozen=True)
class Asked:
    """One question a user searched their memory for, and what the app returned."""

    owner: str  # as the scenario names the user
    owner_id: str  # the app's id of the user
    question: str
    returned: tuple[Hit, ...]


def asked(session: UserSession, owner: str, owner_id: str, questions: list[str], k: int) -> list[Asked]:
    """Each question searched by its owner (`session`) for k memories."""
    return [Asked(owner, owner_id, q, tuple(Hit(h.id, h.score) for h in session.search(q, k=k))) for q in questions]


def against_full_scan(app: AppHandle, searches: list[Asked], k: int,
                      vectors: list[bytes | None] | None = None) -> list[RecallComparison]:
    """What each search returned, compared with what a full scan of the owner's memories in the app's store ranks
    for its question (the store's own similarity over every memory, ties by id) above the app's threshold: the same
    memories, in order, with the same scores (rows tied within the tolerance in either order). `vectors`: the
    questions as the app embeds them, when the caller has them already."""
    vectors = vectors if vectors is not None else app.embed([s.question for s in searches])
    by_owner: dict[str, list[int]] = {}
    for n, search in enumerate(searches):
        by_owner.setdefault(search.owner_id, []).append(n)
    scanned: dict[int, list[Hit]] = {}
    store = app.part(StoreReads)
    for owner_id, numbers in by_owner.items():
        rankings = store.nearest(app.running, owner_id, [vectors[n] for n in numbers], k + TIES_READ)
        for n, ranking in zip(numbers, rankings, strict=True):
            scanned[n] = [Hit(h.id, h.score) for h in ranking if h.score >= app.threshold]
    return [RecallComparison(s.question, s.owner, scanned[n][:k], list(s.returned), tolerance=SCORE_TOLERANCE,
                             candidates=scanned[n]) for n, s in enumerate(searches)]
