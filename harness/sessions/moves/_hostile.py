"""What the hostile users' moves have in common (moves/tamper.py, wrong_passwords.py): one user acts on another's
account, still there; the app must refuse all of it, so that nothing of anyone's changes, and the victim's state is
read after it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from harness.sessions.actions import Action
from harness.sessions.rules import NotApplicable, Rule

if TYPE_CHECKING:
    from harness.sessions.model import SessionModel



@dataclass(frozen=True)
class Against(Action):
    """An action by one user on another's account (the victim)."""

    victim: str = ""


H = TypeVar("H", bound=Against)


class HostileRule(Rule[H]):
    """An action on another user's account, who must be one of the session's other users, still there."""

    acts_on = frozenset({"account", "session", "memories", "conversations", "turns"})  # the victim's, each refused

    def effects(self, model: SessionModel) -> dict[str, tuple[str, ...]]:
        return {kind.name: () for kind in self.kinds}  # refused, each: nothing of anyone's changes

    def apply(self, model: SessionModel, action: H) -> None:
        model.acting(action.user)
        if action.victim == action.user or not model.user(action.victim).alive:
            raise NotApplicable(f"{action.user} has no other user's data to tamper with: {action.victim!r}")
