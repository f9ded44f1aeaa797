"""Steps of after_a_failure.feature: a message the app refused, a reply lost on the way, the app restarted, and the
user going on in the same page. A failure is handed on as `failure`; the conversation's turns are then checked
through the API and on the page loaded again."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from pytest_bdd import parsers, then, when

from harness.drivers.base import RefusedStart
from harness.users.actor import MemoryChange
from harness.vocabulary.polling import wait_until
from harness.vocabulary.turn import Turn
from steps.records import Talk
from steps.world import HER, NAME, World

MEMORY_WAIT_S = 8  # how long the page's writes of a turn may take to land


@dataclass(frozen=True)
class Failure:
    """A message that failed: who sent it, what the page said, and where it stands among her turns."""

    name: str = ""
    text: str = ""
    stored: bool = False  # the app got it and answered (only the answer was lost)
    shown: str = ""  # the error the page showed
    turns_before: int = 0  # how many turns of her conversation came before it


@when(parsers.re(f'^{NAME}\'s message "(?P<text>[^"]+)" is refused by the app$'), target_fixture="failure")
def refused_by_app(world: World, talk: Talk, name: str, text: str) -> Failure:
    """The chat request answered with a server error once (the app never sees it); she stays in the same page."""
    shown = world.actors[name].say_refused_by_app(text)
    return Failure(name, text, False, shown, len(talk.of(name).turns))


@when(parsers.re(f'^the connection drops while {NAME}\'s message "(?P<text>[^"]+)" is answered$'),
      target_fixture="failure")
def dropped_mid_reply(world: World, talk: Talk, name: str, text: str) -> Failure:
    """The app gets the message and answers; the answer never reaches her page. She stays in the same page."""
    shown = world.actors[name].say_dropped(text)
    return Failure(name, text, True, shown, len(talk.of(name).turns))


@when(parsers.re(f'^{NAME} tells the assistant "(?P<text>[^"]+)" and the app fails to keep it$'),
      target_fixture="failure")
def memory_write_refused(world: World, talk: Talk, name: str, text: str) -> Failure:
    """The turn is answered; the page's write of what it taught meets a server error once (the app never sees the
    write). She stays in the same page; what she told is not among the facts the app keeps."""
    shown = world.actors[name].say_with_memory_write_refused(text)
    return Failure(name, text, True, shown, len(talk.of(name).turns))


@when(parsers.re(f"^the app restarts while {NAME} is in the conversation$"), target_fixture="failure")
def restarts_mid_conversation(world: World, talk: Talk, name: str) -> Failure:
    """Between two of her turns, once what her page wrote of the last one has landed (a restart in the middle of a
    write is another promise): the app stopped and started on the same data; her page stays open."""
    actor, told = world.actors[name], [f.sentence for f in talk.of(name).told]
    actor.settle()  # an app that writes memories on its own after a turn has written them (what its driver waits on)
    wait_until(lambda: [m.text for m in actor.session.memories()], lambda texts: texts == told,
               timeout=MEMORY_WAIT_S, what=f"{name}'s memories holding {told} before the restart")
    world.restart_app()
    return Failure(name, turns_before=len(talk.of(name).turns))


@then(parsers.re(f"^{NAME} is told her message was not sent$"))
def told_not_sent(failure: Failure, name: str) -> None:
    """The page said so (an error where the reply would be): she knows to send it again if she wants."""
    assert failure.shown.strip(), (f"{name} sent {failure.text!r}, which failed, and the page showed her no error: "
                                   "she believes it was sent")


@then(parsers.re(f"^{NAME} is told what (?:she|he|they) said was not remembered$"))
def told_not_remembered(failure: Failure, name: str) -> None:
    """The page said so: a write that never persists is never lost in silence."""
    assert failure.shown.strip(), (f"{name} told {failure.text!r}, the app failed to keep it, and the page showed her "
                                   "no error: she believes it is remembered")


def _as_modelled(failure: Failure, said: tuple[Turn, ...], stored: list[Turn]) -> list[Turn]:
    """Her turns as said, with the failed message where she sent it when the app stored it: its reply is whatever
    the app stored after it (the page never saw it), so long as it is one assistant turn."""
    before, after = list(said[:failure.turns_before]), list(said[failure.turns_before:])
    if not failure.stored:
        return before + after
    at = len(before) + 1
    reply = stored[at] if at < len(stored) and stored[at].role == "assistant" else Turn("assistant", "<its reply>")
    return [*before, Turn("user", failure.text), reply, *after]


def _typed(turns: list[Turn]) -> list[str]:
    return [t.text for t in turns if t.role == "user"]


@then(parsers.re(f"^the conversation keeps each message {NAME} typed once$"))
def conversation_keeps_each_once(world: World, talk: Talk, failure: Failure, name: str) -> None:
    """Through the API, then on her page loaded again (the conversation at its address): exactly her turns, each
    once, in order; the failed message once or not at all, as its failure's rule says."""
    _keeps_each_once(world, talk, failure, name)


