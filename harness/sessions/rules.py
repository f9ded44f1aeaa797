"""A move of the generated sessions as one unit, as Hypothesis's stateful `@rule` and `@precondition` keep a rule's
precondition, its action and the model's update together: when it may be drawn, how it is drawn, what it does to the
model (and which parts of the model's state it writes, and which the reads after it compare), how a user performs it
in the app, and what is read after it. Each move is a module of harness/sessions/moves/; the generator, the model and
the runner ask the move of an action or of a kind, and know none by its type."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from harness.sessions.actions import Action
from harness.sessions.draws import Draws, FollowUp

if TYPE_CHECKING:  # (the model and the runner find their moves here: these are what a move is given)
    from harness.sessions.model import SessionModel
    from harness.sessions.runner import SessionRunner

# The parts of the model's state a move can write, and the reads after a move compare (SessionModel.parts):
PARTS = frozenset({
    "turns",  # each conversation's turns, and the facts they state
    "conversations",  # which of the user's conversations are listed, in which order
    "open_conversation",  # the conversation on the user's screen (none: a new one)
    "memories",  # the app's long-term memories of the user
    "memory_switch",  # whether the user's memory is on
    "session",  # when the user last signed in, and how often
    "account",  # whether the user's account is there, and which of the person's accounts it is
    "clock",  # the day of the session (memories are kept for the retention, a sign-in lasts the session lifetime)
})
# What a check of a user's state reads (SessionRunner.check_user): the memories listed and searched (those kept, by
# the clock), the memory setting, the conversation list and every turn, and nothing of a deleted account.
CHECKED = frozenset({"memories", "clock", "memory_switch", "conversations", "turns", "account"})

A = TypeVar("A", bound=Action)


class NotApplicable(Exception):
    """The action cannot happen in this state (a deleted user acting, a conversation that does not exist)."""


@dataclass(frozen=True)
class Difference:
    """The first place the app and the model disagree."""

    number: int  # the action's number, from 1 (0: before the first action)
    action: Action | None
    what: str  # what was compared, e.g. "Ana's answer", "Ben's memories"
    expected: Any
    actual: Any
    ids: tuple[str, ...] = field(default=(), compare=False)  # the app's ids of what `actual` lists, where read

    @property
    def category(self) -> str:
        return self.what.split(" ", 1)[-1]

    def describe(self) -> str:
        where = f"action {self.number} ({self.action.gherkin()})" if self.action else "before the first action"
        text = (f"{where}: the app and the model disagree on {self.what}\n  expected: {self.expected!r}\n"
                f"  actual:   {self.actual!r}")
        if isinstance(self.expected, list) and isinstance(self.actual, list):  # which are missing, which are more
            expected, actual = Counter(map(repr, self.expected)), Counter(map(repr, self.actual))
            text += (f"\n  missing:  [{', '.join((expected - actual).elements())}]"
                     f"\n  extra:    [{', '.join((actual - expected).elements())}]")
        return text


@dataclass(frozen=True)
class Kind:
    """One kind of action a move draws, as plans count and print it."""

    name: str
    weight: int = 0  # how often it is drawn at random, relative to the other kinds (0: never at random)
    long_form_weight: int | None = None  # its weight in the long form, where that differs
    follows: bool = False  # drawn after another move (a follow-up, or by a user whose account is deleted)
    # The target's [forgetting] choice its prediction needs, and what the choice is about; without it, left out
    needs: tuple[str, str] | None = None
    limits: tuple[str, ...] = ()  # the target's [limits] its draws need; without any of them, left out
    clock: bool = False  # it moves the app's clock: left out where time cannot pass ("let time pass" left out)
    # Drawn once in a session, in the place of an action of this other kind (a way of doing it), where not left out;
    # its transitions are that kind's (Rule.shows_as), and none is required of it
    variant_of: str = ""


class Rule(Generic[A]):
    """A move: the record of one of its actions (`action`), its kinds, and everything the generator, the model and the
    runner do with it. A move with nothing to say to one of them keeps the default."""

    action: type[A]
    kinds: tuple[Kind, ...] = ()
    writes: frozenset[str] = frozenset()  # the parts of the model's state its effect can change (PARTS)
    # The parts its own outcome depends on, as its answer, refusal or page shows them (harness/sessions/pairs.py)
    acts_on: frozenset[str] = frozenset()
    reads: frozenset[str] = CHECKED  # the parts the reads after it compare
    leaving: bool = False  # what people do right after a reply (close the browser, ...): drawn for the last to act
    turn: bool = False  # a turn in the conversation on the user's screen, answered
    checked_after: bool = True  # False: the user's state is read after it only where the plan says (read_after)
    failure: bool = False  # a failure on the way: the user's next action goes on from it in the same page
    everyone: bool = False  # everyone's state is read after it, not only the acting user's

    # -- drawing ------------------------------------------------------------------------------------------------------
    def precondition(self, kind: str, model: SessionModel, name: str, draws: Draws) -> bool:
        """Whether `name` may take this move now; the generator gives a move it drew for someone who may not to
        another who may."""
        return True

    def draw(self, kind: str, name: str, model: SessionModel, draws: Draws) -> A | None:
        """One action of `kind` by `name` that fits the model's state, or None when none fits."""
        raise NotImplementedError(f"{type(self).__name__} draws no {kind!r}")

    def follow_up(self, follow: FollowUp, model: SessionModel, draws: Draws) -> A | None:
        """The action of a follow-up of this move's kind, when it still fits the model's state; a user whose account
        was deleted meanwhile drops every follow-up of hers."""
        if not model.alive(follow.user):
            draws.follow_ups = [f for f in draws.follow_ups if f.user != follow.user]
            return None
        return self.followed(follow, model, draws)

    def followed(self, follow: FollowUp, model: SessionModel, draws: Draws) -> A | None:
        """The follow-up's action by a user still there: as the move is drawn otherwise, unless it says more."""
        return self.draw(follow.kind, follow.user, model, draws)

    def follow_ups(self, action: A, model: SessionModel, draws: Draws, left_out: dict[str, str]) -> list[FollowUp]:
        """What the user does soon after this action to show what it did, drawn from the state before it."""
        return []

    def to_cover(self, kind: str, model: SessionModel, name: str, draws: Draws) -> bool:
        """Whether `name` drawing `kind` now covers something a short session must draw once (a wording, a value
        shape, an edge)."""
        return False

    def wants_first(self, kind: str, model: SessionModel, name: str, draws: Draws) -> str | None:
        """While `kind` is still to cover: a kind `name` draws first so that this one shows, if any."""
        return None

    def shows_as(self, action: A, model: SessionModel) -> str:
        """The kind whose transitions the action shows: its own, or, for a way of doing another kind, that kind's."""
        kind = next((k for k in self.kinds if k.name == action.kind), None)
        return kind.variant_of if kind is not None and kind.variant_of else action.kind

    def effects(self, model: SessionModel) -> dict[str, tuple[str, ...]]:
        """Per kind, the reads (harness.sessions.reads) its effect can change under the model's promises; a kind
        whose prediction the target's choices leave open, none."""
        return {}

    # -- the model ------------------------------------------------------------------------------------------------
    def apply(self, model: SessionModel, action: A) -> str | None:
        """What the action does to the model; the reply it must get, for a turn."""
        raise NotImplementedError(f"{type(self).__name__} does nothing to the model")

    # -- the app --------------------------------------------------------------------------------------------------
    def perform(self, runner: SessionRunner, number: int, action: A) -> Difference | None:
        """The action applied to the model and acted out; then the reads after it: the first difference, if any."""
        runner.applied(action)
        return self.act(runner, number, action) or runner.check_after(number, action, self.everyone)

    def act(self, runner: SessionRunner, number: int, action: A) -> Difference | None:
        """The action acted out by its user, and what it shows compared with the model."""
        return None
