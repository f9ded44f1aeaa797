"""The plain model of a generated session: what each user must see and be answered, computed from the actions alone
(never from what the app returned). The promises it encodes are the README's memory contract."""

from __future__ import annotations

from dataclasses import dataclass, field

from harness.language import NOTED, answer_reply, told_reply
from harness.sessions.actions import (
    Action,
    Ask,
    Chat,
    DeleteAccount,
    ManyConversations,
    NewConversation,
    PassTime,
    Rejoin,
    Reopen,
    ReopenBrowser,
    SignOutAndIn,
    Tell,
)
from harness.target import MEMORY_LISTINGS
from harness.turn import Turn

EVERY_STATEMENT, NEWEST_PER_FACT = MEMORY_LISTINGS  # each statement a memory, oldest first; or one per fact


class NotApplicable(Exception):
    """The action cannot happen in this state (a deleted user acting, a conversation that does not exist)."""


def reply_to(tell: Tell) -> str:
    return told_reply((s.key, s.value) for s in tell.statements)


@dataclass(frozen=True)
class Statement:
    key: str
    value: str
    sentence: str
    day: float  # when it was told, in days since the session began
    conversation: int  # the user's conversation it was told in (index)
    seq: int  # the action's number: a later statement of a key replaces an earlier one


@dataclass
class UserState:
    conversations: list[list[Turn]] = field(default_factory=list)  # their turns, in order
    activity: list[int] = field(default_factory=list)  # per conversation: the action number of its last turn
    current: int | None = None  # the conversation on screen; None: a new one, not yet started
    statements: list[Statement] = field(default_factory=list)
    alive: bool = True
    account: int = 1  # how many accounts this person has opened with their address
    signed_in_day: float = 0  # when the user last signed in (their session's age counts from it)


