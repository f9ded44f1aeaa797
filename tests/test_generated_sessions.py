"""The generated sessions' pure parts: the generator, the model of what users must see, shrinking, the script."""

from __future__ import annotations

import pytest

from harness.sessions.actions import (
    Ask,
    Chat,
    DeleteAccount,
    NewConversation,
    PassTime,
    Rejoin,
    Reopen,
    Tell,
    quoted,
    script,
)
from harness.sessions.generator import ALL_KINDS, generate
from harness.sessions.model import EVERY_STATEMENT, NEWEST_PER_FACT, NotApplicable, SessionModel
from harness.sessions.shrink import shrink
from harness.sessions.text import CHAT_CLASSES


def tell(user: str, key: str, value: str, correction: bool = False) -> Tell:
    sentence = f"{'Actually, my' if correction else 'My'} {key} is {value}."
    return Tell(user, key=key, value=value, sentence=sentence, correction=correction)


def ask(user: str, key: str) -> Ask:
    return Ask(user, key=key, question=f"What is my {key}?")


def test_the_same_seed_draws_the_same_session_and_another_seed_another() -> None:
    first, again, other = generate("7", 80, 3), generate("7", 80, 3), generate("8", 80, 3)
    assert first.actions == again.actions and first.users == again.users
    assert first.actions != other.actions


def test_a_session_draws_every_kind_and_class_over_enough_actions_and_never_a_left_out_one() -> None:
    plan = generate("1", 600, 4)
    counts = plan.counts()
    assert set(counts["action kinds"]) == set(ALL_KINDS)
    assert set(CHAT_CLASSES) <= set(counts["character classes"])
    without_clock = generate("1", 300, 4, left_out={"let time pass": "no clock"})
    assert "let time pass" not in without_clock.counts()["action kinds"]
    assert without_clock.left_out == {"let time pass": "no clock"}


def test_even_a_short_session_draws_every_kind_and_every_character_class() -> None:
    counts = generate("20261130", 22, 3).counts()
    assert set(counts["action kinds"]) == set(ALL_KINDS)
    assert set(CHAT_CLASSES) <= set(counts["character classes"])


def test_an_unknown_left_out_kind_is_refused_with_the_known_ones() -> None:
    with pytest.raises(ValueError, match="unknown action kinds.*known: tell"):
        generate("1", 10, 2, left_out={"teleport": "no"})


def test_every_generated_session_is_valid_for_the_model_and_addresses_nearly_collide() -> None:
    plan = generate("3", 300, 4)
    model = SessionModel(plan.users, 365)
    for action in plan.actions:
        model.apply(action)
    base = plan.email_locals[plan.users[0]]
    assert all(local.startswith(base) for local in plan.email_locals.values())
    assert len(set(plan.email_locals.values())) == len(plan.users)


def test_the_newest_statement_wins_in_any_conversation_and_the_open_one_keeps_an_old_fact() -> None:
    model = SessionModel(["Ana"], retention_days=365)
    model.apply(tell("Ana", "dog", "Rex"))
    model.apply(NewConversation("Ana"))
    model.apply(tell("Ana", "dog", "Bo", correction=True))
    model.apply(Reopen("Ana", conversation=1))
    assert model.apply(ask("Ana", "dog")) == "Your dog is Bo."
    model.apply(PassTime("", days=400))
    assert model.answer("Ana", "dog") == "Your dog is Rex."  # forgotten as memories; conversation 1 still says Rex
    model.apply(NewConversation("Ana"))
    assert model.answer("Ana", "dog") == "I don't remember your dog."
    model.apply(Reopen("Ana", conversation=2))
    assert model.answer("Ana", "dog") == "Your dog is Bo."  # the conversation on screen still says it
    assert model.memories("Ana") == []


def test_memories_are_listed_as_the_app_keeps_them() -> None:
    actions = [tell("Ana", "dog", "Rex"), tell("Ana", "cat", "Tom"), tell("Ana", "dog", "Bo", correction=True)]
    every, newest = SessionModel(["Ana"], None, EVERY_STATEMENT), SessionModel(["Ana"], None, NEWEST_PER_FACT)
    for action in actions:
        every.apply(action)
        newest.apply(action)
    assert every.memories("Ana") == ["My dog is Rex.", "My cat is Tom.", "Actually, my dog is Bo."]
    assert newest.memories("Ana") == ["Actually, my dog is Bo.", "My cat is Tom."]


def test_users_are_apart_and_a_deleted_account_leaves_nothing_to_its_new_owner() -> None:
    model = SessionModel(["Ana", "Ben"])
    model.apply(tell("Ana", "dog", "Rex"))
    assert model.apply(ask("Ben", "dog")) == "I don't remember your dog."
    model.apply(DeleteAccount("Ana"))
    with pytest.raises(NotApplicable):
        model.apply(ask("Ana", "dog"))
    model.apply(Rejoin("Ana"))
    assert model.conversations("Ana") == [] and model.memories("Ana") == []
    assert model.apply(ask("Ana", "dog")) == "I don't remember your dog."


def test_turns_and_the_list_follow_what_was_said() -> None:
    model = SessionModel(["Ana"])
    model.apply(Chat("Ana", text="Hello\nthere."))
    model.apply(NewConversation("Ana"))
    model.apply(tell("Ana", "dog", "Rex"))
    model.apply(Reopen("Ana", conversation=1))
    assert model.conversations("Ana")[0] == [("user", "Hello\nthere."), ("assistant", "Noted.")]
    assert model.listed("Ana") == [1, 0]
    model.apply(ask("Ana", "dog"))
    assert model.listed("Ana") == [0, 1]
    with pytest.raises(NotApplicable):
        model.apply(Reopen("Ana", conversation=3))


def test_shrinking_finds_the_actions_a_failure_needs_within_its_budget() -> None:
    items = list(range(40))
    runs = []

    def fails(candidate: list[int]) -> bool:
        runs.append(candidate)
        return 7 in candidate and 31 in candidate

    assert shrink(items, fails, lambda c: True, budget_s=10) == [7, 31]
    assert shrink(items, fails, lambda c: True, budget_s=0) == items


def test_the_script_reads_as_steps_with_messages_on_one_line() -> None:
    text = script(["Ana"], [Chat("Ana", text='He said "hi"\nC:\\x'), ask("Ana", "dog")])
    assert text.splitlines() == [
        "Given Ana is signed in, in a browser profile of their own",
        '   1. When Ana says "He said \\"hi\\"\\nC:\\\\x"',
        '   2. When Ana asks "What is my dog?"',
        "Then everything each user was told is remembered exactly as the model says"]
    assert quoted("東京 🐕") == '"東京 🐕"'
