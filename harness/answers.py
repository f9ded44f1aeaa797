"""How an answer is compared with the one expected: exactly (the deterministic model server answers byte for byte),
or, with a real model (--answer-check contains), any answer that contains the expected value."""

from __future__ import annotations

from dataclasses import dataclass

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
