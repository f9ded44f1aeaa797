"""The model's rules for failures mid-conversation (harness/sessions/model.py, docs/contract.md "After a failure"):
what the app keeps of a send refused, a reply dropped and a restart, and that the user's next turn continues the same
conversation."""

from __future__ import annotations

import pytest

from harness.app.target import Choice, Forgetting
from harness.sessions.actions import script
from harness.sessions.model import NotApplicable, SessionModel
from harness.sessions.moves.app_restart import AppRestart
from harness.sessions.moves.ask import Ask
from harness.sessions.moves.chat import Chat
from harness.sessions.moves.dropped_reply import DroppedReply
from harness.sessions.moves.new_conversation import NewConversation
from harness.sessions.moves.refused_send import RefusedSend
from harness.sessions.moves.tell import Tell
from harness.vocabulary.language import NOTED
from harness.vocabulary.turn import Turn


def tell(key: str, value: str, correction: bool = False) -> Tell:
    sentence = f"{'Actually, my' if correction else 'My'} {key} is {value}."
    return Tell("Ana", key=key, value=value, sentence=sentence, correction=correction)


def ask(key: str) -> Ask:
    return Ask("Ana", key=key, question=f"What is my {key}?")


def talking() -> SessionModel:
    """Ana in a conversation of one turn."""
    # memchat's choice ([forgetting] dropped_reply): the page writes a turn's memories once it has the reply
    model = SessionModel(["Ana"], retention_days=365,
                         forgetting=Forgetting(dropped_reply=Choice("not remembered", "memchat/static/chat.js")))
    model.apply(Chat("Ana", text="Hello."))
    return model


def hello() -> list[Turn]:
    return [Turn("user", "Hello."), Turn("assistant", NOTED)]


def test_a_refused_send_stores_nothing_and_the_next_turn_continues_the_conversation() -> None:
    model = talking()
    assert model.apply(RefusedSend("Ana", tell("dog", "Rex"))) is None  # no reply shown: the page's error instead
    assert model.conversations("Ana") == [hello()] and model.memories("Ana") == []
    assert model.apply(ask("dog")) == "I don't remember your dog."  # never told, as far as the app knows
    model.apply(tell("dog", "Rex"))  # not a correction: nothing of the refused one was kept
    assert model.current("Ana") == 0 and len(model.conversations("Ana")) == 1
    assert model.memories("Ana") == ["My dog is Rex."]


def test_a_dropped_reply_stores_the_turn_once_and_none_of_its_memories() -> None:
    model = talking()
    assert model.apply(DroppedReply("Ana", tell("dog", "Rex"))) is None
    said = [Turn("user", "My dog is Rex."), Turn("assistant", "Got it. I'll remember that your dog is Rex.")]
    assert model.conversations("Ana") == [hello() + said]
    assert model.memories("Ana") == []  # the page writes a turn's memories once it has the reply: it never had it
    assert model.apply(ask("dog")) == "Your dog is Rex."  # the conversation's own turns still say it
    model.apply(NewConversation("Ana"))
    assert model.apply(ask("dog")) == "I don't remember your dog."


def test_a_dropped_question_stores_the_answer_the_app_gave() -> None:
    model = talking()
    model.apply(tell("dog", "Rex"))
    model.apply(DroppedReply("Ana", ask("dog")))
    stored = model.conversations("Ana")[0][-2:]
    assert stored == [Turn("user", "What is my dog?"), Turn("assistant", "Your dog is Rex.")]


def test_a_restart_changes_nothing_and_the_conversation_stays_open() -> None:
    model = talking()
    model.apply(tell("dog", "Rex"))
    before = (model.conversations("Ana"), model.memories("Ana"), model.current("Ana"))
    assert model.apply(AppRestart("Ana")) is None
    assert (model.conversations("Ana"), model.memories("Ana"), model.current("Ana")) == before
    model.apply(tell("cat", "Tom"))
    assert len(model.conversations("Ana")[0]) == 6 and model.memories("Ana") == ["My dog is Rex.", "My cat is Tom."]


@pytest.mark.parametrize("failure", [RefusedSend("Ana", Chat("Ana", text="Hi.")),
                                     DroppedReply("Ana", Chat("Ana", text="Hi.")), AppRestart("Ana")],
                         ids=lambda a: a.kind)
def test_a_failure_needs_a_conversation_open(failure: RefusedSend | DroppedReply | AppRestart) -> None:
    model = SessionModel(["Ana"])
    with pytest.raises(NotApplicable, match="no conversation open"):
        model.apply(failure)


def test_failures_read_as_steps_in_the_users_words() -> None:
    lines = script(["Ana"], [Chat("Ana", text="Hello."), RefusedSend("Ana", Chat("Ana", text="Are you there?")),
                             DroppedReply("Ana", tell("dog", "Rex")), AppRestart("Ana")], numbered=False)
    assert lines.splitlines()[2:5] == [
        'When Ana\'s message "Are you there?" is refused by the app and she goes on',
        'When the connection drops while Ana\'s message "My dog is Rex." is answered',
        "When the app restarts while Ana is in a conversation"]
    assert {RefusedSend("Ana").kind, DroppedReply("Ana").kind, AppRestart("Ana").kind} == {
        "send refused by the app", "connection dropped mid-reply", "restart the app"}
