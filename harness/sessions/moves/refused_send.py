"""A message the app's server answers with an error: nothing of it reaches the app (moves/_failures.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from harness.sessions.actions import quoted
from harness.sessions.moves._failures import FailedTurn, FailedTurnRule
from harness.sessions.rules import Kind

if TYPE_CHECKING:
    from harness.users.actor import Actor


@dataclass(frozen=True)
class RefusedSend(FailedTurn):
    """The app's server answers the turn's request with an error: nothing of it reaches the app."""

    kind = "send refused by the app"

    def gherkin(self) -> str:
        return f"When {self.user}'s message {quoted(self.turn.typed)} is refused by the app and she goes on"


class RefusedSendRule(FailedTurnRule[RefusedSend]):
    """The send refused: nothing of it kept."""

    action = RefusedSend
    kinds = (Kind("send refused by the app", 2),)

    def send(self, actor: Actor, text: str) -> str:
        return actor.say_refused_by_app(text)


RULE = RefusedSendRule()
