"""Steps of account_life_cycle.feature: deleting an account, and what may remain of it."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from pytest_bdd import given, parsers, then, when

from harness.app.app_tools import ToolRun
from harness.drivers.base import AccountRemains, PasswordSignIn
from steps.records import LeftSession, Talk
from steps.world import HER, NAME, World


@when(parsers.re(f"^{NAME}'s account is deleted$"), target_fixture="left_session")
def account_deleted(world: World, name: str) -> LeftSession:
    """Deleted by the app's admin; what her browser held and what the account held just before are kept."""
    actor = world.actors[name]
    held = actor.held_session()
    left = LeftSession(name, actor.account, held, f"{name}'s account was deleted",
                       tuple(actor.session.conversation_ids()), tuple(m.id for m in actor.session.memories()))
    world.app.delete_user(actor.account)
    return left


@given(parsers.re(f"^an operator adds an account for {NAME} on the app's command line$"))
def added_by_tool(world: World, name: str) -> None:
    """The account is added with the app's own command-line tool, not its admin API (skipped where it has none)."""
    world.add_by_tool(name)


@when(parsers.re(f"^an operator deletes {NAME}'s account on the app's command line$"), target_fixture="left_session")
def deleted_by_tool(world: World, name: str) -> LeftSession:
    """Deleted with the app's own command-line tool; what her browser held and what the account held are kept."""
    actor = world.actors[name]
    left = LeftSession(name, actor.account, actor.held_session(), f"{name}'s account was deleted on the command line",
                       tuple(actor.session.conversation_ids()), tuple(m.id for m in actor.session.memories()))
    world.app.delete_user_by_tool(actor.account)
    return left


@dataclass(frozen=True)
class CommandLineRuns:
    """What the app's command line did with each thing an operator asked of it that it had to refuse."""

    runs: tuple[tuple[str, ToolRun], ...] = ()  # (what was asked, how it ended)

    def plus(self, asked: str, run: ToolRun) -> CommandLineRuns:
        return CommandLineRuns((*self.runs, (asked, run)))


@pytest.fixture
def command_line_runs() -> CommandLineRuns:
    """Nothing asked yet; each step that asks hands on a new one (target_fixture="command_line_runs")."""
    return CommandLineRuns()


@when(parsers.re(f"^an operator adds an account with {NAME}'s address on the app's command line$"),
      target_fixture="command_line_runs")
def adds_a_taken_address(world: World, command_line_runs: CommandLineRuns, name: str) -> CommandLineRuns:
    """The app's own tool asked to add an account for the address her account has, with another password."""
    email = world.actors[name].account.email
    return command_line_runs.plus(f"adding an account for {email}, which {name} has",
                                  world.app.try_add_user_by_tool(email, world.data.password()))


@when("an operator deletes the account of an address nobody has on the app's command line",
      target_fixture="command_line_runs")
def deletes_an_unknown_address(world: World, command_line_runs: CommandLineRuns) -> CommandLineRuns:
    """The app's own tool asked to delete the account of an address no account has."""
    email = world.data.email("nobody", world.tag)
    return command_line_runs.plus(f"deleting the account of {email}, which nobody has",
                                  world.app.try_delete_user_by_tool(email))


@then(parsers.re(f"^the app's command line refuses each in one line, and {NAME} still signs in with {HER} "
                 "password$"))
def refused_on_the_command_line(world: World, command_line_runs: CommandLineRuns, name: str) -> None:
    """Each run ended with a failing exit status and one line on its error stream (no traceback), having changed
    nothing: her own password still lets her in."""
    wrong = []
    for asked, run in command_line_runs.runs:
        said = [line for line in run.stderr.splitlines() if line.strip()]
        if run.returncode == 0:
            wrong.append(f"{asked}: not refused (exit status 0); it said {run.stdout.strip()[-200:]!r}")
        elif len(said) != 1:
            wrong.append(f"{asked}: exit status {run.returncode} and {len(said)} lines, not one; its last: {said[-3:]}")
    assert command_line_runs.runs and not wrong, ("the app's command line did not refuse in one line what an "
                                                  "operator got wrong:\n" + "\n".join(wrong))
    account = world.actors[name].account
    refusal = world.app.part(PasswordSignIn).try_sign_in(world.app.running, account.email, account.password)
    assert not refusal, (f"after the command line's refusals, {name}'s own password no longer lets her in: the app "
                         f"said {refusal!r}")


