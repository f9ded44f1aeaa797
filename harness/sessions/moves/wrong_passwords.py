"""Wrong passwords typed at another user's address from the same network address (as behind one proxy), one fewer
than the target's sign-in throttle locks at ([limits] sign_in_failures); then the victim types her own and must be
let in."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from harness.drivers.base import PasswordSignIn
from harness.sessions.draws import Draws
from harness.sessions.moves._hostile import Against, HostileRule
from harness.sessions.rules import Difference, Kind

if TYPE_CHECKING:
    from harness.sessions.model import SessionModel
    from harness.sessions.runner import SessionRunner


@dataclass(frozen=True)
class WrongPasswords(Against):
    """Wrong passwords typed at another user's address from the same network address (as behind one proxy), fewer
    than the target's sign-in throttle locks at; then the victim types her own and must be let in."""

    count: int = 1

    kind = "type wrong passwords at another's address"

    def gherkin(self) -> str:
        return (f"When {self.user} types {self.count} wrong passwords at {self.victim}'s address, and {self.victim} "
                "then signs in with her own")


class WrongPasswordsRule(HostileRule[WrongPasswords]):
    """Wrong passwords at the victim's address, then her own: let in, the victim read after it."""

    action = WrongPasswords
    kinds = (Kind("type wrong passwords at another's address", 1),)

    def draw(self, kind: str, name: str, model: SessionModel, draws: Draws) -> WrongPasswords | None:
        others = [u for u in model.users if u != name and model.alive(u)]
        return WrongPasswords(name, victim=draws.fake.random_element(others), count=max(1, (
            draws.limits.sign_in_failures or 4) - 1)) if others else None

    def act(self, runner: SessionRunner, number: int, action: WrongPasswords) -> Difference | None:
        """Through the app's API, from the suite's own network address, each refused; then the victim's own password
        lets her in, and everything of hers is as the model says."""
        victim = runner.members[action.victim].actor.account
        sign_in = runner.app.part(PasswordSignIn)
        for attempt in range(1, action.count + 1):
            if not sign_in.try_sign_in(runner.app.running, victim.email, f"wrong-{attempt}-{victim.password}"):
                return Difference(number, action, f"{action.user}'s wrong password {attempt} at {action.victim}'s "
                                  "address", "refused", "let in")
        said = sign_in.try_sign_in(runner.app.running, victim.email, victim.password)
        if said:
            return Difference(number, action, f"{action.victim}'s own password after {action.count} wrong ones by "
                              f"{action.user}", "let in", said)
        return runner.check_user(number, action, action.victim)


RULE = WrongPasswordsRule()
