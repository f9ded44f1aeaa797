"""Deleting a user's account (not before the follow-ups of what she took back, nor at the very end): her old session
refused, nothing of hers left in the app's store; the person opens an account again with the same address soon
after."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from harness.drivers.base import Account, AccountRemains, Capability
from harness.sessions.actions import Action
from harness.sessions.draws import ENDING, Draws, FollowUp
from harness.sessions.reads import MEMORIES, ORDER, SEARCH, SIGNED_IN
from harness.sessions.rules import CHECKED, Difference, Kind, Rule

if TYPE_CHECKING:
    from harness.sessions.model import SessionModel
    from harness.sessions.runner import SessionRunner


@dataclass(frozen=True)
class DeleteAccount(Action):
    kind = "delete an account"

    def gherkin(self) -> str:
        return f"When {self.user}'s account is deleted"


class DeleteAccountRule(Rule[DeleteAccount]):
    """The account deleted through the app's admin API, and everyone read after it."""

    action = DeleteAccount
    kinds = (Kind("delete an account", 2),)
    leaving = True
    everyone = True
    writes = frozenset({"account"})
    acts_on = frozenset({"account", "session"})
    reads = CHECKED | {"session"}

    def effects(self, model: SessionModel) -> dict[str, tuple[str, ...]]:
        return {"delete an account": (ORDER, MEMORIES, SEARCH, SIGNED_IN)}

    def draw(self, kind: str, name: str, model: SessionModel, draws: Draws) -> DeleteAccount | None:
        return DeleteAccount(name) if model.conversations(name) and not draws.pending(name) and (
            draws.left > ENDING) else None

    def follow_ups(self, action: DeleteAccount, model: SessionModel, draws: Draws,
                   left_out: dict[str, str]) -> list[FollowUp]:
        return [] if "open an account again" in left_out else [FollowUp(action.user, "open an account again")]

    def apply(self, model: SessionModel, action: DeleteAccount) -> None:
        model.acting(action.user).alive = False

    def act(self, runner: SessionRunner, number: int, action: DeleteAccount) -> Difference | None:
        actor = runner.members[action.user].actor
        held = actor.held_session()
        had = (actor.session.conversation_ids(), [m.id for m in actor.session.memories()])
        runner.app.delete_user(actor.account)
        actor.leave()
        return (runner.old_session_refused(number, action, held, "the account's deletion")
                or _nothing_left(runner, number, action, actor.account, had))


def _nothing_left(runner: SessionRunner, number: int, action: DeleteAccount, account: Account,
                  had: tuple[list[str], list[str]]) -> Difference | None:
    """Where the driver can read the app's store: no row of the deleted account is left in it."""
    app = runner.app
    if not (app.offers(Capability.DATABASE_ACCESS) or app.offers(Capability.ACCOUNT_REMAINS)):
        runner.note_not_checked("what the store keeps of a deleted account", app.why_not(Capability.ACCOUNT_REMAINS))
        return None
    left = {kind: n for kind, n in app.part(AccountRemains).remains_of(app.running, account, *had).items() if n}
    if left:
        return Difference(number, action, f"what the store keeps of {action.user}'s deleted account", {}, left)
    return None


RULE = DeleteAccountRule()
