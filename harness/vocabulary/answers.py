"""How an answer is compared with the one expected: exactly (the deterministic model server answers byte for byte),
or, with a real model (--answer-check contains), any answer that contains the expected value."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from harness.users.actor import Actor

MODES = ("exact", "contains")


@dataclass(frozen=True)
class AnswerCheck:
    mode: str = "exact"

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"unknown answer check {self.mode!r}; use one of {', '.join(MODES)}")

    def matches(self, reply: str, expected: str) -> bool:
        if self.mode == "contains":
            return expected.rstrip(".").lower() in reply.lower()
        return reply == expected


def asked_wrongly(actor: Actor, questions: Iterable[tuple[str, str]], answers: AnswerCheck) -> list[str]:
    """Each question asked in turn in the actor's open conversation; one line for each answer that is not the one
    expected, so that one failure names every wrong answer."""
    wrong = []
    for question, expected in questions:
        reply = actor.say(question).reply
        if not answers.matches(reply, expected):
            wrong.append(f"  asked {question!r}: expected {expected!r}, got {reply!r}")
    return wrong
