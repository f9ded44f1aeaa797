"""Editing a memory on the memories page: the same fact (its key kept), another value written over the old one where
the memory states it, as a user corrects what the assistant remembers. Then a question about it."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from harness.sessions.actions import Action, quoted
from harness.sessions.draws import Draws, FollowUp
from harness.sessions.moves._taking_back import TakingBackRule, back_from_memories, found_by
from harness.sessions.reads import KEPT
from harness.sessions.rules import Difference, Kind, NotApplicable

if TYPE_CHECKING:
    from harness.sessions.model import SessionModel, UserState
    from harness.sessions.runner import SessionRunner
    from harness.sessions.state import Remembered

# The values a memory is edited to. The first edit of a session is to a long value, the edge of an edit: nearly all
# of the text is new, so that only a vector of the new text finds it (an app that kept the old vector no longer finds
# the memory by its text at all); later edits, to a value of any of these shapes.
SHORT_VALUE = 100  # characters: the memories edited are of values shorter, where there are such
EDIT_CLASSES = ("long", "address", "url", "email", "name with punctuation", "cjk", "emoji", "plain", "code")


@dataclass(frozen=True)
class EditMemory(Action):
    """Changes the memory that reads `text` to `new_text`: the same fact (its key kept), another value, written over
    the old one where the memory states it."""

    text: str = ""
    new_text: str = ""
    key: str = ""  # the fact both texts state (normalised)
    value: str = ""  # the value `new_text` states
    value_class: str = "plain"

    kind = "edit a memory"

    @property
    def classes(self) -> tuple[str, ...]:
        return (self.value_class,)

    def gherkin(self) -> str:
        return f"When {self.user} changes her memory {quoted(self.text)} to {quoted(self.new_text)}"


class EditMemoryRule(TakingBackRule[EditMemory]):
    """One memory given another value, in its place or as the newest, as the target says."""

    action = EditMemory
    kinds = (Kind("edit a memory", 3),)
    writes = frozenset({"memories", "open_conversation"})

    def effects(self, model: SessionModel) -> dict[str, tuple[str, ...]]:
        return {"edit a memory": KEPT}

    def take(self, name: str, model: SessionModel, draws: Draws) -> EditMemory | None:
        """One of the memories the user is answered from, of a short value where there are such (a long value
        edited to a long one keeps words)."""
        mine = model.remembered(name)
        newest = list({m.key: m for m in sorted(mine, key=lambda m: m.seq)}.values())
        short = [m for m in newest if len(m.value) < SHORT_VALUE]
        return _edit(name, draws.fake.random_element(short or newest), draws)

    def follow_ups(self, action: EditMemory, model: SessionModel, draws: Draws,
                   left_out: dict[str, str]) -> list[FollowUp]:
        return [FollowUp(action.user, "ask", action.key)]

    def change(self, model: SessionModel, user: UserState, action: EditMemory) -> None:
        memory = model.reading(user, action.user, action.text)
        if memory.key != action.key:
            raise NotApplicable(f"{action.user}'s memory {action.text!r} does not state her {action.key}")
        edited = replace(memory, value=action.value, sentence=action.new_text)
        if model.forgetting.edit_makes_newest:  # the app deletes it and stores the new text as a new memory
            user.remembered.remove(memory)
            user.remembered.append(replace(edited, seq=model.seq, place=model.seq))
        else:
            user.remembered[user.remembered.index(memory)] = edited

    def act(self, runner: SessionRunner, number: int, action: EditMemory) -> Difference | None:
        """Edited: shown with its new text; its old text finds no memory that reads it, its new text finds it
        first."""
        runner.members[action.user].actor.edit_memory(action.text, action.new_text)
        return (back_from_memories(runner, number, action) or found_by(runner, number, action, action.text, None)
                or found_by(runner, number, action, action.new_text, action.new_text))


def _edit(name: str, memory: Remembered, draws: Draws) -> EditMemory | None:
    """The memory's value changed to another, of another class, written over the old value where the memory states
    it."""
    value_class = draws.first(draws.edits, EDIT_CLASSES)
    value = draws.text.value(value_class)
    head, found, tail = memory.sentence.rpartition(memory.value)
    if not found or value == memory.value:
        return None
    return EditMemory(name, text=memory.sentence, new_text=f"{head}{value}{tail}", key=memory.key, value=value,
                      value_class=value_class)


RULE = EditMemoryRule()
