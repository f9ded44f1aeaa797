"""The actions of a generated session, each with the Gherkin-like line that reproduces it by hand: what every action
is (each move's own record is in its module, harness/sessions/moves/), and the script of a run."""

from __future__ import annotations

import json
from dataclasses import dataclass


def quoted(text: str) -> str:
    """A message quoted as JSON writes a string: one line, newlines and backslashes escaped, nothing else."""
    return json.dumps(text, ensure_ascii=False)


@dataclass(frozen=True)
class Action:
    """One action of a session, by its user ("" for one of nobody in particular: time passing)."""

    user: str

    kind = "action"

    @property
    def classes(self) -> tuple[str, ...]:
        """The character classes of the text this action types."""
        return ()

    @property
    def told(self) -> tuple[tuple[Said, ...], ...]:
        """The facts this action tells, message by message."""
        return ()

    @property
    def boundaries(self) -> tuple[str, ...]:
        """The edges of promises this action lands on (a span of time, a message at the longest), besides the values
        it tells."""
        return ()

    def gherkin(self) -> str:
        raise NotImplementedError


@dataclass(frozen=True)
class OnConversation(Action):
    """An action on one of the user's conversations, named as she finds it in her list."""

    conversation: int = 0  # the user's n-th conversation, counted from 1 in the order they were started


@dataclass(frozen=True)
class Said:
    """One fact of a message: its key (normalised, as facts are matched), its value and sentence as typed."""

    key: str
    value: str
    sentence: str
    value_class: str = "plain"
    correction: bool = False


def script(users: list[str], actions: list[Action], numbered: bool = True) -> str:
    """The Gherkin-like list of actions that reproduces a run."""
    who = users[0] if len(users) == 1 else ", ".join(users[:-1]) + f" and {users[-1]}"
    lines = [f"Given {who} {'is' if len(users) == 1 else 'are'} signed in"
             f"{', in a browser profile of their own' if len(users) == 1 else ', each in their own browser profile'}"]
    for i, action in enumerate(actions, 1):
        lines.append(f"{i:>4}. {action.gherkin()}" if numbered else action.gherkin())
    lines.append("Then everything each user was told is remembered exactly as the model says")
    return "\n".join(lines)
