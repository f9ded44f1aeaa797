"""Steps of forgetting.feature: what users take back (a memory deleted or corrected, all memories cleared, a
conversation deleted, memory turned off), and that it stays taken back."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from pytest_bdd import given, parsers, then, when

from harness.drivers.base import Capability, ConversationRemains, Memory, MemoryRemains
from harness.replay.run import HeldHistory
from harness.suite import report
from harness.users.actor import Actor
from harness.vocabulary.answers import AnswerCheck, asked_wrongly
from harness.vocabulary.facts import Fact
from harness.vocabulary.order import Span, exactly_but_ties
from steps.records import TakenBack, Talk
from steps.world import HER, NAME, World


@dataclass(frozen=True)
class MemorySwitched:
    """A user turned memory off: what they had told before, by then."""

    name: str
    told_before: tuple[Fact, ...]


def memory_of(world: World, name: str, text: str) -> tuple[str, ...]:
    """The id of the user's memory that reads `text` (the first, where several do), through the app's API."""
    return tuple(m.id for m in world.actors[name].session.memories() if m.text == text)[:1]


@given(parsers.re(f'^{NAME} deletes {HER} memory "(?P<text>.+)"$'), target_fixture="taken_back")
@when(parsers.re(f'^{NAME} deletes {HER} memory "(?P<text>.+)"$'), target_fixture="taken_back")
def deletes_memory(world: World, taken_back: TakenBack, name: str, text: str) -> TakenBack:
    """On the app's memories page (or through its API, for an app without one): the memory that reads so."""
    ids = memory_of(world, name, text)
    said = world.actors[name].delete_memory(text)
    assert not said, f"{name} deleted her memory {text!r} and the app said {said!r}"
    return taken_back.plus(name, memory_ids=ids, texts=(text,))


def _history_owner(world: World, history: HeldHistory, name: str) -> Actor:
    """The first owner of the history who can sign in, as this user of the cast, signed in."""
    actor = world.new_actor(name, history.accounts[sorted(history.accounts)[0]])
    world.actors[name] = actor
    actor.sign_in()
    return actor


def _all_of(name: str, held: list[Memory], taken_back: TakenBack) -> TakenBack:
    return taken_back.plus(name, memory_ids=tuple(m.id for m in held), texts=tuple(m.text for m in held))


@when(parsers.re(f'^{NAME}, one of the history\'s owners, asks "(?P<text>.+)" in a new conversation$'),
      target_fixture="talk")
def owner_asks_in_new_conversation(world: World, history: HeldHistory, talk: Talk, name: str, text: str) -> Talk:
    """The first owner of the history who can sign in, as this user: signed in, a new conversation started, one
    turn exactly as written."""
    actor = _history_owner(world, history, name)
    actor.start_new_conversation()
    return talk.new_conversation(name).after(actor.say(text))


@when(parsers.re(f"^{NAME}, one of the history's owners, deletes one of {HER} memories$"),
      target_fixture="taken_back")
def owner_deletes(world: World, history: HeldHistory, taken_back: TakenBack, name: str) -> TakenBack:
    """The first owner of the history who can sign in, as this user: signed in, their first memory deleted."""
    actor = _history_owner(world, history, name)
    memory = actor.session.memories()[0]
    said = actor.delete_memory(memory.text)
    assert not said, f"{name} deleted her memory {memory.text!r} and the app said {said!r}"
    return taken_back.plus(name, memory_ids=(memory.id,), texts=(memory.text,))


@when(parsers.re(f"^{NAME}, one of the history's owners, has {HER} account deleted$"), target_fixture="taken_back")
def owner_account_deleted(world: World, history: HeldHistory, taken_back: TakenBack, name: str) -> TakenBack:
    """The first owner of the history, as this user: signed in, then the account deleted by the app's admin; every
    memory it held is what is taken back."""
    actor = _history_owner(world, history, name)
    held = actor.session.memories()
    actor.close()
    world.app.delete_user(actor.account)
    return _all_of(name, held, taken_back)


@when(parsers.re(f"^{NAME}, one of the history's owners, clears all {HER} memories, as every other owner does$"),
      target_fixture="taken_back")
def every_owner_clears(world: World, history: HeldHistory, taken_back: TakenBack, name: str) -> TakenBack:
    """Each owner of the history signed in and their memories cleared, the others first, then this user: the store
    its owners emptied. What this user held is what is taken back."""
    owners = set(history.history.owners)
    assert owners == set(history.accounts), (f"owners {sorted(owners - set(history.accounts))} of the history cannot "
                                             "sign in to clear their memories: give each a golden question")
    for n, owner in enumerate(sorted(owners)[1:], start=2):
        other = world.new_actor(f"Owner{n}", history.accounts[owner])
        other.sign_in()
        other.clear_memories()
        other.close()
    actor = _history_owner(world, history, name)
    held = actor.session.memories()
    actor.clear_memories()
    return _all_of(name, held, taken_back)


