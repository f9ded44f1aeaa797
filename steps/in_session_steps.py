"""Steps of in_session_memory.feature: the history of one conversation."""

from __future__ import annotations

from pytest_bdd import parsers, then, when

from steps.world import NAME, World


@when(parsers.re(f"^{NAME} opens the conversation again from its address$"))
def reopen_by_address(world: World, name: str) -> None:
    """Opens the user's open conversation again by its address; the app must serve it (HTTP 200)."""
    actor = world.actors[name]
    status = actor.open_by_address(actor.note_conversation())
    assert status == 200, f"{name} opened her conversation by its address and the app answered {status}"


@when(parsers.re(f"^{NAME} opens the conversation from the conversation list$"))
def reopen_from_list(world: World, name: str) -> None:
    """Opens the conversation noted before from the user's conversation list; that one must open."""
    actor = world.actors[name]
    actor.open_from_list(actor.noted_conversation)
    assert actor.conversation_id() == actor.noted_conversation


@then("the history shows every turn of the conversation in order")
def history_in_order(world: World) -> None:
    """The conversation's history shows every turn sent and answered, in order, exactly as said."""
    actor = world.speaking()
    shown = actor.history()
    assert shown == actor.turns, (
        f"{actor.name}'s history differs from what was said.\nexpected: {actor.turns}\nshown:    {shown}")


@when(parsers.re(f"^{NAME} chats about other things for (?P<count>\\d+) exchanges$"), converters={"count": int})
def small_talk(world: World, name: str, count: int) -> None:
    """Turns that state no fact and ask none: sentences of the scenario's seeded faker."""
    actor = world.actors[name]
    for _ in range(count):
        actor.say(world.fake.sentence(nb_words=8))


@when(parsers.re(f'^{NAME} types "(?P<before>[^"]*)", composes "(?P<characters>[^"]+)" from "(?P<reading>[^"]+)" '
                 'with an input method and confirms it, types "(?P<after>[^"]*)" and sends the message$'))
def types_with_input_method(world: World, name: str, before: str, characters: str, reading: str, after: str) -> None:
    """Types a message partly with an input method (characters composed, then confirmed) and sends it."""
    world.actors[name].say_composed(before, reading, characters, after)
