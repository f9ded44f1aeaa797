"""What the turns have in common (moves/tell.py, ask.py, chat.py): a message typed in the conversation on the user's
screen (a new one where none is) and answered there."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from harness.sessions.actions import Action
from harness.sessions.rules import CHECKED, Difference, Rule

if TYPE_CHECKING:
    from harness.sessions.draws import Draws
    from harness.sessions.model import SessionModel, UserState
    from harness.sessions.runner import SessionRunner
    from harness.users.actor import Actor, Exchange



@dataclass(frozen=True)
class Message(Action):
    """A message the user types in the conversation on her screen."""

    @property
    def typed(self) -> str:
        raise NotImplementedError


T = TypeVar("T", bound=Message)


def variant_fits(kind: str, model: SessionModel, name: str, draws: Draws) -> bool:
    """Whether a way of doing `kind` still to draw once may be drawn by `name` now (Kind.variant_of)."""
    from harness.sessions.moves import rule_for  # (the package imports every move, this one's users among them)

    return any(rule_for(way).precondition(way, model, name, draws) for way in draws.variants_of(kind))


class TurnRule(Rule[T]):
    """A turn: what it adds to the conversation and the reply it must get (`say`), then that reply on the page."""

    turn = True
    # Read after only where it first shows a transition (the plan's read_after), and every few actions.
    checked_after = False
    writes = frozenset({"turns", "conversations", "open_conversation"})
    acts_on = frozenset({"open_conversation", "turns"})  # the reply goes on from the conversation on her screen
    reads = CHECKED

    def apply(self, model: SessionModel, action: T) -> str:
        return self.say(model, model.acting(action.user), action)

    def say(self, model: SessionModel, user: UserState, action: T, remember: bool = True) -> str:
        """The turn added to the conversation on the user's screen; the reply it must get. `remember`: False where
        the app never wrote what the turn told to its long-term memories (the page never had the reply)."""
        raise NotImplementedError

    def exchange(self, actor: Actor, action: T) -> Exchange:
        """The turn as the user sends it: typed, and Send clicked (or Enter pressed) once."""
        return actor.say(action.typed)

    def perform(self, runner: SessionRunner, number: int, action: T) -> Difference | None:
        """The reply on the page, and only the user's own memories recalled for it (none while her memory is off);
        then her state, where the plan reads it after this turn."""
        starts_conversation = runner.model.current(action.user) is None
        expected = runner.applied(action) or ""
        member = runner.members[action.user]
        exchange = self.exchange(member.actor, action)
        if starts_conversation:
            member.ids.append(member.actor.conversation_id())
        if not runner.answers.matches(exchange.reply, expected):
            return Difference(number, action, f"{action.user}'s answer", expected, exchange.reply)
        own = set(runner.model.memories(action.user)) if runner.model.memory_on(action.user) else set()
        foreign = [t for t in exchange.recalled if t not in own]
        if foreign:
            return Difference(number, action, f"{action.user}'s recalled memories", sorted(own),
                              list(exchange.recalled))
        difference = runner.open_entry(number, action, member)
        if difference:
            return difference
        if runner.full_check_due(number):
            return runner.check_everyone(number, action)
        # The first turn that changed a read (the order of the list, a conversation's entry, ...): read it now.
        return runner.check_user(number, action, action.user) if number in runner.plan.read_after else None