@then(parsers.re(f"^the conversation keeps each message {NAME} typed once, and the refused one not at all$"))
def keeps_each_once_but_the_refused(world: World, talk: Talk, failure: Failure, name: str) -> None:
    """As above, after a message the app refused: it is not stored."""
    assert not failure.stored, f"{name}'s failed message {failure.text!r} was not refused but dropped"
    _keeps_each_once(world, talk, failure, name)


@then(parsers.re(f"^the conversation keeps each message {NAME} typed once, the dropped one included$"))
def keeps_each_once_with_the_dropped(world: World, talk: Talk, failure: Failure, name: str) -> None:
    """As above, after a reply the connection dropped: the message and the app's reply are stored, once."""
    assert failure.stored, f"{name}'s failed message {failure.text!r} was not dropped but refused"
    _keeps_each_once(world, talk, failure, name)


def _keeps_each_once(world: World, talk: Talk, failure: Failure, name: str) -> None:
    actor = world.actors[name]
    conversation = actor.conversation_id()
    stored = list(actor.session.turns(conversation))
    expected = _as_modelled(failure, talk.of(name).turns, stored)
    twice = sorted((Counter(_typed(stored)) - Counter(_typed(expected))).elements())
    assert stored == expected, (f"{name}'s conversation as the app stored it after the failure differs from what she "
                                f"typed, each once{f' (stored again: {twice})' if twice else ''}.\n"
                                f"expected: {expected}\nstored:   {stored}")
    status = actor.open_by_address(conversation)
    shown = actor.history()
    assert status == 200 and shown == expected, (
        f"{name}'s conversation shown on her page loaded again (HTTP {status}) differs from what she typed, each "
        f"once.\nexpected: {expected}\nshown:    {shown}")


# -- a change the app refused, told on the page, and done again --------------------------------------------------------
@dataclass(frozen=True)
class RefusedDeletion:
    """A conversation whose deletion the app refused: whose, its turns just before, what the page said."""

    name: str
    conversation_id: str
    turns: tuple[Turn, ...]
    shown: str


@when(parsers.re(f'^{NAME} deletes the conversation in which (?:she|he|they) said "(?P<text>.+)", and the app '
                 "refuses it$"), target_fixture="refused")
def deletion_refused(world: World, name: str, text: str) -> RefusedDeletion:
    """From the conversation list, one click, the deletion's request answered by a server error in the app's place
    (the app never sees it)."""
    conversation_id, turns = world.conversation_in_which(name, text)
    shown = world.actors[name].delete_conversation_refused(conversation_id)
    return RefusedDeletion(name, conversation_id, turns, shown)


@dataclass(frozen=True)
class RefusedChange:
    """A change of a user's memories that the app refused: what the page said, and the memories and the setting
    before it."""

    name: str
    change: MemoryChange
    shown: str
    memories: tuple[str, ...]
    memory_on: bool | None  # None: the app's API does not tell


def _refuse(world: World, name: str, change: MemoryChange) -> RefusedChange:
    """On the memories page, one click, the change's request answered by a server error in the app's place (the app
    never sees it)."""
    actor = world.actors[name]
    actor.settle()
    actor.memories_shown()  # her memories page, reached from the chat: a page's writes of her last turns land first
    memories = tuple(m.text for m in actor.session.memories())
    on = actor.session.memory_setting()
    return RefusedChange(name, change, actor.memory_change_refused(change), memories, on)


@when(parsers.re(f'^{NAME} changes {HER} memory "(?P<text>.+)" to "(?P<new_text>.+)", and the app refuses it$'),
      target_fixture="refused")
def edit_refused(world: World, name: str, text: str, new_text: str) -> RefusedChange:
    """Edit, the new text typed, Save: the save refused."""
    return _refuse(world, name, MemoryChange("edit", text, new_text))


@when(parsers.re(f'^{NAME} deletes {HER} memory "(?P<text>.+)", and the app refuses it$'), target_fixture="refused")
def delete_refused(world: World, name: str, text: str) -> RefusedChange:
    """Delete, clicked once: refused."""
    return _refuse(world, name, MemoryChange("delete", text))


