"""Turning memory on again on the memories page, as the follow-up of turning it off: the memories from before used
again or gone, as the target documents ([forgetting] memory_on_again); what was told while off is answered only in
its own conversation."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from harness.sessions.actions import Action
from harness.sessions.draws import Draws
from harness.sessions.moves._taking_back import TakingBackRule, back_from_memories
from harness.sessions.reads import ANSWERS, MEMORIES, SEARCH
from harness.sessions.rules import Difference, Kind, NotApplicable

if TYPE_CHECKING:
    from harness.sessions.model import SessionModel, UserState
    from harness.sessions.runner import SessionRunner


@dataclass(frozen=True)
class TurnMemoryOn(Action):
    kind = "turn memory on"

    def gherkin(self) -> str:
        return f"When {self.user} turns her memory on"


class TurnMemoryOnRule(TakingBackRule[TurnMemoryOn]):
    """Memory turned on again: drawn where it is off, whatever room is left."""

    action = TurnMemoryOn
    kinds = (Kind("turn memory on", 0, follows=True,
                  needs=("memory_on_again", "the memories from before once memory is on again")),)
    writes = frozenset({"memory_switch", "memories", "open_conversation"})
    acts_on = frozenset({"memory_switch", "memories"})

    def precondition(self, kind: str, model: SessionModel, name: str, draws: Draws) -> bool:
        return not model.memory_on(name)  # (as the follow-up of turning it off, whatever room is left)

    def effects(self, model: SessionModel) -> dict[str, tuple[str, ...]]:
        choice = model.forgetting.memory_on_again
        if choice is None:
            return {}
        # gone: what was kept is cleared, while nothing was answered from it already; used again: answered again
        return {"turn memory on": (MEMORIES, SEARCH) if choice.memories == "gone" else (ANSWERS,)}

    def change(self, model: SessionModel, user: UserState, action: TurnMemoryOn) -> None:
        choice = model.forgetting.memory_on_again
        if choice is None:
            raise NotApplicable("the target declares no [forgetting] memory_on_again")
        if user.memory_on:
            raise NotApplicable(f"{action.user}'s memory is on already")
        user.memory_on = True
        if choice.memories == "gone":
            user.remembered = []

    def act(self, runner: SessionRunner, number: int, action: TurnMemoryOn) -> Difference | None:
        runner.members[action.user].actor.turn_memory(True)
        return back_from_memories(runner, number, action)


RULE = TurnMemoryOnRule()
