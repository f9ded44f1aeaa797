"""Steps of in_session_memory.feature: the history of one conversation."""

from __future__ import annotations

from pytest_bdd import parsers, then, when

from steps.common_steps import NAME, speak, speaker
from steps.world import Scenario


@when(parsers.re(f"^{NAME} opens the conversation again from its address$"))
def reopen_by_address(world: Scenario, name: str) -> None:
    actor = world.actors[name]
    conversation_id = actor.chat.conversation_id()
    world.conversation = conversation_id
    status = actor.chat.open_conversation(conversation_id)
    assert status == 200, f"{name} opened her conversation by its address and the app answered {status}"


@when(parsers.re(f"^{NAME} opens the conversation from the conversation list$"))
def reopen_from_list(world: Scenario, name: str) -> None:
    actor = world.actors[name]
    conversation_id = world.conversation
    if not actor.page.url.startswith(actor.app.base_url):
        actor.chat.open_new()
    actor.sidebar.open_by_id(conversation_id)
    assert actor.chat.conversation_id() == conversation_id


@then("the history shows every turn of the conversation in order")
def history_in_order(world: Scenario) -> None:
    actor = speaker(world)
    shown = [(t.role, t.text) for t in actor.chat.history()]
    assert shown == actor.turns, (
        f"{actor.name}'s history differs from what was said.\nexpected: {actor.turns}\nshown:    {shown}")


@when(parsers.re(f"^{NAME} chats about other things for (?P<count>\\d+) exchanges$"))
def small_talk(world: Scenario, name: str, count: str) -> None:
    """Turns that state no fact and ask none: sentences of the scenario's seeded faker."""
    actor = world.actors[name]
    for _ in range(int(count)):
        speak(actor, world.fake.sentence(nb_words=8))
