"""The assistant's language: which sentences state a fact about the user, which ask for one, and the replies.

The one place it is written: the suite's model server answers with it, and the generated sessions' model predicts
the answers from it. The acceptance scenarios compare replies byte for byte, so the reply templates here are part of
the contract.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

# A sentence ends at whitespace that follows ".", "!" or "?" (so "4.5" and "e.g.x" stay whole).
_SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+")
_LEAD_IN = r"(?:(?:actually|also|and|oh|so|well|correction|sorry|ok|okay)[,:]?\s+)*"
_KEY = r"(?P<key>[^\W\d_][\w '’\-]{0,60}?)"
# A value never spans a line break: "My city is Paris\nMy dog is Rex." states nothing.
_FACT = re.compile(rf"^{_LEAD_IN}(?:my|our)\s+{_KEY}\s+(?:is|are|was|=)\s+(?P<value>.+?)[.!]*$", re.IGNORECASE)
_QUESTION = re.compile(
    r"^(?:do you (?:still )?remember|what(?:'s|’s| is| are| was)|which(?: is| are)?|where(?: is| are)?|"
    rf"who(?: is| are)?|when(?: is| was)?|tell me)\s+(?:my|our)\s+{_KEY}\s*[?.!]*$",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Fact:
    key: str  # normalised: how facts are matched
    value: str  # exactly as typed, trailing "." / "!" stripped
    sentence: str  # the whole sentence as typed (stripped): what a memory stores


NOTED = "Noted."  # the reply to a message that states no fact and asks none


def normalise_key(key: str) -> str:
    """A fact's key as the assistant matches it: lower case, single spaces, British "favourite"."""
    return " ".join(key.lower().replace("favorite", "favourite").split())


def told_reply(told: Iterable[tuple[str, str]]) -> str:
    """The reply to a message that states facts: (key, value) each, in the order stated."""
    return "Got it. I'll remember that your " + " and your ".join(f"{key} is {value}" for key, value in told) + "."


def answer_reply(key: str, value: str | None) -> str:
    """The reply to a question about `key`: its value, or that there is none to give."""
    return f"Your {key} is {value}." if value is not None else f"I don't remember your {key}."


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_BREAK.split(text.strip()) if s.strip()]


def parse_fact(sentence: str) -> Fact | None:
    """The fact one sentence states, or None ("Is my name Ana?" states none)."""
    sentence = sentence.strip()
    m = _FACT.match(sentence)
    if not m or m.group("value").rstrip().endswith("?"):
        return None
    return Fact(normalise_key(m.group("key")), m.group("value").strip(), sentence)


def facts_in(text: str) -> list[Fact]:
    return [f for f in map(parse_fact, sentences(text)) if f]


def asked_key(text: str) -> str | None:
    """The fact a message asks about ("What is my order number?" -> "order number"), if it asks one."""
    for sentence in sentences(text):
        m = _QUESTION.match(sentence)
        if m:
            return normalise_key(m.group("key"))
    return None


def latest_fact(key: str, user_messages: Iterable[str]) -> Fact | None:
    """The fact about `key` the conversation states last: newest message first, last sentence first."""
    for text in reversed(list(user_messages)):
        for fact in reversed(facts_in(text)):
            if fact.key == key:
                return fact
    return None


def reply(user_messages: list[str], remembered: list[Fact]) -> str:
    """The answer to the last of `user_messages` (oldest first); `remembered`: memories the app gave, best first.

    The newest statement wins, as far as a model can tell without dates:
    1. a memory that this conversation never stated: an app that keeps one memory per fact wrote it after this
       conversation's own statements were stored (a correction made in another conversation since), so it is newer;
    2. else the conversation's last statement, however long ago (also an older conversation opened again);
    3. else a memory.
    """
    if not user_messages:
        return NOTED
    text = user_messages[-1]
    key = asked_key(text)
    if key:
        stated = {f.sentence for message in user_messages for f in facts_in(message)}
        elsewhere = next((f for f in remembered if f.key == key and f.sentence not in stated), None)
        fact = elsewhere or latest_fact(key, user_messages) or next((f for f in remembered if f.key == key), None)
        return answer_reply(key, fact.value if fact else None)
    told = facts_in(text)
    if told:
        return told_reply((f.key, f.value) for f in told)
    return NOTED
