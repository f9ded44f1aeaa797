"""Steps of in_session_memory.feature: the history of one conversation."""

from __future__ import annotations

import pytest
from pytest_bdd import parsers, then, when

from harness.suite import report
from harness.vocabulary.facts import Fact
from steps.records import Talk
from steps.world import NAME, World


@when(parsers.re(f"^{NAME} opens the conversation again from its address$"), target_fixture="talk")
def reopen_by_address(world: World, talk: Talk, name: str) -> Talk:
    """The open conversation's address typed into the browser (or asked of the API by its id): the app answers 200."""
    actor = world.actors[name]
    conversation_id = actor.conversation_id()
    status = actor.open_by_address(conversation_id)
    assert status == 200, f"{name} opened her conversation by its address and the app answered {status}"
    return talk.noting(name, conversation_id)


@when(parsers.re(f"^{NAME} opens the conversation from the conversation list$"))
def reopen_from_list(world: World, talk: Talk, name: str) -> None:
    """The conversation noted before (by its address, or before closing the browser), clicked in her list."""
    actor, noted = world.actors[name], talk.of(name).noted
    actor.open_from_list(noted)
    assert actor.conversation_id() == noted


@when(parsers.re(f'^{NAME} tells the assistant "(?P<text>.+)" and, before the answer shows, opens the conversation '
                 'from the conversation list$'), target_fixture="talk")
def tells_then_reopens(world: World, talk: Talk, name: str, text: str) -> Talk:
    """The answer held back (a slow model) until she has clicked the conversation noted before in her list: the page
    may finish the turn before it moves, or move at once; either way what she told is hers."""
    actor, noted = world.actors[name], talk.of(name).noted
    actor.say_then_open(text, noted)
    shown = actor.conversation_id()
    assert shown == noted, f"{name} clicked her conversation {noted} in her list and is in {shown}"
    return talk.stored(name, Fact.parse(text))


@when(parsers.re(f'^{NAME} tells the assistant "(?P<first>[^"]+)" and, before the answer shows, '
                 'sends "(?P<second>[^"]+)" as well$'), target_fixture="talk")
def tells_two_without_waiting(world: World, talk: Talk, name: str, first: str, second: str) -> Talk:
    """The first answer held back (a slow model) while she sends the second: the page may send it at once or once
    the first is answered; either way each is answered, in the order she sent them."""
    one, two = world.actors[name].say_before_answer(first, second)
    return talk.after(one, Fact.parse(first)).after(two, Fact.parse(second))


@when(parsers.re(f"^{NAME} presses Enter on a message of nothing but spaces and empty lines$"))
def enter_on_blank(world: World, name: str) -> None:
    """Two spaces, an empty line and a space, typed as a person does, then Enter."""
    world.actors[name].press_enter_on_blank("  \n\n ")


@then("the history shows every turn of the conversation in order")
def history_in_order(world: World, talk: Talk) -> None:
    """The open conversation as shown, exactly the turns said and answered in it, in order."""
    actor = world.actors[talk.speaker]
    shown, said = actor.history(), list(talk.of(actor.name).turns)
    assert shown == said, f"{actor.name}'s history differs from what was said.\nexpected: {said}\nshown:    {shown}"


@then("her conversation is listed first, under the start of her first message")
def listed_first_under_first_message(world: World, talk: Talk) -> None:
    """The list as shown now, without a reload: the open conversation first (the most recent), its entry her first
    message cut to the target's [limits] title_length, in characters as she counts them (an emoji is one)."""
    actor = world.actors[talk.speaker]
    conversation_id, listed = actor.conversation_id(), actor.conversations_listed()
    assert listed[:1] == [conversation_id], (f"{actor.name}'s list shows {listed}: the conversation she is in, "
                                             f"{conversation_id}, is not first")
    length = world.app.target.limits.title_length
    if length is None:  # the scenario goes on: what follows is decided all the same
        report.attach_text("not checked", f"{world.app.target.path.name} declares no conversation titles"
                                          " ([limits] title_length)")
        return
    first = next(turn.text for turn in talk.of(actor.name).turns if turn.role == "user")
    shown = actor.conversation_titles_shown()
    assert shown.get(conversation_id) == first[:length], (
        f"{actor.name}'s list shows her conversation {conversation_id} as {shown.get(conversation_id)!r}, not as the"
        f" first {length} characters of her first message: {first[:length]!r}")


