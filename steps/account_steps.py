"""Steps of account_life_cycle.feature: deleting an account, and what may remain of it."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from pytest_bdd import given, parsers, then, when

from harness.drivers.base import Capability
from steps.world import NAME, LeftSession, World


@when(parsers.re(f"^{NAME}'s account is deleted$"), target_fixture="left_session")
def account_deleted(world: World, name: str) -> LeftSession:
    """Deletes the user's account, after noting the session it held and its conversations and memories."""
    actor = world.actors[name]
    held = actor.held_session()
    left = LeftSession(name, actor.account, held, f"{name}'s account was deleted",
                       tuple(actor.session.conversation_ids()), tuple(m.id for m in actor.session.memories()))
    world.app.delete_user(actor.account)
    return left


@then(parsers.re(f"^the app's store holds nothing of {NAME}'s account$"))
def store_holds_nothing(world: World, left_session: LeftSession, name: str) -> None:
    """The app's store holds no row of the deleted account, its conversations or its memories."""
    world.app.require(Capability.DATABASE_ACCESS)
    assert left_session.name == name, f"{name}'s account was not deleted; {left_session.name}'s was"
    conversations, memories = list(left_session.conversation_ids), list(left_session.memory_ids)
    assert conversations and memories, f"{name}'s account held no conversation or memory to check before deletion"
    remains = world.app.remains_of(left_session.account, conversations, memories)
    left = {kind: n for kind, n in remains.items() if n}
    assert not left, f"after {name}'s account was deleted, the app's store still holds rows of it: {left}"


@when(parsers.re(f"^a new account is opened with {NAME}'s e-mail address and signs in$"))
def same_address_again(world: World, name: str) -> None:
    """A new account is opened with the deleted account's e-mail address, and signs in."""
    old = world.forget(name)
    again = world.create_user(name)  # the same words and tag: the same address as the deleted account
    assert again.account.email.lower() == old.account.email.lower(), (
        f"the new account got {again.account.email}, not the deleted account's {old.account.email}")
    again.sign_in()


@then("she has no conversations and no memories")
def nothing_inherited(world: World) -> None:
    """The new account has no conversations and no memories, through the API and on the page."""
    actor = world.speaking()
    conversations, memories = actor.session.conversation_ids(), [m.text for m in actor.session.memories()]
    listed = actor.conversations_listed()
    assert not conversations and not memories and not listed, (
        f"{actor.name}'s new account inherited conversations {conversations or listed} and memories {memories}")


@when(parsers.parse('she asks in a new conversation "{question}"'))
def she_asks(world: World, question: str) -> None:
    """The user who acted last starts a new conversation and asks the question."""
    actor = world.speaking()
    actor.start_new_conversation()
    actor.say(question)


@dataclass
class Refusals:
    """What the sign-in page said to each attempt that had to fail."""

    said: dict[str, str] = field(default_factory=dict)  # which attempt -> the page's words


@pytest.fixture
def refusals() -> Refusals:
    return Refusals()


@given(parsers.re(f"^{NAME} has an account$"))
def has_account(world: World, name: str) -> None:
    """Creates the user's account (if the scenario has none yet)."""
    world.actor(name)


def refused_sign_in(world: World, email: str, password: str) -> str:
    stranger = world.new_actor("Someone", world.actors[next(iter(world.actors))].account)
    stranger.open_new_browser()
    return stranger.refused_sign_in(email, password)


@when(parsers.re(f"^someone signs in as {NAME} with a wrong password$"))
def wrong_password(world: World, refusals: Refusals, name: str) -> None:
    """Someone signs in on the sign-in page as the user with a wrong password; the page's words are kept."""
    account = world.actors[name].account
    refusals.said["a wrong password"] = refused_sign_in(world, account.email, account.password + "x")


@when("someone signs in with an address nobody has")
def unknown_address(world: World, refusals: Refusals) -> None:
    """Someone signs in with an address no account has; the page's words are kept."""
    refusals.said["an address nobody has"] = refused_sign_in(world, world.data.email("nobody", world.tag),
                                                             world.data.password())


@then("both are refused with the same words, and neither is signed in")
def refused_alike(refusals: Refusals) -> None:
    """The sign-in page refused both attempts, with the same words."""
    said = refusals.said
    assert len(said) == 2 and all(said.values()), f"the sign-in page said nothing to some attempts: {said}"
    assert len(set(said.values())) == 1, (
        f"the sign-in page tells a wrong password from an unknown address (it reveals who has an account): {said}")
