"""The reads of a generated session: what a user can see of what earlier actions did, each computed from the model
alone, so that the generator can tell which action changed which read (transition coverage) and the runner knows
what to read after it.

Each read's value is what a wrong app would show differently once an action touched it: the order of the entries
already listed (a new entry on top changes nothing an app ordering by creation would get wrong), the content each
listed conversation's entry is made from, each listed conversation's turns, the memories listed, the texts a search
finds, the answer to each fact in a new conversation and in each older conversation that said it, and who is signed
in where."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:  # (the model finds its moves, which name these reads)
    from harness.app.target import Target
    from harness.sessions.model import SessionModel

Value = Hashable
Observation = dict[tuple[str, str], Value]  # (user, read) -> value


def _listed(model: SessionModel, name: str) -> list[int]:
    return model.listed(name) if model.alive(name) else []


def _order(model: SessionModel, name: str) -> Value:
    return tuple(_listed(model, name))


def _entries(model: SessionModel, name: str) -> Value:
    conversations = model.conversations(name)
    # An entry shows a title or a preview: made from the conversation's first message, or its latest.
    return tuple((i, (conversations[i][0].text, conversations[i][-1].text) if conversations[i] else ())
                 for i in sorted(_listed(model, name)))


def _turns(model: SessionModel, name: str) -> Value:
    conversations = model.conversations(name)
    return tuple((i, tuple(conversations[i])) for i in sorted(_listed(model, name)))


def _memories(model: SessionModel, name: str) -> Value:
    return tuple(model.memories(name))


def _search(model: SessionModel, name: str) -> Value:
    return frozenset(model.memories(name))


def _answers(model: SessionModel, name: str) -> Value:
    """Per (conversation, key): the answer to each fact anyone told (a deleted account too), in a new conversation
    (None), and to each fact a listed conversation's own turns state, in that conversation reopened."""
    if not model.alive(name):
        return ()
    keys = sorted(model.keys_told)
    return (*(((None, key), model.answer_in(name, key, None)) for key in keys),
            *(((i, key), model.answer_in(name, key, i)) for i in sorted(_listed(model, name))
              for key in model.keys_said_in(name, i)))


def _signed_in(model: SessionModel, name: str) -> Value:
    return model.sign_in_state(name)


# Each read: its name as the plan prints it, and its value.
READS: dict[str, Callable[[SessionModel, str], Value]] = {
    "the order of the conversation list": _order,
    "what each list entry shows": _entries,
    "the turns of each conversation": _turns,
    "the memories listed": _memories,
    "what a search finds": _search,
    "the answers": _answers,
    "who is signed in where": _signed_in,
}
# Reads the runner makes through the app's API or its page right after the action (the answers need a question: the
# generator draws it; who is signed in, a sign-in: the runner reads it after every sign-in and every span of time).
READ_AFTER = ("the order of the conversation list", "what each list entry shows", "the turns of each conversation",
              "the memories listed", "what a search finds")


# Reads of items that stay in place (a conversation's entry and turns): changed when an item there before changes (an
# item that comes or goes is the list's order's business).
PER_ITEM = ("what each list entry shows", "the turns of each conversation")


def unread(target: Target) -> dict[str, str]:
    """The reads the target's declarations leave the runner unable to make, each with why."""
    if target.limits.title_length is not None or target.limits.preview_length is not None:
        return {}
    return {ENTRIES: f"{target.path.name} declares neither conversation titles nor previews ([limits] title_length, "
                     "preview_length)"}


def observe(model: SessionModel, names: list[str]) -> Observation:
    return {(name, read): value(model, name) for name in names for read, value in READS.items()}


def changed(read: str, before: Value, after: Value) -> bool:
    """Whether the action changed the read in a way a wrong app could get wrong: for the order, the entries listed
    before in another order (or one gone); for the per-conversation reads, a conversation listed before that changed
    (a new one is no test of what an app keeps of an old one); for the others, any change."""
    if read == "the order of the conversation list":
        listed, now_listed = _tuple_of(before), _tuple_of(after)
        return tuple(i for i in now_listed if i in listed) != listed
    if read in PER_ITEM:
        now = dict(_tuple_of(after))
        return any(i in now and now[i] != content for i, content in _tuple_of(before))
    if read == "the answers":  # an answer one can ask for now that differs (a new account's "I don't know" too)
        was = dict(_tuple_of(before))
        return any(was.get(item) != answer for item, answer in _tuple_of(after))
    return before != after


def _tuple_of(read: Value) -> tuple:
    """A read that lists entries (every read but the counts and the memory switch is a tuple of them)."""
    return cast(tuple, read)


def changes(before: Observation, after: Observation) -> list[tuple[str, str]]:
    """(user, read) for every read the action changed."""
    return [key for key, value in before.items() if changed(key[1], value, after[key])]


ORDER, ENTRIES, TURNS, MEMORIES, SEARCH, ANSWERS, SIGNED_IN = READS
# The reads groups of moves change (each move says which: harness.sessions.moves.effects):
TALK = (ORDER, ENTRIES, TURNS)  # a turn in a conversation listed before
KEPT = (MEMORIES, SEARCH, ANSWERS)  # what the app keeps and answers from


def pair(kind: str, read: str) -> str:
    """A transition as the plan prints it."""
    return f"{kind} -> {read}"
