"""A fact told while the app's store is busy for a few seconds, as an operator's index build makes it busy (the table
of its memories held: reads go on, every write waits): the turn is answered, and its memory, written while the table
was held, is kept once the table is free again, never lost for having waited. A way of telling: drawn once a session
in the place of a tell (moves/tell.py), for a user whose memory is on, where the suite reaches the app's database and
the target names the table of its memories ([app] memory_table)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from harness.sessions.actions import quoted
from harness.sessions.draws import Draws
from harness.sessions.moves.tell import Tell, WayOfTelling, WayOfTellingRule
from harness.sessions.rules import Difference, Kind
from harness.suite import report

if TYPE_CHECKING:
    from harness.sessions.model import SessionModel
    from harness.sessions.runner import SessionRunner

KIND = "tell while the store is busy"
BUSY_S = 3.0  # how long a write waits on the held table before it is let go (an index build of a few thousand rows)


@dataclass(frozen=True)
class BusyTell(WayOfTelling):
    way = KIND

    def gherkin(self) -> str:
        return (f"When {self.user} tells the assistant {quoted(self.message)} while the app's store is busy for a few "
                "seconds")


class BusyTellRule(WayOfTellingRule):
    """A fact told while the table of the app's memories is held: answered, and kept once it is free; everything of
    hers read right after."""

    action = BusyTell
    kinds = (Kind(KIND, variant_of="tell"),)

    def precondition(self, kind: str, model: SessionModel, name: str, draws: Draws) -> bool:
        return model.memory_on(name)  # a memory to write while the store is busy

    def perform(self, runner: SessionRunner, number: int, action: Tell) -> Difference | None:
        """The turn told and answered while the table is held, which stays held until a write has waited BUSY_S on
        it; then, the table free, her state: what she told among her memories, as the model says."""
        with runner.app.memories_busy(BUSY_S) as busy:
            difference = super().perform(runner, number, action)
        report.attach_text(f"the store busy, action {number}",
                           f"the table {busy.table} held {busy.held_s:.1f} s; " + (
                               f"a write waited on it, then went on after {BUSY_S:g} s" if busy.write_waited else
                               "no write waited on it"))
        if difference is None and not busy.write_waited:  # else the move decided nothing: the memory went elsewhere
            return Difference(number, action, f"{action.user}'s memory write while the store was busy",
                              f"a write to the table {busy.table} ([app] memory_table), waiting on it",
                              f"none within {busy.held_s:.1f} s")
        return difference or runner.check_user(number, action, action.user)


RULE = BusyTellRule()
