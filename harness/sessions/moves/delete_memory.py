"""Deleting a memory by its text on the memories page (the first that reads so): preferably one the user has no other
memory of the fact beside, so that a question finds it forgotten. Then a question about it in a new conversation, and
the fact told again."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from harness.sessions.actions import Action, quoted
from harness.sessions.draws import Draws, FollowUp
from harness.sessions.moves._taking_back import TakingBackRule, back_from_memories, found_by
from harness.sessions.reads import KEPT
from harness.sessions.rules import Difference, Kind

if TYPE_CHECKING:
    from harness.sessions.model import SessionModel, UserState
    from harness.sessions.runner import SessionRunner


@dataclass(frozen=True)
class DeleteMemory(Action):
    """Deletes the memory that reads `text` (the first, where several do), on the app's memories page."""

    text: str = ""
    key: str = ""  # the fact it states (normalised)

    kind = "delete a memory"

    def gherkin(self) -> str:
        return f"When {self.user} deletes her memory {quoted(self.text)}"


class DeleteMemoryRule(TakingBackRule[DeleteMemory]):
    """One memory deleted by its text."""

    action = DeleteMemory
    kinds = (Kind("delete a memory", 3),)
    writes = frozenset({"memories", "open_conversation"})

    def effects(self, model: SessionModel) -> dict[str, tuple[str, ...]]:
        return {"delete a memory": KEPT}

    def take(self, name: str, model: SessionModel, draws: Draws) -> DeleteMemory:
        mine = model.remembered(name)
        alone = [m for m in mine if sum(o.key == m.key for o in mine) == 1]  # then forgotten
        memory = draws.fake.random_element(alone or mine)
        return DeleteMemory(name, text=memory.sentence, key=memory.key)

    def follow_ups(self, action: DeleteMemory, model: SessionModel, draws: Draws,
                   left_out: dict[str, str]) -> list[FollowUp]:
        return [FollowUp(action.user, "ask", action.key), FollowUp(action.user, "tell", action.key)]

    def change(self, model: SessionModel, user: UserState, action: DeleteMemory) -> None:
        user.remembered.remove(model.reading(user, action.user, action.text))

    def act(self, runner: SessionRunner, number: int, action: DeleteMemory) -> Difference | None:
        """Deleted with no error shown (after a double click on a page): shown no more, and its text finds no memory
        that reads it (unless another memory of the user's reads the same)."""
        said = runner.members[action.user].actor.delete_memory(action.text)
        if said:
            return Difference(number, action, f"{action.user}'s page after the deletion", "no error", said)
        return back_from_memories(runner, number, action) or found_by(runner, number, action, action.text, None)


RULE = DeleteMemoryRule()
