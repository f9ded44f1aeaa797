"""Clearing all of a user's memories on the memories page, while someone else keeps memories: hers gone, every other
user's as before."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from harness.sessions.actions import Action
from harness.sessions.draws import Draws
from harness.sessions.moves._taking_back import TakingBackRule, back_from_memories
from harness.sessions.reads import KEPT
from harness.sessions.rules import Difference, Kind

if TYPE_CHECKING:
    from harness.sessions.model import SessionModel, UserState
    from harness.sessions.runner import SessionRunner


@dataclass(frozen=True)
class ClearMemories(Action):
    kind = "clear all memories"

    def gherkin(self) -> str:
        return f"When {self.user} clears all her memories"


class ClearMemoriesRule(TakingBackRule[ClearMemories]):
    """All of one user's memories cleared, and everyone read after it."""

    action = ClearMemories
    kinds = (Kind("clear all memories", 1),)
    everyone = True  # (every other user's memories kept)
    writes = frozenset({"memories", "open_conversation"})

    def precondition(self, kind: str, model: SessionModel, name: str, draws: Draws) -> bool:
        others = [u for u in model.users if u != name and model.alive(u)]
        if others and not any(model.remembered(u) for u in others):
            return False  # nobody else's memories to see kept
        return super().precondition(kind, model, name, draws)

    def wants_first(self, kind: str, model: SessionModel, name: str, draws: Draws) -> str | None:
        # memories of hers to clear, told at once, and so someone else keeps memories when one clears hers
        return "tell several facts at once" if not model.remembered(name) and not draws.pending(name) else None

    def effects(self, model: SessionModel) -> dict[str, tuple[str, ...]]:
        return {"clear all memories": KEPT}

    def change(self, model: SessionModel, user: UserState, action: ClearMemories) -> None:
        user.remembered = []

    def act(self, runner: SessionRunner, number: int, action: ClearMemories) -> Difference | None:
        runner.members[action.user].actor.clear_memories()
        return back_from_memories(runner, number, action)


RULE = ClearMemoriesRule()
