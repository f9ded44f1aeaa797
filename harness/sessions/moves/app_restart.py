"""The app stopped and started on its data between two of the user's turns, once everything it was writing has
landed (a restart in the middle of a write is another promise); her page stays open on the conversation, where she
goes on (moves/_failures.py)."""

from __future__ import annotations

from contextlib import ExitStack
from dataclasses import dataclass
from typing import TYPE_CHECKING

from harness.drivers.base import MovableClock
from harness.sessions.actions import Action
from harness.sessions.draws import Draws
from harness.sessions.moves._failures import FailureRule, in_conversation
from harness.sessions.rules import Difference, Kind

if TYPE_CHECKING:
    from harness.sessions.model import SessionModel
    from harness.sessions.runner import SessionRunner


@dataclass(frozen=True)
class AppRestart(Action):
    """The app stopped and started on its data between two of the user's turns; her page stays open on the
    conversation, where she goes on."""

    kind = "restart the app"

    def gherkin(self) -> str:
        return f"When the app restarts while {self.user} is in a conversation"


class AppRestartRule(FailureRule[AppRestart]):
    """The restart: everyone read before it, the app started again under the same pages."""

    action = AppRestart
    kinds = (Kind("restart the app", 1),)

    def draw(self, kind: str, name: str, model: SessionModel, draws: Draws) -> AppRestart | None:
        return AppRestart(name) if in_conversation(name, model, draws) else None

    def perform(self, runner: SessionRunner, number: int, action: AppRestart) -> Difference | None:
        return runner.check_everyone(number - 1, runner.previous) or super().perform(runner, number, action)

    def act(self, runner: SessionRunner, number: int, action: AppRestart) -> Difference | None:
        """The app stopped and started on its data, at the same address; every page stays open. A settable clock
        starts again at today: it is moved on by the days the session has passed, as a real clock never goes back.
        A page that keeps a live connection to the app is back in touch with it before anyone acts again."""
        with ExitStack() as pages_back:
            for member in runner.members.values():
                pages_back.enter_context(member.actor.back_after_app_restart())
            runner.app = runner.app.restarted()
        if runner.model.day:
            runner.app.part(MovableClock).advance_clock(runner.app.running, runner.model.day)
        if runner.use_app is not None:
            runner.use_app(runner.app)
        return None


RULE = AppRestartRule()
