"""The actions of a generated session, each with the Gherkin-like line that reproduces it by hand."""

from __future__ import annotations

import json
from dataclasses import dataclass


def quoted(text: str) -> str:
    """A message quoted as JSON writes a string: one line, newlines and backslashes escaped, nothing else."""
    return json.dumps(text, ensure_ascii=False)


@dataclass(frozen=True)
class Action:
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
class Said:
    """One fact of a message: its key (normalised, as facts are matched), its value and sentence as typed."""

    key: str
    value: str
    sentence: str
    value_class: str = "plain"
    correction: bool = False


@dataclass(frozen=True)
class Tell(Action):
    """States a fact (a correction when the user had stated the key before), maybe with more facts after it in the
    same message."""

    key: str = ""
    value: str = ""
    sentence: str = ""  # the fact as typed ("Oh, and my dog is Rex.")
    prefix: str = ""  # small talk typed before it in the same message, if any
    separator: str = " "
    value_class: str = "plain"
    correction: bool = False
    more: tuple[Said, ...] = ()  # further facts of the same message, each after `joiner`
    joiner: str = " "

    @property
    def kind(self) -> str:  # type: ignore[override]
        if self.more:
            return "tell several facts at once"
        return "correct" if self.correction else "tell"

    @property
    def statements(self) -> tuple[Said, ...]:
        return (Said(self.key, self.value, self.sentence, self.value_class, self.correction), *self.more)

    @property
    def classes(self) -> tuple[str, ...]:
        newline = "\n" in self.separator or (self.more and "\n" in self.joiner)
        return (*dict.fromkeys(s.value_class for s in self.statements), *(("newline",) if newline else ()))

    @property
    def told(self) -> tuple[tuple[Said, ...], ...]:
        return (self.statements,)

    @property
    def message(self) -> str:
        facts = self.joiner.join(s.sentence for s in self.statements)
        return f"{self.prefix}{self.separator}{facts}" if self.prefix else facts

    @property
    def typed(self) -> str:
        """The chat message as the user types it."""
        return self.message

    def gherkin(self) -> str:
        return f"When {self.user} tells the assistant {quoted(self.message)}"


@dataclass(frozen=True)
class Ask(Action):
    key: str = ""
    question: str = ""

    kind = "ask"

    @property
    def typed(self) -> str:
        return self.question

    def gherkin(self) -> str:
        return f"When {self.user} asks {quoted(self.question)}"


@dataclass(frozen=True)
class Chat(Action):
    text: str = ""
    text_class: str = "plain"  # a character class, or "near the limit (<script>)"

    kind = "chat"

    @property
    def typed(self) -> str:
        return self.text

    @property
    def classes(self) -> tuple[str, ...]:
        return (self.text_class,)

    @property
    def boundaries(self) -> tuple[str, ...]:
        return (self.text_class,) if "limit" in self.text_class else ()

    def gherkin(self) -> str:
        return f"When {self.user} says {quoted(self.text)}"


@dataclass(frozen=True)
class NewConversation(Action):
    kind = "start a conversation"

    def gherkin(self) -> str:
        return f"When {self.user} starts a new conversation"


@dataclass(frozen=True)
class ManyConversations(Action):
    """One fact told in each of many new conversations, one after the other: more than any page of a list holds."""

    tells: tuple[Tell, ...] = ()

    kind = "start many conversations"

    @property
    def classes(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(c for t in self.tells for c in t.classes))

    @property
    def told(self) -> tuple[tuple[Said, ...], ...]:
        return tuple(t.statements for t in self.tells)

    def gherkin(self) -> str:
        lines = [f"When {self.user} starts a new conversation and tells the assistant {quoted(t.message)}"
                 for t in self.tells]
        return "\n        ".join(lines)


@dataclass(frozen=True)
class Reopen(Action):
    conversation: int = 0  # the user's n-th conversation, counted from 1 in the order they were started

    kind = "reopen a conversation"

    def gherkin(self) -> str:
        return f"When {self.user} opens her conversation {self.conversation} from the conversation list"


@dataclass(frozen=True)
class ReopenBrowser(Action):
    kind = "close and reopen the browser"

    def gherkin(self) -> str:
        return f"When {self.user} closes the browser and opens it again with the same profile"


@dataclass(frozen=True)
class SignOutAndIn(Action):
    kind = "sign out and back in"

    def gherkin(self) -> str:
        return f"When {self.user} signs out and signs in again through the login form"


@dataclass(frozen=True)
class PassTime(Action):
    days: float = 1
    boundary: str = ""  # which promise's edge it lands next to: "just inside the retention", ...

    kind = "let time pass"

    @property
    def boundaries(self) -> tuple[str, ...]:
        return (self.boundary,) if self.boundary else ()

    def gherkin(self) -> str:
        whole, hours = int(self.days), round((self.days - int(self.days)) * 24, 3)
        span = f"{whole} days" + (f" and {hours:g} hours" if hours else "")
        return f"When {span} pass" + (f" ({self.boundary})" if self.boundary else "")


