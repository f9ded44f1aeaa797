"""Every write the app's API offers tried on another user's memories, conversations and settings (their ids, owner
fields in the body, identity headers), on someone who has something to lose: each refused, and nothing of the
victim's changed."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from harness.sessions.draws import Draws
from harness.sessions.moves._hostile import Against, HostileRule
from harness.sessions.rules import Difference, Kind
from harness.users.hostile import kinds_of

if TYPE_CHECKING:
    from harness.sessions.model import SessionModel
    from harness.sessions.runner import SessionRunner


@dataclass(frozen=True)
class TamperWith(Against):
    """Every write the app's API offers tried on another user's memories, conversations and settings (their ids,
    owner fields in the body, identity headers): each must be refused, and nothing of the victim's changes."""


    kind = "tamper with another user's data"

    def gherkin(self) -> str:
        return (f"When {self.user} tries every write the app's API offers on {self.victim}'s memories and "
                "conversations")


class TamperRule(HostileRule[TamperWith]):
    """Every write tried on the victim's data: each refused, the victim read after it."""

    action = TamperWith
    kinds = (Kind("tamper with another user's data", 1),)

    def draw(self, kind: str, name: str, model: SessionModel, draws: Draws) -> TamperWith | None:
        victims = [u for u in model.users if u != name and model.alive(u) and (
            model.remembered(u) or model.listed(u))]
        return TamperWith(name, victim=draws.fake.random_element(victims)) if victims else None

    def act(self, runner: SessionRunner, number: int, action: TamperWith) -> Difference | None:
        """Every write the API offers, on the victim's data as the attacker: each refused; then everything of the
        victim's exactly as the model says."""
        attacker = runner.members[action.user].actor
        own = {m.id for m in attacker.session.memories()}
        breaches = attacker.tamper_with(runner.members[action.victim].actor)
        for memory in attacker.session.memories():  # what the tries wrote on the attacker's own data, taken back
            if memory.id not in own:
                attacker.session.delete_memory(memory.id)
        if breaches:  # each kind of write not refused; the first in full
            return Difference(number, action, f"{action.user}'s writes on {action.victim}'s data", "every one refused",
                              [*kinds_of(breaches), f"first: {breaches[0]}"])
        return runner.check_user(number, action, action.victim)


RULE = TamperRule()
