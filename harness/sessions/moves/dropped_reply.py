"""A turn the app gets and answers, whose connection drops before the page has the answer: the turn and its reply
stored once; what it told remembered as the target documents ([forgetting] dropped_reply; moves/_failures.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from harness.sessions.actions import quoted
from harness.sessions.moves._failures import FailedTurn, FailedTurnRule, turn_rule
from harness.sessions.moves.tell import TellRule
from harness.sessions.reads import ANSWERS, MEMORIES, SEARCH, TALK
from harness.sessions.rules import Kind, NotApplicable

if TYPE_CHECKING:
    from harness.sessions.model import SessionModel, UserState
    from harness.users.actor import Actor


@dataclass(frozen=True)
class DroppedReply(FailedTurn):
    """The app gets the turn and answers it; the connection drops before the page has the answer."""

    kind = "connection dropped mid-reply"

    def gherkin(self) -> str:
        return f"When the connection drops while {self.user}'s message {quoted(self.turn.typed)} is answered"


class DroppedReplyRule(FailedTurnRule[DroppedReply]):
    """The reply lost on its way: the turn kept as its own move keeps it, its facts as the target says."""

    action = DroppedReply
    kinds = (Kind("connection dropped mid-reply", 2,
                  needs=("dropped_reply", "the facts of a turn whose reply never reached the page")),)
    writes = TellRule.writes - {"open_conversation"}  # what its turn writes, at most, in the conversation open

    def effects(self, model: SessionModel) -> dict[str, tuple[str, ...]]:
        choice = model.forgetting.dropped_reply
        if choice is None:
            return {}
        # its turn is stored, and answered from there
        remembered = choice.memories == "remembered"
        return {"connection dropped mid-reply": (*TALK, *((MEMORIES, SEARCH) if remembered else ()), ANSWERS)}

    def keep(self, model: SessionModel, user: UserState, action: DroppedReply) -> None:
        turn = turn_rule(action.turn)
        remember = True
        if "memories" in turn.writes:  # a page writes a turn's memories once it has the reply, as the target says
            choice = model.forgetting.dropped_reply
            if choice is None:
                raise NotApplicable("the target declares no [forgetting] dropped_reply")
            remember = choice.memories == "remembered"
        turn.say(model, user, action.turn, remember)

    def send(self, actor: Actor, text: str) -> str:
        return actor.say_dropped(text)


RULE = DroppedReplyRule()
