"""What the failures on the way have in common (moves/refused_send.py, dropped_reply.py, app_restart.py): each happens
in the conversation the user has open, which stays open in the same page, and she goes on there: a fact told next (a
follow-up) must be remembered, nothing lost or doubled. What the app keeps of each (docs/contract.md, After a
failure):

- a send refused by the app's server: nothing of it is stored (no turn, no memory);
- a reply dropped on its way to the page: the app stored the turn and its reply, once (the conversation answers from
  it, as from any of its turns); nothing of it is remembered long term where the page writes a turn's memories once it
  has the reply, as the reference app does (an app that wrote them on the server would remember them: [forgetting]
  dropped_reply);
- the app restarted on its data between two turns: nothing changes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from harness.sessions.actions import Action, Said
from harness.sessions.draws import Draws, FollowUp
from harness.sessions.moves import ask, chat, tell
from harness.sessions.moves._turns import TurnRule
from harness.sessions.moves.ask import Ask
from harness.sessions.moves.chat import Chat
from harness.sessions.moves.tell import Tell
from harness.sessions.rules import Difference, NotApplicable, Rule

if TYPE_CHECKING:
    from harness.sessions.model import SessionModel, UserState
    from harness.sessions.runner import SessionRunner
    from harness.users.actor import Actor

# The turns a send that fails can be, by the kind each is drawn as: one fact at most, a question, small talk.
TURNS: dict[str, TurnRule[Any]] = {"tell": tell.RULE, "ask": ask.RULE, "chat": chat.RULE}
_BY_RECORD = {rule.action: rule for rule in TURNS.values()}


@dataclass(frozen=True)
class FailedTurn(Action):
    """A turn that fails on its way; the user stays in the same page and goes on, the conversation stays open."""

    turn: Tell | Ask | Chat = Chat("")

    @property
    def classes(self) -> tuple[str, ...]:
        return self.turn.classes

    @property
    def told(self) -> tuple[tuple[Said, ...], ...]:
        return self.turn.told

    @property
    def boundaries(self) -> tuple[str, ...]:
        return self.turn.boundaries


F = TypeVar("F", bound=Action)
T = TypeVar("T", bound=FailedTurn)


def turn_rule(turn: Action) -> TurnRule[Any]:
    """The move of a turn whose send failed: what the app keeps of it, where it kept it."""
    return _BY_RECORD[type(turn)]


def in_conversation(name: str, model: SessionModel, draws: Draws) -> bool:
    """Whether a failure of the user's can be drawn now: a conversation open, and no follow-up of hers waiting."""
    return model.current(name) is not None and not draws.pending(name)


class FailureRule(Rule[F]):
    """A failure on the way: drawn where the user is in a conversation; her next action goes on from it."""

    failure = True
    acts_on = frozenset({"open_conversation", "turns"})  # the conversation it happens in

    def effects(self, model: SessionModel) -> dict[str, tuple[str, ...]]:
        return {kind.name: () for kind in self.kinds}  # nothing changes, unless the move says

    def follow_ups(self, action: F, model: SessionModel, draws: Draws, left_out: dict[str, str]) -> list[FollowUp]:
        return [FollowUp(action.user, "tell")]  # she goes on in the same page: a fact told there

    def apply(self, model: SessionModel, action: F) -> str | None:
        user = model.acting(action.user)
        if user.current is None:
            raise NotApplicable(f"{action.user} has no conversation open for a failure to happen in")
        self.keep(model, user, action)
        return None

    def keep(self, model: SessionModel, user: UserState, action: F) -> None:
        """What the app keeps of the failure (nothing, unless the move says)."""

    def perform(self, runner: SessionRunner, number: int, action: F) -> Difference | None:
        """The failure acted out; then the user's state, and again after her next action (SessionRunner)."""
        runner.applied(action)
        difference = self.act(runner, number, action)
        if difference:
            return difference
        runner.failed[action.user] = number
        return runner.check_user(number, action, action.user)


class FailedTurnRule(FailureRule[T]):
    """A turn whose send fails on the way: one fact at most, a question or small talk, drawn as those are; the page
    must say it was not sent."""

    def draw(self, kind: str, name: str, model: SessionModel, draws: Draws) -> T | None:
        if not in_conversation(name, model, draws):
            return None
        said = draws.fake.random_element(tuple(TURNS))
        turn = TURNS[said].draw(said, name, model, draws)
        return None if turn is None else self.action(name, turn=turn)

    def act(self, runner: SessionRunner, number: int, action: T) -> Difference | None:
        shown = self.send(runner.members[action.user].actor, action.turn.typed)
        if not shown.strip():
            return Difference(number, action, f"{action.user}'s error on the page",
                              "an error saying the message was not sent", "no error")
        return None

    def send(self, actor: Actor, text: str) -> str:
        """The message sent so that it fails; what the page says of it."""
        raise NotImplementedError
