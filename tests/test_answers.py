"""How answers are compared, and asking several questions with one report of every wrong answer."""

from __future__ import annotations

from typing import Any, cast

import pytest

from harness.users.actor import Actor, Exchange
from harness.vocabulary.answers import AnswerCheck, asked_wrongly


class Replies:
    """An actor as far as asking goes: it answers from a table."""

    name = "Ana"

    def __init__(self, table: dict[str, str]) -> None:
        self.table = table
        self.asked: list[str] = []

    def say(self, text: str) -> Exchange:
        self.asked.append(text)
        return Exchange(self.name, text, self.table[text])


def test_exact_and_contains() -> None:
    assert AnswerCheck().matches("Your gate code is 7731.", "Your gate code is 7731.")
    assert not AnswerCheck().matches("Sure! Your gate code is 7731.", "Your gate code is 7731.")
    assert AnswerCheck("contains").matches("Sure! Your gate code is 7731.", "Your gate code is 7731.")
    with pytest.raises(ValueError, match="unknown answer check 'fuzzy'"):
        AnswerCheck("fuzzy")


def test_asked_wrongly_asks_every_question_in_order_and_names_each_wrong_answer() -> None:
    actor = Replies({"What is my gate code?": "Your gate code is 7731.",
                     "What is my locker code?": "Your locker code is 5150."})
    questions = [("What is my gate code?", "Your gate code is 7731."),
                 ("What is my locker code?", "I don't remember your locker code.")]
    wrong = asked_wrongly(cast(Actor, cast(Any, actor)), questions, AnswerCheck())
    assert actor.asked == ["What is my gate code?", "What is my locker code?"]
    assert wrong == ["  asked 'What is my locker code?': expected \"I don't remember your locker code.\", "
                     "got 'Your locker code is 5150.'"]
