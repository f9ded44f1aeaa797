"""A message sent while the user's browser is offline (a train in a tunnel), the browser then back online: the page
says it was not sent, and nothing of it is stored; or, where the app keeps what was typed offline, it sends it once
back online, once, and it is answered there ([forgetting] offline_send). Either way the user goes on in the same page
(moves/_failures.py). A way of chatting: drawn once a session in the place of a small talk (moves/chat.py), where the
target can fail a send and declares what its page does offline; a message sent once back online shows what its turn
shows."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from harness.sessions.actions import quoted
from harness.sessions.draws import Draws
from harness.sessions.moves._failures import FailedTurn, FailedTurnRule, in_conversation, turn_rule
from harness.sessions.moves.tell import TellRule
from harness.sessions.rules import Difference, Kind, NotApplicable

if TYPE_CHECKING:
    from harness.sessions.model import SessionModel
    from harness.sessions.runner import SessionRunner

KIND = "send while the browser is offline"


@dataclass(frozen=True)
class OfflineSend(FailedTurn):
    kind = KIND

    def gherkin(self) -> str:
        return (f"When {self.user} sends {quoted(self.turn.typed)} while her browser is offline, and it comes back "
                "online")


class OfflineSendRule(FailedTurnRule[OfflineSend]):
    """Refused where the target says so (nothing kept, an error shown), else sent once back online and answered."""

    action = OfflineSend
    kinds = (Kind(KIND, variant_of="chat", needs=("offline_send", "a message sent while the browser is offline")),)

    def precondition(self, kind: str, model: SessionModel, name: str, draws: Draws) -> bool:
        return in_conversation(name, model, draws)
    writes = TellRule.writes - {"open_conversation"}  # what its turn writes, at most, in the conversation open

    def effects(self, model: SessionModel) -> dict[str, tuple[str, ...]]:
        return {KIND: ()}  # refused: nothing changes; sent once back online: what its turn changes (shows_as)

    def shows_as(self, action: OfflineSend, model: SessionModel) -> str:
        choice = model.forgetting.offline_send
        return action.turn.kind if choice is not None and choice.memories != "refused" else KIND

    def apply(self, model: SessionModel, action: OfflineSend) -> str | None:
        """Nothing, where the page refuses it; else the turn, and the reply it must get once back online."""
        user = model.acting(action.user)
        if user.current is None:
            raise NotApplicable(f"{action.user} has no conversation open for a failure to happen in")
        choice = model.forgetting.offline_send
        if choice is None:
            raise NotApplicable("the target declares no [forgetting] offline_send")
        return None if choice.memories == "refused" else turn_rule(action.turn).say(model, user, action.turn)

    def perform(self, runner: SessionRunner, number: int, action: OfflineSend) -> Difference | None:
        """Sent offline: the page's error, or the answer once back online; then her state, and again after her next
        action (SessionRunner)."""
        expected = runner.applied(action)
        actor = runner.members[action.user].actor
        if expected is None:
            if not actor.say_offline(action.turn.typed).strip():
                return Difference(number, action, f"{action.user}'s error on the page",
                                  "an error saying the message was not sent", "no error")
        else:
            reply = actor.say_offline_sent_online(action.turn.typed).reply
            if not runner.answers.matches(reply, expected):
                return Difference(number, action, f"{action.user}'s answer", expected, reply)
        runner.failed[action.user] = number
        return runner.check_user(number, action, action.user)


RULE = OfflineSendRule()