@then(parsers.re(f"^the app's store holds nothing of {NAME}'s account$"))
def store_holds_nothing(world: World, left_session: LeftSession, name: str) -> None:
    """No row of the deleted account's user, conversations or memories in the app's store (database access, or a
    driver that reads what the store keeps of an account)."""
    store = world.app.part(AccountRemains)
    assert left_session.name == name, f"{name}'s account was not deleted; {left_session.name}'s was"
    conversations, memories = list(left_session.conversation_ids), list(left_session.memory_ids)
    assert conversations and memories, f"{name}'s account held no conversation or memory to check before deletion"
    remains = store.remains_of(world.app.running, left_session.account, conversations, memories)
    left = {kind: n for kind, n in remains.items() if n}
    assert not left, f"after {name}'s account was deleted, the app's store still holds rows of it: {left}"


@when(parsers.re(f"^a new account is opened with {NAME}'s e-mail address and signs in$"), target_fixture="talk")
def same_address_again(world: World, talk: Talk, name: str) -> Talk:
    """A new account with the deleted account's address, signed in; "she" is its user from now on."""
    old = world.forget(name)
    again = world.create_user(name)  # the same words and tag: the same address as the deleted account
    assert again.account.email.lower() == old.account.email.lower(), (
        f"the new account got {again.account.email}, not the deleted account's {old.account.email}")
    again.sign_in()
    return talk.new_account(name)


@then("she has no conversations and no memories")
def nothing_inherited(world: World, talk: Talk) -> None:
    """Nothing listed on the page or through the API."""
    actor = world.actors[talk.speaker]
    conversations, memories = actor.session.conversation_ids(), [m.text for m in actor.session.memories()]
    listed = actor.conversations_listed()
    assert not conversations and not memories and not listed, (
        f"{actor.name}'s new account inherited conversations {conversations or listed} and memories {memories}")


@when(parsers.parse('she asks in a new conversation "{question}"'), target_fixture="talk")
def she_asks(world: World, talk: Talk, question: str) -> Talk:
    """One question, in a new conversation."""
    actor = world.actors[talk.speaker]
    actor.start_new_conversation()
    return talk.new_conversation(actor.name).after(actor.say(question))


@dataclass(frozen=True)
class Refusals:
    """What the sign-in page said to each attempt that had to fail."""

    said: tuple[tuple[str, str], ...] = ()  # (which attempt, the page's words)

    def plus(self, attempt: str, words: str) -> Refusals:
        return Refusals((*self.said, (attempt, words)))


@pytest.fixture
def refusals() -> Refusals:
    """No attempt yet; each attempt hands on a new one (target_fixture="refusals")."""
    return Refusals()


@given(parsers.re(f"^{NAME} has an account$"))
def has_account(world: World, name: str) -> None:
    """An account of the app, not signed in anywhere."""
    world.actor(name)


def refused_sign_in(world: World, email: str, password: str) -> str:
    stranger = world.new_actor("Someone", world.actors[next(iter(world.actors))].account)
    stranger.open_new_browser()
    return stranger.refused_sign_in(email, password)


@when(parsers.re(f"^someone signs in as {NAME} with a wrong password$"), target_fixture="refusals")
def wrong_password(world: World, refusals: Refusals, name: str) -> Refusals:
    """Her address and a wrong password, on the sign-in page of a new browser."""
    account = world.actors[name].account
    return refusals.plus("a wrong password", refused_sign_in(world, account.email, account.password + "x"))


@when("someone signs in with an address nobody has", target_fixture="refusals")
def unknown_address(world: World, refusals: Refusals) -> Refusals:
    """An address of no account, on the sign-in page of a new browser."""
    return refusals.plus("an address nobody has", refused_sign_in(world, world.data.email("nobody", world.tag),
                                                                  world.data.password()))


@then("both are refused with the same words, and neither is signed in")
def refused_alike(refusals: Refusals) -> None:
    """The page says the same to both (it reveals no account), and says something."""
    said = dict(refusals.said)
    assert len(said) == 2 and all(said.values()), f"the sign-in page said nothing to some attempts: {said}"
    assert len(set(said.values())) == 1, (
        f"the sign-in page tells a wrong password from an unknown address (it reveals who has an account): {said}")
