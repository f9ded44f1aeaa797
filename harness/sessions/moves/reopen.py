"""Opening an older conversation from the conversation list: its history as it was, and it marked open."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from harness.sessions.actions import OnConversation
from harness.sessions.draws import Draws
from harness.sessions.rules import CHECKED, Difference, Kind, NotApplicable, Rule

if TYPE_CHECKING:
    from harness.sessions.model import SessionModel
    from harness.sessions.runner import SessionRunner


@dataclass(frozen=True)
class Reopen(OnConversation):
    kind = "reopen a conversation"

    def gherkin(self) -> str:
        return f"When {self.user} opens her conversation {self.conversation} from the conversation list"


class ReopenRule(Rule[Reopen]):
    """An older conversation opened, where the user has one besides the one on her screen."""

    action = Reopen
    kinds = (Kind("reopen a conversation", 7),)
    writes = frozenset({"open_conversation"})
    acts_on = frozenset({"conversations", "turns"})  # picked from the list, its history shown
    reads = CHECKED | {"open_conversation"}

    def draw(self, kind: str, name: str, model: SessionModel, draws: Draws) -> Reopen | None:
        choices = [i for i in model.listed(name) if i != model.current(name)]
        return Reopen(name, conversation=draws.fake.random_element(choices) + 1) if choices else None

    def apply(self, model: SessionModel, action: Reopen) -> None:
        user = model.acting(action.user)
        if action.conversation - 1 not in model.listed(action.user):
            raise NotApplicable(f"{action.user} has no conversation {action.conversation} in her list")
        user.current = action.conversation - 1

    def act(self, runner: SessionRunner, number: int, action: Reopen) -> Difference | None:
        member = runner.members[action.user]
        member.actor.open_from_list(member.ids[action.conversation - 1])
        expected = list(runner.model.conversations(action.user)[action.conversation - 1])
        shown = runner.history_shown(member.actor, expected)
        if shown != expected:
            return Difference(number, action, f"{action.user}'s history on the page", expected, shown)
        return runner.marked_open(number, action, member.actor, member.ids[action.conversation - 1])


RULE = ReopenRule()
