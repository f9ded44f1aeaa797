"""Small talk sent with two clicks of Send, the second while the first's request is still on its way (held back, as
a slow server holds it), as an impatient person clicks: the turn is sent once, answered once, and shown once (a page
that keeps the message in its box until the answer comes sends it again). A way of chatting: drawn once a session in
the place of a small talk (moves/chat.py), where the target can act it out."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from harness.sessions.actions import quoted
from harness.sessions.draws import Draws
from harness.sessions.moves.chat import Chat, ChatRule
from harness.sessions.rules import Difference, Kind
from harness.sessions.text import CHAT_CLASSES

if TYPE_CHECKING:
    from harness.sessions.model import SessionModel
    from harness.sessions.runner import SessionRunner
    from harness.users.actor import Actor, Exchange


@dataclass(frozen=True)
class ChatClickingTwice(Chat):
    kind = "say something, clicking Send twice"

    def gherkin(self) -> str:
        return f"When {self.user} says {quoted(self.text)}, clicking Send twice"


class ChatClickingTwiceRule(ChatRule):
    """Small talk, Send clicked twice: noted once; her conversation read right after."""

    action = ChatClickingTwice
    kinds = (Kind("say something, clicking Send twice", variant_of="chat"),)
    checked_after = True

    def to_cover(self, kind: str, model: SessionModel, name: str, draws: Draws) -> bool:
        return False

    def effects(self, model: SessionModel) -> dict[str, tuple[str, ...]]:
        return {"say something, clicking Send twice": ()}  # (what it shows is the chat's: Kind.variant_of)

    def draw(self, kind: str, name: str, model: SessionModel, draws: Draws) -> Chat | None:
        text_class = draws.text.next_class(CHAT_CLASSES)
        return ChatClickingTwice(name, text=draws.text.small_talk(text_class), text_class=text_class)

    def exchange(self, actor: Actor, action: Chat) -> Exchange:
        return actor.say_clicking_twice(action.typed)

    def perform(self, runner: SessionRunner, number: int, action: Chat) -> Difference | None:
        """The turn as any (its answer, its recalled memories); then her state, her conversation's turns among it."""
        difference = super().perform(runner, number, action)
        if difference or runner.full_check_due(number) or number in runner.plan.read_after:
            return difference  # (read after it already)
        return runner.check_user(number, action, action.user)


RULE = ChatClickingTwiceRule()
