"""A message the app's server answers with an error: nothing of it reaches the app (moves/_failures.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness.sessions.actions import RefusedSend
from harness.sessions.moves._failures import FailedTurnRule
from harness.sessions.rules import Kind

if TYPE_CHECKING:
    from harness.actor import Actor


class RefusedSendRule(FailedTurnRule[RefusedSend]):
    action = RefusedSend
    kinds = (Kind("send refused by the app", 2),)

    def send(self, actor: Actor, text: str) -> str:
        return actor.say_refused_by_app(text)


RULE = RefusedSendRule()
