"""Steps of account_life_cycle.feature: deleting an account, and what may remain of it."""

from __future__ import annotations

from pytest_bdd import parsers, then, when

from harness.drivers.base import Capability
from steps.common_steps import NAME, sign_in, speak, speaker, start_new_conversation
from steps.cross_session_steps import old_session_refused
from steps.world import Scenario


@when(parsers.re(f"^{NAME}'s account is deleted$"))
def account_deleted(world: Scenario, name: str) -> None:
    actor = world.actors[name]
    actor.signed_out_of = actor.page.context.storage_state()  # what a copied cookie or token would hold
    actor.had = (actor.session.conversation_ids(), [m.id for m in actor.session.memories()])
    world.driver.delete_user(world.app, actor.account)


@then(parsers.re(f"^the session {NAME} had is refused by the app$"))
def deleted_account_session_refused(world: Scenario, name: str) -> None:
    old_session_refused(world, name, f"{name}'s account was deleted")


@then(parsers.re(f"^the app's store holds nothing of {NAME}'s account$"))
def store_holds_nothing(world: Scenario, name: str) -> None:
    world.require(Capability.DATABASE_ACCESS)
    actor = world.actors[name]
    conversations, memories = actor.had
    assert conversations and memories, f"{name}'s account held no conversation or memory to check before deletion"
    remains = world.driver.remains_of(world.app, actor.account, conversations, memories)
    left = {kind: n for kind, n in remains.items() if n}
    assert not left, f"after {name}'s account was deleted, the app's store still holds rows of it: {left}"


@when(parsers.re(f"^a new account is opened with {NAME}'s e-mail address and signs in$"))
def same_address_again(world: Scenario, name: str) -> None:
    old = world.actors.pop(name)
    old.close()
    again = world.create_user(name)  # the same words and tag: the same address as the deleted account
    assert again.account.email.lower() == old.account.email.lower(), (
        f"the new account got {again.account.email}, not the deleted account's {old.account.email}")
    sign_in(world, name)


@then("she has no conversations and no memories")
def nothing_inherited(world: Scenario) -> None:
    actor = speaker(world)
    conversations, memories = actor.session.conversation_ids(), [m.text for m in actor.session.memories()]
    listed = actor.sidebar.ids()
    assert not conversations and not memories and not listed, (
        f"{actor.name}'s new account inherited conversations {conversations or listed} and memories {memories}")


@when(parsers.parse('she asks in a new conversation "{question}"'))
def she_asks(world: Scenario, question: str) -> None:
    actor = speaker(world)
    start_new_conversation(actor)
    speak(actor, question)
