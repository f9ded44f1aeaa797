"""The deterministic assistant's language: which sentences state a fact about the user, which ask for one."""

from __future__ import annotations

import re
from dataclasses import dataclass

_SENTENCES = re.compile(r"(?<=[.!?])\s+")
_LEAD = r"(?:(?:actually|also|and|oh|so|well|correction|sorry|ok|okay)[,:]?\s+)*"
_FACT = re.compile(
    rf"^{_LEAD}(?:my|our)\s+(?P<key>[a-z][a-z0-9 '\-]{{0,60}}?)\s+(?:is|are|was|=)\s+(?P<value>.+?)[.!]*$",
    re.IGNORECASE,
)
_QUESTION = re.compile(
    r"^(?:(?:do you (?:still )?remember|what(?:'s|’s| is| are| was)|which(?: is| are)?|where(?: is| are)?|"
    r"who(?: is| are)?|when(?: is| was)?|tell me)\s+)(?:my|our)\s+(?P<key>[a-z][a-z0-9 '\-]{0,60}?)\s*[?.!]*$",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Fact:
    key: str
    value: str
    sentence: str


def normalise_key(key: str) -> str:
    return " ".join(key.lower().replace("favorite", "favourite").split())


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCES.split(text.strip()) if s.strip()]


def parse_fact(sentence: str) -> Fact | None:
    m = _FACT.match(sentence.strip())
    if not m or m.group("value").endswith("?"):
        return None
    return Fact(normalise_key(m.group("key")), m.group("value").strip(), sentence.strip())


def facts_in(text: str) -> list[Fact]:
    return [f for f in map(parse_fact, sentences(text)) if f]


def asked_key(text: str) -> str | None:
    """The fact a message asks about ("What is my order number?" -> "order number"), if it is such a question."""
    for s in sentences(text):
        m = _QUESTION.match(s)
        if m:
            return normalise_key(m.group("key"))
    return None