@dataclass(frozen=True)
class DeleteAccount(Action):
    kind = "delete an account"

    def gherkin(self) -> str:
        return f"When {self.user}'s account is deleted"


@dataclass(frozen=True)
class Rejoin(Action):
    """A new account with a deleted account's address, signed in in a new browser profile."""

    kind = "open an account again"

    def gherkin(self) -> str:
        return f"When a new account is opened with {self.user}'s e-mail address and signs in"


# -- what users take back ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class DeleteMemory(Action):
    """Deletes the memory that reads `text` (the first, where several do), on the app's memories page."""

    text: str = ""
    key: str = ""  # the fact it states (normalised)

    kind = "delete a memory"

    def gherkin(self) -> str:
        return f"When {self.user} deletes her memory {quoted(self.text)}"


@dataclass(frozen=True)
class EditMemory(Action):
    """Changes the memory that reads `text` to `new_text`: the same fact (its key kept), another value, written over
    the old one where the memory states it."""

    text: str = ""
    new_text: str = ""
    key: str = ""  # the fact both texts state (normalised)
    value: str = ""  # the value `new_text` states
    value_class: str = "plain"

    kind = "edit a memory"

    @property
    def classes(self) -> tuple[str, ...]:
        return (self.value_class,)

    def gherkin(self) -> str:
        return f"When {self.user} changes her memory {quoted(self.text)} to {quoted(self.new_text)}"


@dataclass(frozen=True)
class ClearMemories(Action):
    kind = "clear all memories"

    def gherkin(self) -> str:
        return f"When {self.user} clears all her memories"


@dataclass(frozen=True)
class DeleteConversation(Action):
    conversation: int = 0  # the user's n-th conversation, counted from 1 in the order they were started

    kind = "delete a conversation"

    def gherkin(self) -> str:
        return f"When {self.user} deletes her conversation {self.conversation} from the conversation list"


@dataclass(frozen=True)
class TurnMemoryOff(Action):
    kind = "turn memory off"

    def gherkin(self) -> str:
        return f"When {self.user} turns her memory off"


@dataclass(frozen=True)
class TurnMemoryOn(Action):
    kind = "turn memory on"

    def gherkin(self) -> str:
        return f"When {self.user} turns her memory on"


# -- what a hostile user does to another ---------------------------------------------------------------------------
@dataclass(frozen=True)
class TamperWith(Action):
    """Every write the app's API offers tried on another user's memories, conversations and settings (their ids,
    owner fields in the body, identity headers): each must be refused, and nothing of the victim's changes."""

    victim: str = ""

    kind = "tamper with another user's data"

    def gherkin(self) -> str:
        return (f"When {self.user} tries every write the app's API offers on {self.victim}'s memories and "
                "conversations")


@dataclass(frozen=True)
class WrongPasswords(Action):
    """Wrong passwords typed at another user's address from the same network address (as behind one proxy), fewer
    than the target's sign-in throttle locks at; then the victim types her own and must be let in."""

    victim: str = ""
    count: int = 1

    kind = "type wrong passwords at another's address"

    def gherkin(self) -> str:
        return (f"When {self.user} types {self.count} wrong passwords at {self.victim}'s address, and {self.victim} "
                "then signs in with her own")


def script(users: list[str], actions: list[Action], numbered: bool = True) -> str:
    """The Gherkin-like list of actions that reproduces a run."""
    who = users[0] if len(users) == 1 else ", ".join(users[:-1]) + f" and {users[-1]}"
    lines = [f"Given {who} {'is' if len(users) == 1 else 'are'} signed in"
             f"{', in a browser profile of their own' if len(users) == 1 else ', each in their own browser profile'}"]
    for i, action in enumerate(actions, 1):
        lines.append(f"{i:>4}. {action.gherkin()}" if numbered else action.gherkin())
    lines.append("Then everything each user was told is remembered exactly as the model says")
    return "\n".join(lines)


# -- failures on the way, and what follows them in the same page ------------------------------------------------------
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


@dataclass(frozen=True)
class RefusedSend(FailedTurn):
    """The app's server answers the turn's request with an error: nothing of it reaches the app."""

    kind = "send refused by the app"

    def gherkin(self) -> str:
        return f"When {self.user}'s message {quoted(self.turn.typed)} is refused by the app and she goes on"


@dataclass(frozen=True)
class DroppedReply(FailedTurn):
    """The app gets the turn and answers it; the connection drops before the page has the answer."""

    kind = "connection dropped mid-reply"

    def gherkin(self) -> str:
        return f"When the connection drops while {self.user}'s message {quoted(self.turn.typed)} is answered"


@dataclass(frozen=True)
class AppRestart(Action):
    """The app stopped and started on its data between two of the user's turns; her page stays open on the
    conversation, where she goes on."""

    kind = "restart the app"

    def gherkin(self) -> str:
        return f"When the app restarts while {self.user} is in a conversation"

