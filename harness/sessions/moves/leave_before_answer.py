"""A fact told and, before its answer shows (a slow model), a new conversation started, as a person who has moved on
does: the app gets the turn and answers it in the conversation it was sent in, what it told is remembered (a page
that writes a turn's memories finishes the turn before it moves on, or the app writes them on its own), and the new
conversation is open and empty. A page that moves at once drops the request on its way: the turn is never stored. A
way of telling: drawn once a session in the place of a tell (moves/tell.py), where the target can hold an answer
back."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from harness.sessions.actions import quoted
from harness.sessions.draws import Draws
from harness.sessions.moves.tell import Tell, WayOfTelling, WayOfTellingRule
from harness.sessions.rules import Difference, Kind

if TYPE_CHECKING:
    from harness.sessions.model import SessionModel
    from harness.sessions.runner import SessionRunner

KIND = "tell, then start a new conversation before the answer shows"


@dataclass(frozen=True)
class TellThenLeave(WayOfTelling):
    way = KIND

    def gherkin(self) -> str:
        return (f"When {self.user} tells the assistant {quoted(self.message)} and, before the answer shows, starts a "
                "new conversation")


class TellThenLeaveRule(WayOfTellingRule):
    """A fact told in the conversation open, then a new one started before its answer: told, remembered, and the
    new conversation open; everything of hers read right after."""

    action = TellThenLeave
    kinds = (Kind(KIND, variant_of="tell"),)

    def precondition(self, kind: str, model: SessionModel, name: str, draws: Draws) -> bool:
        return model.current(name) is not None  # a conversation to leave

    def apply(self, model: SessionModel, action: Tell) -> str:
        user = model.acting(action.user)
        reply = self.say(model, user, action)
        user.current = None
        return reply

    def perform(self, runner: SessionRunner, number: int, action: Tell) -> Difference | None:
        """The turn sent and the conversation left before its answer (never read on the page); then her state: the
        turn and its answer in the conversation she left, what it told among her memories, the new one open."""
        runner.applied(action)
        runner.members[action.user].actor.say_then_start_new(action.typed)
        return runner.check_user(number, action, action.user)


RULE = TellThenLeaveRule()
