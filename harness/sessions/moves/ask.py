"""Asking the assistant about a fact: mostly one the user told, now and then one only others told, in the next
wording still to cover."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from harness.sessions.actions import quoted
from harness.sessions.draws import ASK_WORDINGS, FACT_KEYS, Draws, FollowUp
from harness.sessions.moves._turns import Message, TurnRule
from harness.sessions.reads import TALK
from harness.sessions.rules import Kind

if TYPE_CHECKING:
    from harness.sessions.model import SessionModel, UserState


@dataclass(frozen=True)
class Ask(Message):
    key: str = ""
    question: str = ""

    kind = "ask"

    @property
    def typed(self) -> str:
        return self.question

    def gherkin(self) -> str:
        return f"When {self.user} asks {quoted(self.question)}"


def question(name: str, key: str, draws: Draws) -> Ask:
    """The user asks about `key`, in the next wording still to cover."""
    return Ask(name, key=key, question=draws.first(draws.asks, ASK_WORDINGS).format(key=key))


class AskRule(TurnRule[Ask]):
    """A question: answered from the conversation on screen or a memory kept, as the model says."""

    action = Ask
    kinds = (Kind("ask", 26),)
    acts_on = TurnRule.acts_on | {"memories", "memory_switch", "clock"}  # answered from what is kept, by the clock

    def to_cover(self, kind: str, model: SessionModel, name: str, draws: Draws) -> bool:
        return bool(draws.asks)

    def effects(self, model: SessionModel) -> dict[str, tuple[str, ...]]:
        return {"ask": TALK}

    def draw(self, kind: str, name: str, model: SessionModel, draws: Draws) -> Ask | None:
        told = model.keys(name)
        others = [k for k, _ in model.values() if k not in told]
        pool = told if told and (draws.fake.boolean(80) or not others) else others or list(FACT_KEYS)
        return question(name, draws.fake.random_element(pool), draws)

    def followed(self, follow: FollowUp, model: SessionModel, draws: Draws) -> Ask | None:
        """The question about the fact the follow-up names (none where it names none: the fact a follow-up told)."""
        return question(follow.user, follow.key, draws) if follow.key else None

    def say(self, model: SessionModel, user: UserState, action: Ask, remember: bool = True) -> str:
        reply = model.answer(action.user, action.key)  # before the question joins the conversation
        model.add_turn(user, action.question, reply)
        return reply


RULE = AskRule()
