"""Turning memory off on the memories page: nothing told while off is remembered, nothing remembered is used. Then a
question about a fact told before, a new fact told, memory turned on again (where the target says what then becomes
of the memories from before) and questions about both."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from harness.sessions.actions import Action
from harness.sessions.draws import Draws, FollowUp
from harness.sessions.moves._taking_back import TakingBackRule, back_from_memories
from harness.sessions.reads import ANSWERS
from harness.sessions.rules import Difference, Kind, NotApplicable

if TYPE_CHECKING:
    from harness.sessions.model import SessionModel, UserState
    from harness.sessions.runner import SessionRunner


@dataclass(frozen=True)
class TurnMemoryOff(Action):
    kind = "turn memory off"

    def gherkin(self) -> str:
        return f"When {self.user} turns her memory off"


class TurnMemoryOffRule(TakingBackRule[TurnMemoryOff]):
    """Memory turned off: drawn where the user has memories and her memory is on."""

    action = TurnMemoryOff
    kinds = (Kind("turn memory off", 2),)
    writes = frozenset({"memory_switch", "open_conversation"})
    acts_on = frozenset({"memory_switch"})

    def holds(self, model: SessionModel, name: str) -> bool:
        return bool(model.remembered(name)) and model.memory_on(name)

    def follow_ups(self, action: TurnMemoryOff, model: SessionModel, draws: Draws,
                   left_out: dict[str, str]) -> list[FollowUp]:
        name = action.user
        before = draws.fake.random_element([m.key for m in model.remembered(name)])
        if "turn memory on" in left_out:
            return [FollowUp(name, "ask", before), FollowUp(name, "tell"), FollowUp(name, "start a conversation"),
                    FollowUp(name, "ask")]
        return [FollowUp(name, "ask", before), FollowUp(name, "tell"), FollowUp(name, "turn memory on"),
                FollowUp(name, "ask"), FollowUp(name, "ask", before)]

    def effects(self, model: SessionModel) -> dict[str, tuple[str, ...]]:
        return {"turn memory off": (ANSWERS,)}

    def change(self, model: SessionModel, user: UserState, action: TurnMemoryOff) -> None:
        if not user.memory_on:
            raise NotApplicable(f"{action.user}'s memory is off already")
        user.memory_on = False

    def act(self, runner: SessionRunner, number: int, action: TurnMemoryOff) -> Difference | None:
        runner.members[action.user].actor.turn_memory(False)
        return back_from_memories(runner, number, action)


RULE = TurnMemoryOffRule()