@when(parsers.re(f"^{NAME} tells the assistant (?:his|her|their) locker code as many times as a question recalls "
                 "memories, each time a new one$"), target_fixture="talk")
def tells_locker_codes(world: World, talk: Talk, name: str) -> Talk:
    """As many statements of one fact as a question recalls memories (the app's recall_k), a turn each, each code
    from the scenario's seeded faker: short sentences, each more like the question than a correction in other
    words."""
    actor = world.actors[name]
    for _ in range(world.app.recall_k):
        sentence = f"My locker code is {world.fake.unique.random_int(1000, 8999)}."
        talk = talk.after(actor.say(sentence), Fact.parse(sentence))
    return talk


@when(parsers.re(f"^{NAME} chats about other things for (?P<count>\\d+) exchanges$"), converters={"count": int},
      target_fixture="talk")
def small_talk(world: World, talk: Talk, name: str, count: int) -> Talk:
    """Turns that state no fact and ask none: sentences of the scenario's seeded faker."""
    actor = world.actors[name]
    for _ in range(count):
        talk = talk.after(actor.say(world.fake.sentence(nb_words=8)))
    return talk


@when(parsers.re(f'^{NAME} types "(?P<before>[^"]*)", composes "(?P<characters>[^"]+)" from "(?P<reading>[^"]+)" '
                 'with an input method and confirms it, types "(?P<after>[^"]*)" and sends the message$'),
      target_fixture="talk")
def types_with_input_method(world: World, talk: Talk, name: str, before: str, characters: str, reading: str,
                            after: str) -> Talk:
    """Typed partly with an input method (Chinese, Japanese): Enter confirms the characters, a second one sends."""
    return talk.after(world.actors[name].say_composed(before, reading, characters, after))



def recall_threshold(world: World) -> float:
    """The threshold the target declares, below which the app recalls nothing; skips where it declares none."""
    target = world.app.target
    if target.recall.threshold <= 0:
        pytest.skip(f"{target.path.name} declares no recall threshold ([recall] threshold): the app may recall any "
                    "memory for any question")
    return target.recall.threshold


@then(parsers.re(f'^the only memory recalled for {NAME} is "(?P<text>[^"]+)"$'))
def only_memory_recalled(world: World, talk: Talk, name: str, text: str) -> None:
    """For the user's last turn, the app showed it recalled that memory and none other: her memories about other
    things sit below the recall threshold the target declares (skipped where it declares none, or shows none)."""
    threshold, target = recall_threshold(world), world.app.target
    if target.has_pages and "recalled_memory" not in target.locators:
        pytest.skip(f"{target.path.name} locates no recalled memory on the app's page (locator recalled_memory)")
    last = talk.of(name).last
    assert last is not None, f"{name} asked nothing"
    assert list(last.recalled) == [text], (
        f"for {name}'s question {last.said!r} the app recalled {list(last.recalled) or 'nothing'}, not only {text!r}: "
        f"a memory about something else passed its recall threshold of {threshold}")


@then(parsers.re(f'^searching {NAME}\'s memory for "(?P<text>[^"]+)" finds that memory and no other$'))
def search_finds_only(world: World, name: str, text: str) -> None:
    """The app's memory search by a memory's whole text: that memory, and none about other things (they sit below
    the recall threshold the target declares; skipped where it declares none)."""
    threshold = recall_threshold(world)
    if not world.app.searches():
        return
    found = [h.text for h in world.actors[name].session.search(text, k=world.app.recall_k)]
    assert found == [text], (f"searching {name}'s memory for {text!r} found {found}, not that memory alone: a memory "
                             f"about something else passed the recall threshold of {threshold}")
