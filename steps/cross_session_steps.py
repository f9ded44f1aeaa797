"""Steps of cross_session_persistence.feature and memory_expiry.feature: closing and reopening the browser, pages
that close mid-write, and time passing."""

from __future__ import annotations

from pytest_bdd import given, parsers, then, when

from harness.drivers.base import Capability
from harness.polling import wait_until
from steps.common_steps import NAME, speaker
from steps.world import Actor, Fact, Scenario


def open_profile(world: Scenario, actor: Actor) -> None:
    actor.page = world.browsers.open_profile(actor.profile)
    world.speaker = actor.name


def sign_in_in_own_profile(world: Scenario, actor: Actor) -> None:
    """A browser profile of the actor's own, signed in through the login form, as a person does once."""
    actor.profile = world.browsers.new_profile()
    open_profile(world, actor)
    actor.login.open().log_in(actor.account.email, actor.account.password)
    actor.chat.expect_signed_in()


def reopen_own_browser(world: Scenario, actor: Actor) -> None:
    """Close the browser as a person does, open it again on the same profile, at the app's start address."""
    world.browsers.close_browser(actor.page.context)
    open_profile(world, actor)
    actor.chat.go_home()


@given(parsers.re(f"^{NAME} signs in through the login form in her own browser profile$"))
def sign_in_with_profile(world: Scenario, name: str) -> None:
    sign_in_in_own_profile(world, world.actor(name))


@when(parsers.re(f"^{NAME} signs in through the login form$"))
def sign_in_with_form(world: Scenario, name: str) -> None:
    actor = world.actors[name]
    actor.login.log_in(actor.account.email, actor.account.password)
    actor.chat.expect_signed_in()


@when(parsers.re(f"^{NAME} closes the browser$"))
def close_browser(world: Scenario, name: str) -> None:
    actor = world.actors[name]
    world.conversation = actor.chat.conversation_id()
    world.browsers.close_browser(actor.page.context)
    actor.page = None


@when(parsers.re(f"^{NAME} opens the browser again with the same profile$"))
def reopen_browser(world: Scenario, name: str) -> None:
    actor = world.actors[name]
    open_profile(world, actor)
    actor.chat.go_home()


@when(parsers.re(f"^{NAME} closes the page right after the reply$"))
def close_page(world: Scenario, name: str) -> None:
    actor = world.actors[name]
    actor.page.close()  # pagehide fires; whatever the page still meant to write must leave now
    actor.page = None


@when(parsers.re(f"^{NAME} opens the app in a fresh browser profile$"))
def fresh_profile(world: Scenario, name: str) -> None:
    actor = world.actors[name]
    world.conversation = actor.chat.conversation_id()
    actor.profile = world.browsers.new_profile()
    open_profile(world, actor)
    actor.chat.go_home()


@then(parsers.re(f"^{NAME} is still signed in$"))
def still_signed_in(world: Scenario, name: str) -> None:
    actor = world.actors[name]
    assert not actor.login.is_shown(), f"{name} was asked to sign in again after reopening the browser"
    actor.chat.expect_signed_in()
    shown, expected = actor.chat.signed_in_as(), world.driver.shown_identity(actor.account)
    assert shown == expected, f"{name} reopened the browser signed in as {shown!r}, not {expected!r}"


@then(parsers.re(f"^{NAME} is asked to sign in$"))
def asked_to_sign_in(world: Scenario, name: str) -> None:
    world.actors[name].login.expect_shown()


@then("her conversation is listed")
def conversation_listed(world: Scenario) -> None:
    actor = speaker(world)
    listed = actor.sidebar.ids()
    assert world.conversation in listed, (
        f"{actor.name}'s conversation {world.conversation} is not in her list {listed}")
    own = actor.session.conversation_ids()
    assert listed == own, f"{actor.name}'s list shows {listed}, her conversations are {own}"


@then(parsers.parse('her long-term memory soon holds "{sentence}"'))
def memory_soon_holds(world: Scenario, sentence: str) -> None:
    actor = speaker(world)
    stored = wait_until(lambda: [m.text for m in actor.session.memories()], lambda texts: sentence in texts,
                        timeout=5, what=f"{actor.name}'s memory holding {sentence!r}")
    assert stored == [sentence], f"{actor.name}'s memory should hold exactly [{sentence!r}], holds {stored}"


@given("an app whose clock the test can move")
def movable_clock(world: Scenario) -> None:
    world.require(Capability.MOVABLE_CLOCK)
    world.use_variant(Capability.MOVABLE_CLOCK, clock="settable")


@given(parsers.re(f'^{NAME} told the assistant "(?P<sentence>.+)" (?P<days>\\d+) days ago$'))
def told_days_ago(world: Scenario, name: str, sentence: str, days: str) -> None:
    actor = world.actors[name]
    actor.session.remember([sentence])
    actor.told.append(Fact.parse(sentence))
    world.driver.advance_clock(world.app, float(days))


@when(parsers.re(f"^{NAME} signs out$"))
def signs_out(world: Scenario, name: str) -> None:
    actor = world.actors[name]
    actor.signed_out_of = actor.page.context.storage_state()
    actor.chat.sign_out()


def old_session_refused(world: Scenario, name: str, after: str) -> None:
    """The session the actor's browser held before `after` (signing out, the account's deletion) no longer works,
    as a copied cookie or token would be tried."""
    world.require(Capability.SERVER_SIGN_OUT)
    actor = world.actors[name]
    assert actor.signed_out_of is not None, f"{name}'s browser held no session before {after}"
    assert not world.driver.accepts(world.app, actor.signed_out_of), (
        f"after {after}, the app still accepts the session {name}'s browser held (a copied cookie or token keeps "
        "working)")


@then(parsers.re(f"^the session {NAME} signed out of is refused by the app$"))
def signed_out_session_refused(world: Scenario, name: str) -> None:
    old_session_refused(world, name, f"{name} signed out")
