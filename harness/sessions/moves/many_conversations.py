"""Many new conversations one after the other, one fact told in each: more than any page of a list holds (the long
form only)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from harness.sessions.actions import Action, Said, quoted
from harness.sessions.draws import Draws
from harness.sessions.moves import tell
from harness.sessions.moves.tell import Tell
from harness.sessions.reads import KEPT
from harness.sessions.rules import Difference, Kind, Rule

if TYPE_CHECKING:
    from harness.sessions.model import SessionModel
    from harness.sessions.runner import SessionRunner


@dataclass(frozen=True)
class ManyConversations(Action):
    """One fact told in each of many new conversations, one after the other: more than any page of a list holds."""

    tells: tuple[Tell, ...] = ()

    kind = "start many conversations"

    @property
    def classes(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(c for t in self.tells for c in t.classes))

    @property
    def told(self) -> tuple[tuple[Said, ...], ...]:
        return tuple(t.statements for t in self.tells)

    def gherkin(self) -> str:
        lines = [f"When {self.user} starts a new conversation and tells the assistant {quoted(t.message)}"
                 for t in self.tells]
        return "\n        ".join(lines)


class ManyConversationsRule(Rule[ManyConversations]):
    """Conversations one after the other, each reply compared; the user's state read at the next full check."""

    action = ManyConversations
    kinds = (Kind("start many conversations", 0, long_form_weight=3),)
    checked_after = False  # (each reply is compared; the user's state at the next full check)
    writes = frozenset({"turns", "conversations", "open_conversation", "memories"})
    acts_on = frozenset({"conversations", "memory_switch"})
    reads = frozenset()  # each reply says back the fact told

    def effects(self, model: SessionModel) -> dict[str, tuple[str, ...]]:
        return {"start many conversations": KEPT}

    def draw(self, kind: str, name: str, model: SessionModel, draws: Draws) -> ManyConversations | None:
        tells: list[Tell] = []
        for _ in range(draws.fake.random_int(15, 35)):
            found = tell.draw_key(model, name, draws, {t.key for t in tells})
            if found is None:
                break
            said = tell.draw_said(model, name, draws, *found, False, room=0)
            tells.append(Tell(name, key=said.key, value=said.value, sentence=said.sentence,
                              value_class=said.value_class))
        return ManyConversations(name, tells=tuple(tells)) if tells else None

    def apply(self, model: SessionModel, action: ManyConversations) -> None:
        user = model.acting(action.user)
        for i, told in enumerate(action.tells):
            user.current = None  # each in a new conversation, each later than the one before
            model.seq += 1 if i else 0
            tell.RULE.say(model, user, told)

    def perform(self, runner: SessionRunner, number: int, action: ManyConversations) -> Difference | None:
        was_new = runner.model.current(action.user) is None
        runner.applied(action)
        member = runner.members[action.user]
        for i, told in enumerate(action.tells):
            if i or not was_new:
                member.actor.start_new_conversation()
            reply = member.actor.say(told.message).reply
            member.ids.append(member.actor.conversation_id())
            if not runner.answers.matches(reply, tell.reply_to(told)):
                return Difference(number, action, f"{action.user}'s answer in new conversation {i + 1}",
                                  tell.reply_to(told), reply)
        return None


RULE = ManyConversationsRule()
