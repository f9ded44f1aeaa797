"""What the model of a generated session knows of each user: her conversations, what she told in them and what the
app keeps of it as memories, her memory switch, her account and her sign-in. The model (model.py) and its moves
(moves/) change it; the reads compare the app with it."""

from __future__ import annotations

from dataclasses import dataclass, field

from harness.vocabulary.turn import Turn


@dataclass(frozen=True)
class Statement:
    """A fact as told in a conversation: what the conversation's own turns say, whatever became of its memory."""

    key: str
    value: str
    sentence: str
    day: float  # when it was told, in days since the session began
    conversation: int  # the user's conversation it was told in (index)
    seq: int  # the action's number: a later statement of a key replaces an earlier one


@dataclass(frozen=True)
class Remembered:
    """One long-term memory as the app keeps it: a statement's, or (one memory per fact) the newest statement's in the
    place its fact was first given; an edit changes its value and text and keeps the rest."""

    key: str
    value: str
    sentence: str
    day: float  # when its statement was told: its age for the retention (an edit keeps it)
    conversation: int  # the conversation its statement was told in
    seq: int  # its statement's action: the newer of two memories of a fact is answered
    place: int  # the action that first told what holds its place in the list


@dataclass
class UserState:
    conversations: list[list[Turn]] = field(default_factory=list)  # their turns, in order
    activity: list[int] = field(default_factory=list)  # per conversation: the action number of its last turn
    deleted: set[int] = field(default_factory=set)  # the conversations the user deleted (indexes)
    current: int | None = None  # the conversation on screen; None: a new one, not yet started
    statements: list[Statement] = field(default_factory=list)
    remembered: list[Remembered] = field(default_factory=list)  # the app's memories of the user, in listed order
    memory_on: bool = True
    alive: bool = True
    account: int = 1  # how many accounts this person has opened with their address
    signed_in_day: float = 0  # when the user last signed in (their session's age counts from it)
    sign_ins: int = 1  # how many times the user signed in or opened the app again, on this account
