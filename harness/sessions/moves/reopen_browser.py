"""Closing the browser and opening it again on the same profile: still signed in, the same identity and
conversation list shown."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from harness.sessions.actions import Action
from harness.sessions.moves._coming_back import ComingBackRule
from harness.sessions.rules import Difference, Kind

if TYPE_CHECKING:
    from harness.sessions.runner import SessionRunner


@dataclass(frozen=True)
class ReopenBrowser(Action):
    kind = "close and reopen the browser"

    def gherkin(self) -> str:
        return f"When {self.user} closes the browser and opens it again with the same profile"


class ReopenBrowserRule(ComingBackRule[ReopenBrowser]):
    """The browser closed and opened again: the same sign-in."""

    action = ReopenBrowser
    kinds = (Kind("close and reopen the browser", 5),)

    def act(self, runner: SessionRunner, number: int, action: ReopenBrowser) -> Difference | None:
        runner.members[action.user].actor.reopen_browser()
        return runner.signed_in(number, action, runner.members[action.user])


RULE = ReopenBrowserRule()