@when(parsers.re(f'^{NAME} changes {HER} memory "(?P<text>.+)" to "(?P<new_text>.+)"$'), target_fixture="taken_back")
def changes_memory(world: World, taken_back: TakenBack, name: str, text: str, new_text: str) -> TakenBack:
    """On the app's memories page (or through its API): the memory that reads `text` now reads `new_text`; its old
    text is what is taken back."""
    world.actors[name].edit_memory(text, new_text)
    return taken_back.plus(name, texts=(text,), edits=((text, new_text),))


@when(parsers.re(f'^{NAME} starts changing {HER} memory "(?P<text>.+)" to "(?P<typed>.+)" and cancels$'))
def cancels_edit(world: World, name: str, text: str, typed: str) -> None:
    """On the app's memories page: Edit, the new text typed, Cancel; the editor closes on the old text (skipped where
    the target locates no Cancel of an edit)."""
    shown = world.actors[name].cancel_memory_edit(text, typed)
    assert shown == text, f"{name} cancelled her change of {text!r} to {typed!r}, and the memory now reads {shown!r}"


@when(parsers.re(f"^{NAME} starts clearing all {HER} memories and cancels$"))
def cancels_clear(world: World, name: str) -> None:
    """On the app's memories page: Clear all, then Cancel when asked to confirm; the question goes (skipped where the
    target locates no Cancel of it)."""
    world.actors[name].cancel_clear_memories()


@when(parsers.re(f"^{NAME} clears all {HER} memories$"), target_fixture="taken_back")
def clears_memories(world: World, taken_back: TakenBack, name: str) -> TakenBack:
    """"Clear all" on the app's memories page (or through its API), confirmed."""
    held = world.actors[name].session.memories()
    world.actors[name].clear_memories()
    return _all_of(name, held, taken_back)


@when(parsers.re(f'^{NAME} deletes the conversation in which (?:she|he|they) said "(?P<text>.+)"$'),
      target_fixture="taken_back")
def deletes_conversation(world: World, taken_back: TakenBack, name: str, text: str) -> TakenBack:
    """From the conversation list (or through the app's API): the user's conversation that has a turn saying so."""
    conversation_id, turns = world.conversation_in_which(name, text)
    world.actors[name].delete_conversation(conversation_id)
    return taken_back.plus(name, conversation_ids=(conversation_id,), turns=turns)


@when(parsers.re(f"^{NAME} deletes the conversation (?:she|he|they) (?:is|are) in$"), target_fixture="taken_back")
def deletes_open_conversation(world: World, taken_back: TakenBack, name: str) -> TakenBack:
    """The open one, from the conversation list (or through the app's API), without leaving it first."""
    actor = world.actors[name]
    actor.settle()
    conversation_id = actor.conversation_id()
    turns = tuple(actor.session.turns(conversation_id))
    actor.delete_conversation(conversation_id)
    return taken_back.plus(name, conversation_ids=(conversation_id,), turns=turns)


@then(parsers.re(f"^{NAME} is in a new conversation, with no turns$"), target_fixture="talk")
def in_new_conversation(world: World, talk: Talk, name: str) -> Talk:
    """What the user sees once the conversation they were in is deleted: none of its turns, and what they say next
    starts a new conversation."""
    shown = world.actors[name].turns_after_deleting_open_conversation()
    assert shown == [], f"{name} deleted the conversation she was in and still sees turns: {shown}"
    return talk.new_conversation(name)


@when(parsers.re(f"^{NAME} turns {HER} memory off$"), target_fixture="memory_switched")
def turns_memory_off(world: World, talk: Talk, name: str) -> MemorySwitched:
    """In the app's settings (or through its API)."""
    world.actors[name].turn_memory(False)
    return MemorySwitched(name, talk.of(name).told)


@when(parsers.re(f"^{NAME} turns {HER} memory on$"))
def turns_memory_on(world: World, name: str) -> None:
    """In the app's settings (or through its API)."""
    world.actors[name].turn_memory(True)


