"""What closing the browser and signing out have in common (moves/reopen_browser.py, sign_out.py): people do it right
after a reply, before a write is done, and come back to the app's start page, signed in."""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeVar

from harness.sessions.actions import Action
from harness.sessions.draws import Draws
from harness.sessions.reads import SIGNED_IN
from harness.sessions.rules import CHECKED, Rule

if TYPE_CHECKING:
    from harness.sessions.model import SessionModel, UserState

C = TypeVar("C", bound=Action)


class ComingBackRule(Rule[C]):
    """Leaving the app and coming back to it: drawn for the last to act, back on the start page, signed in."""

    leaving = True
    writes = frozenset({"open_conversation", "session"})
    acts_on = frozenset({"session", "open_conversation", "account"})  # her sign-in, and the page she comes back to
    reads = CHECKED | {"session"}  # (signed in, with her identity and her conversation list)

    def effects(self, model: SessionModel) -> dict[str, tuple[str, ...]]:
        return {kind.name: (SIGNED_IN,) for kind in self.kinds}

    def draw(self, kind: str, name: str, model: SessionModel, draws: Draws) -> C:
        return self.action(name)

    def apply(self, model: SessionModel, action: C) -> None:
        self.come_back(model, model.acting(action.user))

    def come_back(self, model: SessionModel, user: UserState) -> None:
        """Back on the start page (a new conversation), having opened the app once more."""
        user.current = None
        user.sign_ins += 1
