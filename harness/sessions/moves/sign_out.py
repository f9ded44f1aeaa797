"""Signing out and in again through the login form: the old session refused, then signed in with the same identity
and conversation list; her sign-in's lifetime counts from then."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from harness.sessions.actions import Action
from harness.sessions.moves._coming_back import ComingBackRule
from harness.sessions.rules import Difference, Kind

if TYPE_CHECKING:
    from harness.sessions.model import SessionModel, UserState
    from harness.sessions.runner import SessionRunner


@dataclass(frozen=True)
class SignOutAndIn(Action):
    kind = "sign out and back in"

    def gherkin(self) -> str:
        return f"When {self.user} signs out and signs in again through the login form"


class SignOutAndInRule(ComingBackRule[SignOutAndIn]):
    """Signed out and in again: a new sign-in."""

    action = SignOutAndIn
    kinds = (Kind("sign out and back in", 4),)

    def come_back(self, model: SessionModel, user: UserState) -> None:
        user.signed_in_day = model.day
        super().come_back(model, user)

    def act(self, runner: SessionRunner, number: int, action: SignOutAndIn) -> Difference | None:
        actor = runner.members[action.user].actor
        held = actor.sign_out()
        difference = runner.old_session_refused(number, action, held, "signing out")
        if difference:
            return difference
        actor.sign_in_again()
        return runner.signed_in(number, action, runner.members[action.user])


RULE = SignOutAndInRule()
