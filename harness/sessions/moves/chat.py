"""Small talk: a message that states no fact and asks nothing, with a piece of the next character class still to
cover in it, or at the longest message the app accepts, once in each script."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from harness.sessions.actions import quoted
from harness.sessions.draws import Draws
from harness.sessions.moves._turns import Message, TurnRule, variant_fits
from harness.sessions.reads import TALK
from harness.sessions.rules import Kind
from harness.sessions.text import CHAT_CLASSES
from harness.vocabulary.language import NOTED

if TYPE_CHECKING:
    from harness.sessions.model import SessionModel, UserState


@dataclass(frozen=True)
class Chat(Message):
    text: str = ""
    text_class: str = "plain"  # a character class, or "near the limit (<script>)"

    kind = "chat"

    @property
    def typed(self) -> str:
        return self.text

    @property
    def classes(self) -> tuple[str, ...]:
        return (self.text_class,)

    @property
    def boundaries(self) -> tuple[str, ...]:
        return (self.text_class,) if "limit" in self.text_class else ()

    def gherkin(self) -> str:
        return f"When {self.user} says {quoted(self.text)}"


class ChatRule(TurnRule[Chat]):
    """Small talk: noted, nothing told."""

    action = Chat
    kinds = (Kind("chat", 8),)

    def to_cover(self, kind: str, model: SessionModel, name: str, draws: Draws) -> bool:
        return bool(draws.long_chats) or variant_fits(kind, model, name, draws)

    def effects(self, model: SessionModel) -> dict[str, tuple[str, ...]]:
        return {"chat": TALK}

    def draw(self, kind: str, name: str, model: SessionModel, draws: Draws) -> Chat | None:
        text = draws.text
        if draws.long_chats:
            text_class = draws.long_chats.pop(0)
            script = text_class[text_class.index("(") + 1:-1]
            return Chat(name, text=text.near_limit(script, draws.limits.longest_to_type), text_class=text_class)
        text_class = text.next_class(CHAT_CLASSES)
        return Chat(name, text=text.small_talk(text_class), text_class=text_class)

    def say(self, model: SessionModel, user: UserState, action: Chat, remember: bool = True) -> str:
        model.add_turn(user, action.text, NOTED)
        return NOTED


RULE = ChatRule()
