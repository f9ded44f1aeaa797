"""Steps of replay_through_changes.feature about the index kinds an app declares ([index_kinds]: the settings that
make every owner's search go through each kind): that the golden questions, compared by the replay with what a full
scan ranks, really were searched through the index the app was given, proven by the index's own scan counter in the
app's database (whatever SQL the app runs: an EXPLAIN of a query the suite guessed would not prove it); and that its
store holds the vector index the app promises for that kind (lists_and_limits.feature's searches too)."""

from __future__ import annotations

import pytest
from pytest_bdd import then

from harness.app.index_use import index_method, promise_broken, scans_during
from harness.drivers.base import Capability, StoreReads
from harness.replay.checks import ReplayChecks
from harness.replay.run import HeldHistory, IndexKind
from steps.world import World


@then('every golden question was searched through the "<index kind>" index')
def searched_through_index(world: World, index_kind: IndexKind, history: HeldHistory, replay: ReplayChecks) -> None:
    """The app's own index-scan counter shows that the golden questions went through that index kind, and its store
    has vector indexes of that kind only (an index of another kind, built after the change, serves no search and
    costs every write and the build's time).

    The golden questions that recalled something are asked once more, as their owners, and the app's database must
    count at least as many scans of its indexes of that kind meanwhile; a kind without an index must leave the app
    none. The app (the scenario's own) is stopped before the count is read, so that its connections report what they
    did now, not when they next go idle: this step comes last."""
    app = world.app
    app.require(Capability.DATABASE_ACCESS)
    method = index_method(index_kind)
    indexes = app.part(StoreReads).vector_index_scans(app.running)
    others = {name: index.method for name, index in indexes.items() if index.method != method}
    assert not others, (f"the app was given {index_kind.name!r} ({method or 'no vector index'}), and its store has "
                        f"vector indexes of another kind after the change: {others}")
    if method is None:
        return
    by_owner: dict[str, list[str]] = {}
    for outcome in replay.probes.outcomes:
        if outcome.comparison.actual:  # a question that recalled something was searched
            by_owner.setdefault(outcome.comparison.owner, []).append(outcome.comparison.query)

    def ask() -> int:
        asked = 0
        for owner, questions in by_owner.items():
            session = app.session(history.accounts[owner])
            try:
                for question in questions:
                    session.search(question, k=app.recall_k)
                    asked += 1
            finally:
                session.close()
        return asked

    if not by_owner:
        pytest.fail("no golden question recalled anything: nothing shows which index the searches went through")
    used, asked = scans_during(app, method, ask, f"{index_kind.name} index scans")
    assert used >= asked, (f"the {index_kind.name} index was scanned {used} times for {asked} golden questions that "
                           "recalled something: not every search went through it, so the replay did not test it")


@then('the app\'s store holds the vector index the app promises for the "<index kind>" index, and it is valid')
def promised_index(world: World, index_kind: IndexKind) -> None:
    """The vector indexes of the app's store are those the app promises for that index kind and the memories it
    holds: each there, of its kind, usable by queries (valid), with the build options the app promises, and none
    besides."""
    wrong = promise_broken(world.app)
    assert not wrong, (f"the app's store does not hold the vector index the app promises for {index_kind.name!r}:\n"
                       + "\n".join(wrong))
