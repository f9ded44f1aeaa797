"""A new account opened with a deleted account's address, signed in in a new browser profile: it starts with
nothing of the deleted one's."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from harness.sessions.actions import Action
from harness.sessions.draws import Draws, FollowUp
from harness.sessions.reads import ANSWERS, SIGNED_IN
from harness.sessions.rules import PARTS, Difference, Kind, NotApplicable, Rule
from harness.sessions.state import UserState

if TYPE_CHECKING:
    from harness.sessions.model import SessionModel
    from harness.sessions.runner import SessionRunner


@dataclass(frozen=True)
class Rejoin(Action):
    """A new account with a deleted account's address, signed in in a new browser profile."""

    kind = "open an account again"

    def gherkin(self) -> str:
        return f"When a new account is opened with {self.user}'s e-mail address and signs in"


class RejoinRule(Rule[Rejoin]):
    """The account opened again: a new user state, a new member of the session, everyone read after it."""

    action = Rejoin
    # Drawn for a user whose account is deleted, as the follow-up of the deletion or when she is drawn to act.
    kinds = (Kind("open an account again", follows=True),)
    everyone = True
    writes = PARTS - {"clock"}
    acts_on = frozenset({"account"})

    def effects(self, model: SessionModel) -> dict[str, tuple[str, ...]]:
        return {"open an account again": (ANSWERS, SIGNED_IN)}

    def precondition(self, kind: str, model: SessionModel, name: str, draws: Draws) -> bool:
        return not model.alive(name)

    def draw(self, kind: str, name: str, model: SessionModel, draws: Draws) -> Rejoin | None:
        return Rejoin(name) if self.precondition(kind, model, name, draws) else None

    def follow_up(self, follow: FollowUp, model: SessionModel, draws: Draws) -> Rejoin | None:
        return self.draw(follow.kind, follow.user, model, draws)

    def apply(self, model: SessionModel, action: Rejoin) -> None:
        user = model.user(action.user)
        if user.alive:
            raise NotApplicable(f"{action.user}'s account was not deleted")
        model.users[action.user] = UserState(account=user.account + 1, signed_in_day=model.day)

    def act(self, runner: SessionRunner, number: int, action: Rejoin) -> Difference | None:
        runner.members[action.user] = runner.new_member(action.user)
        return None


RULE = RejoinRule()
