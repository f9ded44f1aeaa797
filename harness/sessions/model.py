"""The plain model of a generated session: what each user must see and be answered, computed from the actions alone
(never from what the app returned). The promises it encodes are the README's memory contract, and where apps differ
in what taking memory back does, the target's documented choices ([forgetting]). What each action does is its move's
(harness/sessions/moves/); the model holds the users' state (state.py), what several moves do alike (a turn, a
memory kept as the app's listing says) and what users must see."""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import replace

from harness.app.target import MEMORY_LISTINGS, Forgetting
from harness.sessions.actions import Action
from harness.sessions.moves import rule_of
from harness.sessions.rules import NotApplicable
from harness.sessions.state import Remembered, Statement, UserState
from harness.vocabulary.language import answer_reply
from harness.vocabulary.turn import Turn

# each statement a memory, oldest first; or one per fact, replaced in its place or as a new memory
EVERY_STATEMENT, NEWEST_PER_FACT, NEWEST_AS_NEW = MEMORY_LISTINGS


class SessionModel:
    def __init__(self, users: list[str], retention_days: float | None = None,
                 memory_policy: str = EVERY_STATEMENT, session_days: float | None = None,
                 forgetting: Forgetting | None = None) -> None:
        if memory_policy not in MEMORY_LISTINGS:
            raise ValueError(f"unknown memory policy {memory_policy!r}; known: {', '.join(MEMORY_LISTINGS)}")
        self.users = {name: UserState() for name in users}
        self.retention_days = retention_days
        self.memory_policy = memory_policy
        self.session_days = session_days  # how long a sign-in lasts (None: longer than any session)
        self.forgetting = forgetting or Forgetting()  # the app's documented choices; None each: not declared
        self.day: float = 0
        self.seq = 0
        self.keys_told: dict[str, None] = {}  # every key anyone told, deleted accounts' too, in the order first told

    # -- applying actions ------------------------------------------------------------------------------------------
    def apply(self, action: Action) -> str | None:
        """Apply one action; return the reply it must get when it is a chat turn."""
        self.seq += 1
        return rule_of(action).apply(self, action)

    def parts(self) -> dict[str, Hashable]:
        """Every user's state by the parts moves declare they write (harness.sessions.rules.PARTS), and the clock."""
        users = [self.users[name] for name in sorted(self.users)]
        return {
            "turns": tuple((tuple(map(tuple, u.conversations)), tuple(u.statements)) for u in users),
            "conversations": tuple((tuple(sorted(u.deleted)), tuple(u.activity)) for u in users),
            "open_conversation": tuple(u.current for u in users),
            "memories": tuple(tuple(u.remembered) for u in users),
            "memory_switch": tuple(u.memory_on for u in users),
            "session": tuple((u.signed_in_day, u.sign_ins) for u in users),
            "account": tuple((u.alive, u.account) for u in users),
            "clock": self.day,
        }

    def adopt_memories(self, name: str, texts: list[str]) -> bool:
        """The user's memories become those the app lists (a known defect of the app's, declared by its target): each
        one the model holds, else the newest statement of the user's that reads so. False, and nothing changed, when
        the app lists a text the user never told."""
        user = self.user(name)
        kept, adopted = list(user.remembered), []
        for text in texts:
            held = next((m for m in kept if m.sentence == text), None)
            if held is not None:
                kept.remove(held)
                adopted.append(held)
                continue
            said = next((s for s in reversed(user.statements) if s.sentence == text), None)
            if said is None:
                return False
            adopted.append(Remembered(said.key, said.value, said.sentence, said.day, said.conversation, said.seq,
                                      place=said.seq))
        user.remembered = adopted + [m for m in kept if not self._remembered(m)]  # expired ones stay unlisted
        return True

    def taken_back(self, name: str, texts: list[str]) -> bool:
        """Whether each text is one the user told on her account now and no other user told: a memory of hers the app
        no longer lists (taken back, or replaced), never another's."""
        own = {s.sentence for s in self.users[name].statements}
        others = {s.sentence for n, u in self.users.items() if n != name for s in u.statements}
        return all(t in own and t not in others for t in texts)

    def reading(self, user: UserState, name: str, text: str) -> Remembered:
        """The user's first memory (as listed) that reads `text`: the one the memories page acts on."""
        found = next((m for m in user.remembered if m.sentence == text and self._remembered(m)), None)
        if found is None:
            raise NotApplicable(f"{name} has no memory that reads {text!r}")
        return found

    def remember(self, user: UserState, s: Statement) -> None:
        """A statement the app keeps as a memory, as its memory listing says."""
        memory = Remembered(s.key, s.value, s.sentence, s.day, s.conversation, s.seq, place=s.seq)
        same = [i for i, m in enumerate(user.remembered) if m.key == s.key]
        if self.memory_policy == NEWEST_PER_FACT and same:  # the fact's memory replaced, in its place
            user.remembered[same[0]] = replace(memory, place=user.remembered[same[0]].place)
        elif self.memory_policy == NEWEST_AS_NEW and same:  # the fact's memory deleted, the statement a new one
            del user.remembered[same[0]]
            user.remembered.append(memory)
        else:
            user.remembered.append(memory)

    def _remembers(self, user: UserState, key: str) -> bool:
        return any(m.key == key and self._remembered(m) for m in user.remembered)

    def user(self, name: str) -> UserState:
        """One of the session's users, whatever became of her account."""
        if name not in self.users:
            raise NotApplicable(f"{name} is not one of the session's users")
        return self.users[name]

    def acting(self, name: str) -> UserState:
        """The user who acts: one of the session's, her account not deleted."""
        user = self.user(name)
        if not user.alive:
            raise NotApplicable(f"{name}'s account is deleted")
        return user

    def add_turn(self, user: UserState, text: str, reply: str) -> int:
        """A turn and its reply in the conversation on the user's screen (a new one where none is); its index."""
        if user.current is None:
            user.conversations.append([])
            user.activity.append(self.seq)
            user.current = len(user.conversations) - 1
        user.conversations[user.current] += [Turn("user", text), Turn("assistant", reply)]
        user.activity[user.current] = self.seq
        return user.current

    # -- what users must see ---------------------------------------------------------------------------------------
    def _remembered(self, memory: Remembered) -> bool:
        return self.retention_days is None or self.day - memory.day < self.retention_days

    def answer(self, name: str, key: str) -> str:
        """The newest statement of the key the user can still be answered from: one the conversation on screen
        says in its own turns (however old), or a memory of theirs still kept (within the retention period, not
        taken back) while their memory is on. An edited memory is answered by its new value, also in the
        conversation its statement was told in (the edit came after the turn); it keeps its statement's age."""
        return self.answer_in(name, key, self.users[name].current)

    def answer_in(self, name: str, key: str, conversation: int | None) -> str:
        """The answer to the key in the user's conversation (an index; None: a new one)."""
        user = self.users[name]
        said = [(s.seq, 0, s.value) for s in user.statements if s.key == key and s.conversation == conversation]
        kept = [(m.seq, 1, m.value) for m in user.remembered
                if m.key == key and self._remembered(m)] if user.memory_on else []
        newest = max(said + kept, default=None)
        return answer_reply(key, newest[2] if newest else None)

    def keys_said_in(self, name: str, conversation: int) -> list[str]:
        """The keys the conversation's own turns state, in the order first told there."""
        return list(dict.fromkeys(s.key for s in self.users[name].statements if s.conversation == conversation))

    def sign_in_state(self, name: str) -> tuple[bool, int, float, int]:
        """Who is signed in where: alive, which of the person's accounts, since when, how many sign-ins or openings."""
        user = self.users[name]
        return user.alive, user.account, user.signed_in_day, user.sign_ins

    def remembered(self, name: str) -> list[Remembered]:
        """The user's long-term memories as the app must list them, oldest first (each in its place)."""
        user = self.users[name]
        return [m for m in user.remembered if self._remembered(m)] if user.alive else []

    def memories(self, name: str) -> list[str]:
        """The user's long-term memories as the app must list them, oldest first: their texts."""
        return [m.sentence for m in self.remembered(name)]

    def memory_actions(self, name: str) -> list[tuple[int, int]]:
        """For each of `memories(name)`, in the same order: the action that first told what holds its place (the
        fact's first statement, where a correction replaces the memory) and the action of its newest statement."""
        return [(m.place, m.seq) for m in self.remembered(name)]

    def memory_on(self, name: str) -> bool:
        return self.users[name].memory_on

    def remembers(self, name: str, key: str) -> bool:
        """Whether the user has a memory of the fact still kept (telling it again is then a correction)."""
        return self._remembers(self.users[name], key)

    def conversations(self, name: str) -> list[list[Turn]]:
        """Every turn of each conversation the user started, by its number less one (deleted ones too: `listed` says
        which are left)."""
        return self.users[name].conversations if self.users[name].alive else []

    def title(self, name: str, conversation: int, length: int) -> str:
        """The conversation's title in the list: its first message, cut to `length` characters."""
        turns = self.users[name].conversations[conversation]
        return turns[0].text[:length] if turns else ""

    def preview(self, name: str, conversation: int, length: int) -> str:
        """The conversation's preview in the list: its last message, whoever said it, cut to `length` characters."""
        turns = self.users[name].conversations[conversation]
        return turns[-1].text[:length] if turns else ""

    def listed(self, name: str) -> list[int]:
        """The user's conversations (indexes) as the list shows them: the most recently active first, none deleted."""
        user = self.users[name]
        kept = [i for i in range(len(user.conversations)) if i not in user.deleted]
        return sorted(kept, key=lambda i: user.activity[i], reverse=True)

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
        self.users[name].sign_ins += 1
        self.users[name].current = None

    def alive(self, name: str) -> bool:
        return self.users[name].alive

    def keys(self, name: str) -> list[str]:
        """Keys the user has stated, in the order first told (corrections included once)."""
        return list(dict.fromkeys(s.key for s in self.users[name].statements))

    def values(self, but: str | None = None) -> list[tuple[str, str]]:
        """Every (key, value) stated by anyone (but one user), to give another user an identical fact."""
        return [(s.key, s.value) for name, u in self.users.items() if name != but for s in u.statements]