@then(parsers.re(f"^{NAME}'s memories are exactly, on {HER} screen and through the app's API:$"))
def memories_exactly(world: World, talk: Talk, taken_back: TakenBack, name: str, datatable: list[list[str]]) -> None:
    """What the user is shown of their memories (the memories page; an app without one: its API) and what the app's
    API lists: both exactly the table's rows after its header, in order (a memory the user edited last, where the
    app stores an edit as a new memory: [forgetting] memory_edited). Where the app's timestamps are coarse ([limits]
    clock_resolution_s), memories stored within that resolution of each other may come either way, and only those."""
    expected = [row[0] for row in datatable[1:]]
    if world.app.target.forgetting.edit_makes_newest:
        edited = [text for text in taken_back.edited_to if text in expected]
        expected = [text for text in expected if text not in edited] + edited
    actor = world.actors[name]
    actor.settle()
    made, resolution_s = _made_at(talk, taken_back, name), world.app.target.limits.clock_resolution_s
    listed = [m.text for m in actor.session.memories()]
    assert exactly_but_ties(listed, expected, made, resolution_s), (
        f"the app's API lists {name}'s memories as {listed}, expected exactly {expected}")
    shown = actor.memories_shown()
    assert exactly_but_ties(shown, expected, made, resolution_s), (
        f"{name} is shown her memories as {shown}, expected exactly {expected}")


def _made_at(talk: Talk, taken_back: TakenBack, name: str) -> dict[str, Span]:
    """When each of the user's stored memories was made, under its text now: an edited memory keeps its place (an
    app that makes it the newest is judged by exact order, as it is the newest for certain)."""
    made = dict(talk.of(name).made)
    for old, new in taken_back.edits if taken_back.name == name else ():
        if old in made:
            made[new] = made.pop(old)
    return made


@then(parsers.re(f"^{NAME}'s memories are still exactly:$"))
def memories_still(world: World, name: str, datatable: list[list[str]]) -> None:
    """What the app's API lists of the user's memories: exactly the table's rows after its header, in order."""
    expected = [row[0] for row in datatable[1:]]
    listed = [m.text for m in world.actors[name].session.memories()]
    assert listed == expected, f"the app's API lists {name}'s memories as {listed}, expected exactly {expected}"


@then(parsers.re(f'^searching {NAME}\'s memory for "(?P<text>.+)" finds no memory that reads it$'))
def finds_none_that_reads(world: World, name: str, text: str) -> None:
    """The app's memory search, by the very text: no hit reads it."""
    if not world.app.searches():
        return
    hits = world.actors[name].session.search(text, k=world.app.recall_k)
    found = [h.text for h in hits if h.text == text]
    assert not found, f"searching {name}'s memory for {text!r} still finds it: {[h.text for h in hits]}"


@then(parsers.re(f'^searching {NAME}\'s memory for "(?P<question>.+)" finds "(?P<text>.+)" first$'))
def finds_first(world: World, name: str, question: str, text: str) -> None:
    """The app's memory search: the memory that reads `text` is the best hit."""
    if not world.app.searches():
        return
    hits = world.actors[name].session.search(question, k=world.app.recall_k)
    assert hits and hits[0].text == text, (
        f"searching {name}'s memory for {question!r} should find {text!r} first, found {[h.text for h in hits]}")


@then(parsers.re(f"^what {NAME} took back is neither listed nor found, and the app's store holds nothing of it$"))
def taken_back_gone(world: World, taken_back: TakenBack, name: str) -> None:
    """The memories the user took back: not listed by the app's API (by id, nor by text), no search by their text
    finds a memory that reads it, and the store holds none of their rows and vectors."""
    assert taken_back.name == name and taken_back.texts, f"{name} took nothing back"
    session = world.actors[name].session
    listed = session.memories()
    back = [m.text for m in listed if m.id in taken_back.memory_ids or m.text in taken_back.texts]
    assert not back, f"the app lists again what {name} took back: {back}"
    for text in taken_back.texts if world.app.searches() else ():
        hits = session.search(text, k=world.app.recall_k)
        assert all(h.text != text for h in hits), f"searching {name}'s memory for {text!r} finds it again"
    store_holds_nothing_taken_back(world, taken_back, name)


@then(parsers.re(f"^the app's store holds nothing of what {NAME} took back$"))
def store_holds_nothing_taken_back(world: World, taken_back: TakenBack, name: str) -> None:
    """No row and no vector of the memories the user deleted is left in the app's store (where the driver reads
    the store; elsewhere the report says it was not checked)."""
    assert taken_back.name == name, f"{name} took nothing back; {taken_back.name or 'nobody'} did"
    assert taken_back.memory_ids, f"{name} took back no memory the app had listed"
    if not (world.app.offers(Capability.DATABASE_ACCESS) or world.app.offers(Capability.MEMORY_REMAINS)):
        report.attach_text("not checked", f"the {world.app.name} driver does not read the app's store")
        return
    remains = world.app.part(MemoryRemains).memory_remains(world.app.running, list(taken_back.memory_ids))
    left = {kind: n for kind, n in remains.items() if n}
    assert not left, f"after {name} took back {list(taken_back.texts)}, the app's store still holds {left}"


@then(parsers.re(f"^the conversation {NAME} deleted is gone from {HER} list, from its address and from every read of "
                 "the app's API$"))
