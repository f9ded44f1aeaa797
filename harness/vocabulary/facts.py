"""A fact as a scenario's user tells it ("My locker code is 5150."), and the question and answer that test it (the
assistant's words for it: harness.vocabulary.language)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from harness.vocabulary.language import answer_reply, normalise_key

_FACT = re.compile(r"^(?:actually,?\s+)?my\s+(?P<key>.+?)\s+is\s+(?P<value>.+?)\.?$", re.IGNORECASE)


@dataclass(frozen=True)
class Fact:
    key: str
    value: str

    @staticmethod
    def states_one(sentence: str) -> bool:
        return _FACT.match(sentence.strip()) is not None

    @classmethod
    def parse(cls, sentence: str) -> Fact:
        m = _FACT.match(sentence.strip())
        if not m:
            raise ValueError(f"{sentence!r} is not a fact of the form 'My <thing> is <value>.'")
        return cls(m.group("key"), m.group("value"))

    @property
    def sentence(self) -> str:
        return f"My {self.key} is {self.value}."

    @property
    def question(self) -> str:
        return f"What is my {self.key}?"

    @property
    def answer(self) -> str:
        return answer_reply(normalise_key(self.key), self.value)

    @property
    def forgotten(self) -> str:
        """The answer to its question once the assistant no longer knows it."""
        return answer_reply(normalise_key(self.key), None)
