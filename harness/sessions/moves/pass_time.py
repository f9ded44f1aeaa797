"""Days passing between two actions: to an hour inside or outside the edge of a promise with a time in it (a memory's
retention, a sign-in's lifetime) while such edges are still to cover, and now and then; else a plain span. Everyone
whose sign-in is still within its lifetime is still signed in, everyone else is asked to sign in."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from harness.drivers.base import MovableClock
from harness.sessions.actions import Action
from harness.sessions.draws import Draws
from harness.sessions.reads import KEPT, SIGNED_IN
from harness.sessions.rules import CHECKED, Difference, Kind, Rule

if TYPE_CHECKING:
    from harness.sessions.model import SessionModel
    from harness.sessions.runner import SessionRunner

DAYS = (1, 3, 10, 30, 90, 200, 400)  # 400 is past the retention of a year: everything told before is forgotten
HOUR = 1 / 24  # how far from a promise's edge time lands: well beyond the seconds a session runs for


@dataclass(frozen=True)
class PassTime(Action):
    days: float = 1
    boundary: str = ""  # which promise's edge it lands next to: "just inside the retention", ...

    kind = "let time pass"

    @property
    def boundaries(self) -> tuple[str, ...]:
        return (self.boundary,) if self.boundary else ()

    def gherkin(self) -> str:
        whole, hours = int(self.days), round((self.days - int(self.days)) * 24, 3)
        span = f"{whole} days" + (f" and {hours:g} hours" if hours else "")
        return f"When {span} pass" + (f" ({self.boundary})" if self.boundary else "")


class PassTimeRule(Rule[PassTime]):
    """Days passing for everyone, on the app's clock."""

    action = PassTime
    kinds = (Kind("let time pass", 4),)
    # (a sign-in that ended is made again before the user's next action: SessionModel.signed_in_again)
    writes = frozenset({"clock", "open_conversation", "session"})
    acts_on = frozenset({"clock", "session", "memories"})  # who is still signed in, what is still kept
    reads = CHECKED | {"session"}

    def to_cover(self, kind: str, model: SessionModel, name: str, draws: Draws) -> bool:
        return draws.boundary(model) is not None

    def effects(self, model: SessionModel) -> dict[str, tuple[str, ...]]:
        return {"let time pass": (KEPT if model.retention_days else ()) + ((SIGNED_IN,) if model.session_days else ())}

    def draw(self, kind: str, name: str, model: SessionModel, draws: Draws) -> PassTime:
        return draw_span(model, draws)

    def apply(self, model: SessionModel, action: PassTime) -> None:
        model.day += action.days
        for user in model.users.values():  # people come back to the app's start page: a new conversation
            user.current = None

    def perform(self, runner: SessionRunner, number: int, action: PassTime) -> Difference | None:
        """What the app was still writing has landed by then, with today's date (the model dates each memory by the
        action that told it): everyone who acted since their last check is checked first; then who is signed in,
        and everyone's state."""
        for name in [n for n in runner.plan.users if n in runner.acted]:
            difference = runner.check_user(number - 1, runner.previous, name)
            if difference:
                return difference
        runner.model.apply(action)
        runner.app.part(MovableClock).advance_clock(runner.app.running, action.days)
        return _signed_in_after_time(runner, number, action) or runner.check_everyone(number, action)


def _signed_in_after_time(runner: SessionRunner, number: int, action: PassTime) -> Difference | None:
    """After time passed, everyone whose sign-in is still within the session lifetime is signed in, everyone else is
    asked to sign in (and does, before her next action)."""
    for name in [n for n in runner.plan.users if runner.model.alive(n)]:
        actor = runner.members[name].actor
        actor.drop_api_session()
        actor.reload()
        expired = runner.model.session_expired(name)
        signed_in = actor.is_signed_in(expected=not expired)
        if signed_in == expired:
            return Difference(number, action, f"{name}'s sign-in after {action.days:g} days",
                              "asked to sign in" if expired else "still signed in",
                              "still signed in" if signed_in else "asked to sign in")
        if expired:
            runner.to_sign_in.add(name)
    return None


def draw_span(model: SessionModel, draws: Draws) -> PassTime:
    """Days to just inside or just outside the edge of a promise with a time in it (a memory's retention, a sign-in's
    lifetime) for someone, while such edges are still to be covered or now and then; else a plain span."""
    fake, limits = draws.fake, draws.limits
    edge = draws.boundary(model) or (
        fake.random_element(("just inside the retention", "just outside the retention", "", "", ""))
        if limits.retention_days else "")
    if "retention" in edge and limits.retention_days:
        ages = [model.day - m.day for u in model.users.values() if u.alive for m in u.remembered
                if model.day - m.day < limits.retention_days]
        if ages:
            left = limits.retention_days - fake.random_element(ages)
            if left > HOUR:
                return _edge(draws, edge, left)
    if "session" in edge and limits.session_days:
        ages = [model.day - u.signed_in_day for u in model.users.values() if u.alive]
        left = limits.session_days - min(ages) if ages else 0
        if left > HOUR:
            return _edge(draws, edge, left)
    return PassTime("", days=fake.random_element(DAYS))


def _edge(draws: Draws, edge: str, left: float) -> PassTime:
    if edge in draws.boundaries:
        draws.boundaries.remove(edge)
    return PassTime("", days=left + (-HOUR if "inside" in edge else HOUR), boundary=edge)


RULE = PassTimeRule()