class SessionModel:
    def __init__(self, users: list[str], retention_days: float | None = None,
                 memory_policy: str = EVERY_STATEMENT, session_days: float | None = None) -> None:
        if memory_policy not in MEMORY_LISTINGS:
            raise ValueError(f"unknown memory policy {memory_policy!r}; known: {', '.join(MEMORY_LISTINGS)}")
        self.users = {name: UserState() for name in users}
        self.retention_days = retention_days
        self.memory_policy = memory_policy
        self.session_days = session_days  # how long a sign-in lasts (None: longer than any session)
        self.day: float = 0
        self.seq = 0

    # -- applying actions ------------------------------------------------------------------------------------------
    def apply(self, action: Action) -> str | None:
        """Apply one action; return the reply it must get when it is a chat turn."""
        self.seq += 1
        if isinstance(action, PassTime):
            self.day += action.days
            for user in self.users.values():  # people come back to the app's start page: a new conversation
                user.current = None
            return None
        user = self._user(action.user)
        if isinstance(action, Rejoin):
            if user.alive:
                raise NotApplicable(f"{action.user}'s account was not deleted")
            self.users[action.user] = UserState(account=user.account + 1, signed_in_day=self.day)
            return None
        if not user.alive:
            raise NotApplicable(f"{action.user}'s account is deleted")
        if isinstance(action, Tell):
            return self._tell(user, action)
        if isinstance(action, ManyConversations):
            for i, tell in enumerate(action.tells):
                user.current = None  # each in a new conversation, each later than the one before
                self.seq += 1 if i else 0
                self._tell(user, tell)
            return None
        if isinstance(action, Ask):
            reply = self.answer(action.user, action.key)  # before the question joins the conversation
            self._turn(user, action.question, reply)
            return reply
        if isinstance(action, Chat):
            self._turn(user, action.text, NOTED)
            return NOTED
        if isinstance(action, Reopen):
            if not 1 <= action.conversation <= len(user.conversations):
                raise NotApplicable(f"{action.user} has no conversation {action.conversation}")
            user.current = action.conversation - 1
            return None
        if isinstance(action, (NewConversation, ReopenBrowser, SignOutAndIn)):
            user.current = None
            if isinstance(action, SignOutAndIn):
                user.signed_in_day = self.day
            return None
        if isinstance(action, DeleteAccount):
            user.alive = False
            return None
        raise NotApplicable(f"the model knows no action {type(action).__name__}")

    def _tell(self, user: UserState, tell: Tell) -> str:
        keys = [said.key for said in tell.statements]
        if len(set(keys)) != len(keys):
            raise NotApplicable(f"{tell.user} states one key twice in one message")
        for said in tell.statements:
            if not said.correction and any(s.key == said.key and self._remembered(user, s) for s in user.statements):
                raise NotApplicable(f"{tell.user} already told her {said.key}: that is a correction")
        reply = reply_to(tell)
        conversation = self._turn(user, tell.message, reply)
        user.statements += [Statement(said.key, said.value, said.sentence, self.day, conversation, self.seq)
                            for said in tell.statements]
        return reply

    def _user(self, name: str) -> UserState:
        if name not in self.users:
            raise NotApplicable(f"{name} is not one of the session's users")
        return self.users[name]

    def _turn(self, user: UserState, text: str, reply: str) -> int:
        if user.current is None:
            user.conversations.append([])
            user.activity.append(self.seq)
            user.current = len(user.conversations) - 1
        user.conversations[user.current] += [Turn("user", text), Turn("assistant", reply)]
        user.activity[user.current] = self.seq
        return user.current

    # -- what users must see ---------------------------------------------------------------------------------------
    def _remembered(self, user: UserState, s: Statement) -> bool:
        return self.retention_days is None or self.day - s.day < self.retention_days

    def answer(self, name: str, key: str) -> str:
        """The newest statement of the key the user can still be answered from: one in the conversation on screen
        (however old), or one still within the retention period (in any conversation)."""
        user = self.users[name]
        usable = [s for s in user.statements if s.key == key
                  and (s.conversation == user.current or self._remembered(user, s))]
        return answer_reply(key, max(usable, key=lambda s: s.seq).value if usable else None)

    def memories(self, name: str) -> list[str]:
        """The user's long-term memories as the app must list them, oldest first."""
        user = self.users[name]
        if not user.alive:
            return []
        kept = [s for s in user.statements if self._remembered(user, s)]
        if self.memory_policy == EVERY_STATEMENT:
            return [s.sentence for s in kept]
        newest: dict[str, Statement] = {}
        for s in user.statements:  # first-told order of keys, newest statement of each
            newest[s.key] = s
        return [newest[key].sentence for key in newest if self._remembered(user, newest[key])]

    def memory_actions(self, name: str) -> list[tuple[int, int]]:
        """For each of `memories(name)`, in the same order: the action that first told what holds its place (the
        fact's first statement, where a correction replaces the memory) and the action of its newest statement."""
        user = self.users[name]
        if not user.alive:
            return []
        if self.memory_policy == EVERY_STATEMENT:
            return [(s.seq, s.seq) for s in user.statements if self._remembered(user, s)]
        first: dict[str, Statement] = {}
        newest: dict[str, Statement] = {}
        for s in user.statements:
            first.setdefault(s.key, s)
            newest[s.key] = s
        return [(first[key].seq, newest[key].seq) for key in newest if self._remembered(user, newest[key])]

    def conversations(self, name: str) -> list[list[Turn]]:
        return self.users[name].conversations if self.users[name].alive else []

    def listed(self, name: str) -> list[int]:
        """The user's conversations (indexes) as the list shows them: the most recently active first."""
        user = self.users[name]
        return sorted(range(len(user.conversations)), key=lambda i: user.activity[i], reverse=True)

    def current(self, name: str) -> int | None:
        return self.users[name].current

    def session_expired(self, name: str) -> bool:
        """Whether the user's sign-in has outlived the app's session lifetime (they must sign in again)."""
        user = self.users[name]
        return self.session_days is not None and self.day - user.signed_in_day >= self.session_days

    def expired_sessions(self) -> list[str]:
        """The users alive whose sign-in has ended (after time passed): they must sign in again."""
        return [name for name, user in self.users.items() if user.alive and self.session_expired(name)]

    def signed_in_again(self, name: str) -> None:
        """The user signed in again after their session ended; the open conversation is left."""
        self.users[name].signed_in_day = self.day
        self.users[name].current = None

    def alive(self, name: str) -> bool:
        return self.users[name].alive

    def keys(self, name: str) -> list[str]:
        """Keys the user has stated, in the order first told (corrections included once)."""
        return list(dict.fromkeys(s.key for s in self.users[name].statements))

    def values(self) -> list[tuple[str, str]]:
        """Every (key, value) stated by anyone, to give another user an identical fact."""
        return [(s.key, s.value) for u in self.users.values() for s in u.statements]
