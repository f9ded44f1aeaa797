"""Wrong passwords typed at another user's address from the same network address (as behind one proxy), as many as
the target's sign-in throttle locks at ([limits] sign_in_failures): the victim's own password is refused while she is
locked out, everyone else's lets them in from that same address (the lock is hers only: a matcher that takes her
address for a pattern locks a near-colliding one too), and once the declared lockout has passed on the app's clock
her own password lets her in again. The victim is preferably one whose address another's matches as a pattern."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from harness.app.target import THROTTLE_KEYS
from harness.drivers.base import MovableClock, PasswordSignIn
from harness.sessions.draws import Draws
from harness.sessions.moves._hostile import Against, HostileRule
from harness.sessions.rules import Difference, Kind

if TYPE_CHECKING:
    from harness.sessions.model import SessionModel
    from harness.sessions.runner import SessionRunner

MINUTE = 1 / (24 * 60)  # of a day, the model's unit of time
PAST_THE_LOCKOUT = 1  # minutes past the declared lockout that the clock is moved on by
MARGIN = 10  # minutes every promise with a time in it must still have left after the lockout, so that none ends in it


@dataclass(frozen=True)
class LockOut(Against):
    """As many wrong passwords at the victim's address as lock it, then the victim's own password, refused; everyone
    else's, let in; the lockout passing on the app's clock; the victim's own password, let in."""

    count: int = 5
    minutes: float = 15  # the declared lockout

    kind = "lock another out with wrong passwords"

    def gherkin(self) -> str:
        return (f"When {self.user} types {self.count} wrong passwords at {self.victim}'s address, and {self.victim} "
                f"signs in with her own before and after {self.minutes + PAST_THE_LOCKOUT:g} minutes pass")


class LockOutRule(HostileRule[LockOut]):
    """The victim locked out by another's wrong passwords, and let in once the lockout has passed."""

    action = LockOut
    kinds = (Kind("lock another out with wrong passwords", 1, limits=("sign_in_failures", "sign_in_lockout_minutes"),
                  clock=True),)
    writes = frozenset({"clock"})

    def precondition(self, kind: str, model: SessionModel, name: str, draws: Draws) -> bool:
        """Another user to lock out, and no memory's retention nor anyone's sign-in ending within the lockout."""
        minutes = draws.limits.sign_in_lockout_minutes
        if not draws.limits.sign_in_failures or minutes is None:
            return False
        left = (minutes + PAST_THE_LOCKOUT + MARGIN) * MINUTE
        alive = [u for u in model.users.values() if u.alive]
        sessions = [model.session_days - (model.day - u.signed_in_day) for u in alive] if model.session_days else []
        retention = model.retention_days
        ages = [model.day - m.day for u in alive for m in u.remembered]
        kept = [retention - age for age in ages if age < retention] if retention else []
        others = [n for n in model.users if n != name and model.alive(n)]
        # (where another would have a near-colliding victim, the victim is not the one who types)
        return (bool(others) and not (_matched_by_another(name, draws)
                                      and not any(_matched_by_another(n, draws) for n in others))
                and all(remaining > left for remaining in sessions + kept))

    def draw(self, kind: str, name: str, model: SessionModel, draws: Draws) -> LockOut | None:
        if not self.precondition(kind, model, name, draws):
            return None
        others = [u for u in model.users if u != name and model.alive(u)]
        confused = [u for u in others if _matched_by_another(u, draws)]
        assert draws.limits.sign_in_failures and draws.limits.sign_in_lockout_minutes is not None
        return LockOut(name, victim=draws.fake.random_element(confused or others),
                       count=draws.limits.sign_in_failures, minutes=draws.limits.sign_in_lockout_minutes)

    def apply(self, model: SessionModel, action: LockOut) -> None:
        super().apply(model, action)
        model.day += (action.minutes + PAST_THE_LOCKOUT) * MINUTE

    def act(self, runner: SessionRunner, number: int, action: LockOut) -> Difference | None:
        """Through the app's API, from the suite's own network address: each wrong password refused, then the
        victim's own; everyone else's let in where the target counts by account; the app's clock moved past the
        lockout, the victim's own let in, and everything of hers as the model says."""
        victim = runner.members[action.victim].actor.account
        sign_in, running = runner.app.part(PasswordSignIn), runner.app.running
        for attempt in range(1, action.count + 1):
            if not sign_in.try_sign_in(running, victim.email, f"wrong-{attempt}-{victim.password}"):
                return Difference(number, action, f"{action.user}'s wrong password {attempt} at {action.victim}'s "
                                  "address", "refused", "let in")
        if not sign_in.try_sign_in(running, victim.email, victim.password):
            return Difference(number, action, f"{action.victim}'s own password after {action.count} wrong ones by "
                              f"{action.user}", "refused until the lockout has passed", "let in")
        if runner.app.target.limits.sign_in_failures_per != THROTTLE_KEYS[2]:  # (counted by account too)
            for name in [n for n in runner.plan.users if n != action.victim and runner.model.alive(n)]:
                account = runner.members[name].actor.account
                said = sign_in.try_sign_in(running, account.email, account.password)
                if said:
                    return Difference(number, action, f"{name}'s own password while {action.victim} is locked out",
                                      "let in", said)
        runner.app.part(MovableClock).advance_clock(running, (action.minutes + PAST_THE_LOCKOUT) * MINUTE)
        said = sign_in.try_sign_in(running, victim.email, victim.password)
        if said:
            return Difference(number, action, f"{action.victim}'s own password once the lockout of "
                              f"{action.minutes:g} minutes has passed", "let in", said)
        return runner.check_user(number, action, action.victim)


def _matched_by_another(name: str, draws: Draws) -> bool:
    """Whether another user's address, read as a SQL LIKE pattern (`_` any one character, `%` any run, no case),
    matches hers: a throttle that matches so locks that user out with her."""
    mine = draws.addresses.get(name, "")
    return any(re.fullmatch("".join(".*" if c == "%" else "." if c == "_" else re.escape(c) for c in theirs), mine,
                            re.IGNORECASE)
               for other, theirs in draws.addresses.items() if other != name and theirs != mine)


RULE = LockOutRule()