@when(parsers.re(f"^{NAME} clears all {HER} memories, and the app refuses it$"), target_fixture="refused")
def clear_refused(world: World, name: str) -> RefusedChange:
    """Clear all, confirmed: refused."""
    return _refuse(world, name, MemoryChange("clear"))


@when(parsers.re(f"^{NAME} turns {HER} memory off, and the app refuses it$"), target_fixture="refused")
def switch_refused(world: World, name: str) -> RefusedChange:
    """The memory switch clicked off: its saving refused."""
    return _refuse(world, name, MemoryChange("switch", on=False))


@then(parsers.re(f"^{NAME} is told {HER} memories were not changed, and they are exactly as before$"))
def told_not_changed(world: World, refused: RefusedChange, name: str) -> None:
    """The page said so, the app's API lists the same memories in the same order, her memories page shows them,
    and her memory is still on or off as it was."""
    assert refused.name == name, f"{refused.name}'s change was refused, not {name}'s"
    assert refused.shown.strip(), (f"the app refused {refused.change} for {name} and her page showed her no error: "
                                   "she believes it was made")
    actor = world.actors[name]
    listed = tuple(m.text for m in actor.session.memories())
    assert listed == refused.memories, (f"the app refused {refused.change} for {name}, yet its API lists her "
                                        f"memories as {list(listed)}, not {list(refused.memories)}")
    shown = tuple(actor.memories_shown())
    assert shown == refused.memories, (f"the app refused {refused.change} for {name}, yet she is shown her memories "
                                       f"as {list(shown)}, not {list(refused.memories)}")
    if refused.memory_on is not None:
        on = actor.session.memory_setting()
        assert on == refused.memory_on, (f"the app refused {refused.change} for {name}, yet her memory is "
                                         f"{'on' if on else 'off'}")


@then(parsers.re(f"^{NAME} is told the conversation was not deleted, and it is still hers, with every turn$"))
def told_not_deleted(world: World, refused: RefusedDeletion, name: str) -> None:
    """The page said so, and the app's API still lists the conversation with the turns it had."""
    assert refused.name == name, f"{refused.name}'s deletion was refused, not {name}'s"
    assert refused.shown.strip(), (f"{name} deleted a conversation, the app refused it, and the page showed "
                                            "her no error: she believes it is gone")
    session = world.actors[name].session
    listed = refused.conversation_id in session.conversation_ids()
    turns = tuple(session.turns(refused.conversation_id)) if listed else ()
    now = f"changed: its turns are {list(turns)}, not {list(refused.turns)}" if listed else "no longer listed"
    assert listed and turns == refused.turns, (
        f"the app refused {name}'s deletion of a conversation, yet it is {now}")


@then(parsers.re(f"^{NAME}'s page no longer says anything failed$"))
def no_failure_shown(world: World, refused: RefusedDeletion | RefusedChange, name: str) -> None:
    """Once a change went through, the page shows no error of one the app refused before: a stale error reads as if
    the change that went through had failed."""
    shown = world.actors[name].change_errors_shown()
    assert not shown, (f"{name}'s page still says {shown} after her change went through (the app had refused it "
                       f"once before, and the page said {refused.shown!r} then)")


# -- a start its operators get wrong ---------------------------------------------------------------------------------
@when("the app's operators start it with each mistake they are warned of", target_fixture="refused_starts")
def starts_with_mistakes(world: World) -> list[RefusedStart]:
    """Beside the running app, on its databases: the app started with each mistake its driver knows from its
    documentation (a port another program holds, a store nobody answers at, ...), each run to its end."""
    return world.app.refused_starts()


@then("each start is refused in one line that names what to fix")
def starts_refused(refused_starts: list[RefusedStart]) -> None:
    """A failing exit status and one line on the error stream (no traceback) naming what to fix."""
    wrong = []
    for start in refused_starts:
        if start.returncode == 0:
            wrong.append(f"{start.what}: the app was not refused (exit status 0)")
        elif len(start.said) != 1:
            wrong.append(f"{start.what}: the app said {len(start.said)} lines, not one; its last: "
                         f"{list(start.said[-3:])}")
        elif start.named not in start.said[0]:
            wrong.append(f"{start.what}: its refusal {start.said[0]!r} does not name {start.named!r}")
    assert refused_starts and not wrong, ("a start of the app with a mistake was not refused in one line that says "
                                          "what to fix:\n" + "\n".join(wrong))