def conversation_gone(world: World, taken_back: TakenBack, name: str) -> None:
    """Not listed (on the page and by the API); its address shows none of its turns; the API refuses it; and, where
    the driver reads the app's store, nothing of it is left there."""
    assert taken_back.name == name and taken_back.conversation_ids, f"{name} deleted no conversation"
    actor, gone = world.actors[name], taken_back.conversation_ids[0]
    listed = actor.conversations_listed()
    assert gone not in listed, f"{name}'s deleted conversation {gone} is still in her list {listed}"
    assert gone not in actor.session.conversation_ids(), f"the app's API still lists {name}'s deleted conversation"
    status = actor.open_by_address(gone)
    shown = actor.shown_text()
    leaked = [t.text for t in taken_back.turns if t.text in shown]
    assert not leaked, f"{name}'s deleted conversation, opened by its address (HTTP {status}), still shows {leaked}"
    answer = actor.session.ask_for_conversation(gone)
    assert answer.refused, f"the app's API answers {name}'s deleted conversation with HTTP {answer.status}"
    actor.reload()
    if not world.app.offers(Capability.CONVERSATION_REMAINS):
        report.attach_text("not checked", f"the {world.app.name} driver does not read what the app's store keeps of "
                                          "a deleted conversation")
        return
    remains = world.app.part(ConversationRemains).conversation_remains(world.app.running, gone)
    left = {kind: n for kind, n in remains.items() if n}
    assert not left, f"after {name} deleted her conversation {gone}, the app's store still holds {left}"


@then(parsers.re(f"^{HER} other conversation is still listed, with every turn$"))
def other_conversation_kept(world: World, talk: Talk, taken_back: TakenBack) -> None:
    """The conversation the user still has open: listed, and its turns exactly as said."""
    name = taken_back.name
    session = world.actors[name].session
    kept = [cid for cid in session.conversation_ids() if cid not in taken_back.conversation_ids]
    assert len(kept) == 1, f"{name} should have one conversation left, the app lists {kept}"
    turns = session.turns(kept[0])
    assert turns == list(talk.of(name).turns), f"{name}'s other conversation now reads {turns}"


@then("the memories told in the deleted conversation are kept or deleted, as the app documents")
def deleted_conversations_memories(world: World, taken_back: TakenBack, answers: AnswerCheck) -> None:
    """The facts stated in the deleted conversation, asked in a new one: answered where the app keeps them, not where
    it deletes them with the conversation ([forgetting] conversation_deleted); listed accordingly."""
    choice = world.app.target.forgetting.conversation_deleted
    if choice is None:
        pytest.skip(f"needs what {world.app.target.path.name} documents of a deleted conversation's memories: "
                    "[forgetting] conversation_deleted")
    name = taken_back.name
    actor = world.actors[name]
    told = [Fact.parse(t.text) for t in taken_back.turns if t.role == "user" and Fact.states_one(t.text)]
    listed = [m.text for m in actor.session.memories()]
    kept = choice.memories == "kept"
    wrong = [f.sentence for f in told if (f.sentence in listed) != kept]
    assert not wrong, (f"{world.app.name} documents that a deleted conversation's memories are {choice.memories} "
                       f"({choice.source}); {name}'s memories list {listed}")
    actor.start_new_conversation()
    wrong = asked_wrongly(actor, [(f.question, f.answer if kept else f.forgotten) for f in told], answers)
    assert not wrong, (f"{name} asked about what she told in the conversation she deleted ({world.app.name} documents "
                       f"its memories as {choice.memories}: {choice.source}):\n" + "\n".join(wrong))


@then(parsers.re(f"^what {NAME} told before {HER} memory was off is answered as the app documents, and nothing "
                 f"(?:she|he|they) told while it was off$"))
def answered_after_memory_on(world: World, talk: Talk, memory_switched: MemorySwitched, answers: AnswerCheck,
                             name: str) -> None:
    """Each fact told before memory went off, asked in a new conversation: answered where the app uses them again,
    not where they are gone ([forgetting] memory_on_again); each told while off: not answered."""
    choice = world.app.target.forgetting.memory_on_again
    if choice is None:
        pytest.skip(f"needs what {world.app.target.path.name} documents of memories once memory is on again: "
                    "[forgetting] memory_on_again")
    assert memory_switched.name == name, f"{name} did not turn her memory off; {memory_switched.name} did"
    before = memory_switched.told_before
    while_off = [f for f in talk.of(name).told if f not in before]
    actor = world.actors[name]
    used_again = choice.memories == "used again"
    actor.start_new_conversation()
    wrong = asked_wrongly(actor, [(f.question, f.answer if used_again else f.forgotten) for f in before]
                          + [(f.question, f.forgotten) for f in while_off], answers)
    assert not wrong, (f"with {name}'s memory on again ({world.app.name} documents the memories from before as "
                       f"{choice.memories}: {choice.source}):\n" + "\n".join(wrong))
