"""What the moves that take something back have in common (moves/delete_memory.py, edit_memory.py,
clear_memories.py, memory_off.py, memory_on.py, delete_conversation.py): each is drawn where what shows it fits
before the end, and done on the app's memories page (or through its API), after which the user is shown her memories
and comes back to the chat on a new conversation (a conversation is deleted from the list instead)."""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeVar

from harness.drivers.base import Capability, Memory
from harness.sessions.actions import Action
from harness.sessions.draws import FOLLOW_UP_ROOM, Draws
from harness.sessions.rules import Difference, Rule

if TYPE_CHECKING:
    from harness.sessions.model import SessionModel, UserState
    from harness.sessions.runner import SessionRunner

T = TypeVar("T", bound=Action)


def room_to_show(name: str, draws: Draws) -> bool:
    """Whether a take-back by the user shows: no follow-up of an earlier one of hers still to draw, and room for what
    shows it before the end."""
    return not (draws.pending(name) or 0 < draws.left <= FOLLOW_UP_ROOM)


class TakingBackRule(Rule[T]):
    """A move that takes something back: drawn where the user has something of hers to take back (`holds`) and what
    shows it fits (`take`: which); a change made on the memories page (`change`), after which she is shown her
    memories there."""

    acts_on = frozenset({"memories", "clock"})  # what her memories page lists now

    def precondition(self, kind: str, model: SessionModel, name: str, draws: Draws) -> bool:
        return room_to_show(name, draws) and self.holds(model, name)

    def holds(self, model: SessionModel, name: str) -> bool:
        """Whether the user has something this move takes back."""
        return bool(model.remembered(name))

    def draw(self, kind: str, name: str, model: SessionModel, draws: Draws) -> T | None:
        return self.take(name, model, draws) if self.precondition(kind, model, name, draws) else None

    def take(self, name: str, model: SessionModel, draws: Draws) -> T | None:
        """What the user takes back, where she may."""
        return self.action(name)

    def apply(self, model: SessionModel, action: T) -> None:
        user = model.acting(action.user)
        self.change(model, user, action)
        user.current = None  # back from the memories page to the chat: a new conversation

    def change(self, model: SessionModel, user: UserState, action: T) -> None:
        raise NotImplementedError


def back_from_memories(runner: SessionRunner, number: int, action: Action) -> Difference | None:
    """The memories the user is shown (the memories page, where the app has one) exactly as the model says; then back
    to the chat, on a new conversation (as the model has it after the memories page)."""
    actor = runner.members[action.user].actor
    shown = actor.memories_shown()
    actor.start_new_conversation()
    if not runner.listed_as_modelled(action.user, [Memory("", text) for text in shown]):
        return Difference(number, action, f"{action.user}'s memories shown", runner.model.memories(action.user),
                          shown)
    return None


def found_by(runner: SessionRunner, number: int, action: Action, text: str, first: str | None) -> Difference | None:
    """The user's memory search for `text`: the memory that reads `first` first; or (None) no memory that reads
    `text`, unless the model keeps one that does."""
    name, app = action.user, runner.app
    if not app.offers(Capability.MEMORY_SEARCH):  # the run's start said it is not checked
        return None
    hits = runner.members[name].actor.session.search(text, k=app.recall_k)
    if first is not None and (not hits or hits[0].text != first):
        return Difference(number, action, f"{name}'s search for {text!r}", f"{first!r} first",
                          [h.text for h in hits])
    if first is None and text not in runner.model.memories(name) and any(h.text == text for h in hits):
        return Difference(number, action, f"{name}'s search for {text!r}", "no memory that reads it",
                          [h.text for h in hits])
    return None
