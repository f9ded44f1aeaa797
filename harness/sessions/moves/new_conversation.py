"""Starting a new conversation, from the one on the user's screen."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from harness.sessions.actions import Action
from harness.sessions.draws import Draws
from harness.sessions.rules import Difference, Kind, Rule

if TYPE_CHECKING:
    from harness.sessions.model import SessionModel
    from harness.sessions.runner import SessionRunner


@dataclass(frozen=True)
class NewConversation(Action):
    kind = "start a conversation"

    def gherkin(self) -> str:
        return f"When {self.user} starts a new conversation"


class NewConversationRule(Rule[NewConversation]):
    """A new conversation, where one is on the user's screen."""

    action = NewConversation
    kinds = (Kind("start a conversation", 8),)
    writes = frozenset({"open_conversation"})
    acts_on = frozenset({"open_conversation"})

    def draw(self, kind: str, name: str, model: SessionModel, draws: Draws) -> NewConversation | None:
        return NewConversation(name) if model.current(name) is not None else None

    def apply(self, model: SessionModel, action: NewConversation) -> None:
        model.acting(action.user).current = None

    def act(self, runner: SessionRunner, number: int, action: NewConversation) -> Difference | None:
        runner.members[action.user].actor.start_new_conversation()
        return None


RULE = NewConversationRule()
