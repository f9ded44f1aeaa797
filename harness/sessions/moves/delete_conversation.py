"""Deleting a conversation from the list, preferably one that told facts: gone from the list shown, nothing of it at
its address, refused by the API; its memories kept or deleted as the target documents ([forgetting]
conversation_deleted)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from harness.sessions.actions import OnConversation
from harness.sessions.draws import Draws
from harness.sessions.moves._taking_back import TakingBackRule
from harness.sessions.reads import KEPT, ORDER
from harness.sessions.rules import Difference, Kind, NotApplicable

if TYPE_CHECKING:
    from harness.sessions.model import SessionModel
    from harness.sessions.runner import SessionRunner


@dataclass(frozen=True)
class DeleteConversation(OnConversation):
    kind = "delete a conversation"

    def gherkin(self) -> str:
        return f"When {self.user} deletes her conversation {self.conversation} from the conversation list"


class DeleteConversationRule(TakingBackRule[DeleteConversation]):
    """A conversation of the user's list deleted, from the list (or through the API)."""

    action = DeleteConversation
    kinds = (Kind("delete a conversation", 2,
                  needs=("conversation_deleted", "the memories told in a deleted conversation")),)
    writes = frozenset({"conversations", "open_conversation", "memories"})
    acts_on = frozenset({"conversations", "turns", "memories"})  # the one she picks, and the memories it told

    def effects(self, model: SessionModel) -> dict[str, tuple[str, ...]]:
        choice = model.forgetting.conversation_deleted
        if choice is None:
            return {}
        return {"delete a conversation": (ORDER, *(KEPT if choice.memories == "deleted" else ()))}

    def holds(self, model: SessionModel, name: str) -> bool:
        return bool(model.listed(name))

    def take(self, name: str, model: SessionModel, draws: Draws) -> DeleteConversation:
        told_in = {s.conversation for s in model.users[name].statements}
        listed = model.listed(name)
        return DeleteConversation(name, conversation=draws.fake.random_element(
            [i for i in listed if i in told_in] or listed) + 1)

    def apply(self, model: SessionModel, action: DeleteConversation) -> None:
        """Gone from the list and its address; its memories kept or deleted as the app documents. The user looked
        at its address and went back to the start page: a new conversation."""
        user = model.acting(action.user)
        choice = model.forgetting.conversation_deleted
        if choice is None:
            raise NotApplicable("the target declares no [forgetting] conversation_deleted")
        index = action.conversation - 1
        if index not in model.listed(action.user):
            raise NotApplicable(f"{action.user} has no conversation {action.conversation} in her list")
        user.deleted.add(index)
        if choice.memories == "deleted":
            user.remembered = [m for m in user.remembered if m.conversation != index]
        user.current = None

    def act(self, runner: SessionRunner, number: int, action: DeleteConversation) -> Difference | None:
        """From the list (or through the API): gone from the list shown, nothing of it shown at its address, and
        refused by the API; then back at the app's start address."""
        name, member, model = action.user, runner.members[action.user], runner.model
        gone, turns = member.ids[action.conversation - 1], model.conversations(name)[action.conversation - 1]
        actor = member.actor
        actor.delete_conversation(gone)
        expected = [member.ids[i] for i in model.listed(name)]
        listed = actor.conversations_listed(len(expected))
        if listed != expected:
            return Difference(number, action, f"{name}'s conversation list on the page", expected, listed)
        status = actor.open_by_address(gone)
        shown = actor.shown_text()
        kept = [t.text for i in model.listed(name) for t in model.conversations(name)[i]]
        # What only the deleted conversation said (a text another conversation holds may be in the list's titles).
        leaked = [t.text for t in turns if t.text in shown and not any(t.text in k for k in kept)]
        actor.reload()
        if leaked:
            return Difference(number, action, f"{name}'s deleted conversation at its address",
                              "none of its turns", f"HTTP {status}: {leaked}")
        answer = actor.session.ask_for_conversation(gone)
        if not answer.refused:
            return Difference(number, action, f"{name}'s request for her deleted conversation", "refused",
                              f"HTTP {answer.status}")
        return None


RULE = DeleteConversationRule()
