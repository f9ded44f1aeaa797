"""Steps of cross_session_persistence.feature and memory_expiry.feature: closing and reopening the browser, pages
that close mid-write, signing out, and time passing."""

from __future__ import annotations

from pytest_bdd import given, parsers, then, when

from harness.drivers.base import Capability
from harness.facts import Fact
from harness.polling import wait_until
from steps.world import NAME, LeftSession, World


@given(parsers.re(f"^{NAME} signs in through the login form in her own browser profile$"))
def sign_in_with_profile(world: World, name: str) -> None:
    world.actor(name).sign_in_with_own_profile()


@when(parsers.re(f"^{NAME} signs in through the login form$"))
def sign_in_with_form(world: World, name: str) -> None:
    world.actors[name].log_in_through_form()


@when(parsers.re(f"^{NAME} closes the browser$"))
def close_browser(world: World, name: str) -> None:
    actor = world.actors[name]
    actor.note_conversation()
    actor.close_browser()


@when(parsers.re(f"^{NAME} opens the browser again with the same profile$"))
def reopen_browser(world: World, name: str) -> None:
    actor = world.actors[name]
    actor.open_own_browser()
    actor.chat.go_home()


@when(parsers.re(f"^{NAME} closes the page right after the reply$"))
def close_page(world: World, name: str) -> None:
    world.actors[name].close_page()


@when(parsers.re(f"^{NAME} opens the app in a fresh browser profile$"))
def fresh_profile(world: World, name: str) -> None:
    actor = world.actors[name]
    actor.note_conversation()
    actor.open_fresh_profile()


@then(parsers.re(f"^{NAME} is still signed in$"))
def still_signed_in(world: World, name: str) -> None:
    actor = world.actors[name]
    assert not actor.login.is_shown(), f"{name} was asked to sign in again after reopening the browser"
    actor.chat.expect_signed_in()
    shown, expected = actor.identity_shown(), world.app.shown_identity(actor.account)
    assert shown == expected, f"{name} reopened the browser signed in as {shown!r}, not {expected!r}"


@then(parsers.re(f"^{NAME} is asked to sign in$"))
def asked_to_sign_in(world: World, name: str) -> None:
    world.actors[name].login.expect_shown()


@then("her conversation is listed")
def conversation_listed(world: World) -> None:
    actor = world.speaking()
    listed = actor.conversations_listed()
    assert actor.noted_conversation in listed, (
        f"{actor.name}'s conversation {actor.noted_conversation} is not in her list {listed}")
    own = actor.session.conversation_ids()
    assert listed == own, f"{actor.name}'s list shows {listed}, her conversations are {own}"


@then(parsers.parse('her long-term memory soon holds "{sentence}"'))
def memory_soon_holds(world: World, sentence: str) -> None:
    actor = world.speaking()
    stored = wait_until(lambda: [m.text for m in actor.session.memories()], lambda texts: sentence in texts,
                        timeout=5, what=f"{actor.name}'s memory holding {sentence!r}")
    assert stored == [sentence], f"{actor.name}'s memory should hold exactly [{sentence!r}], holds {stored}"


@given("an app whose clock the test can move")
def movable_clock(world: World) -> None:
    world.use_app(world.app.with_settings(Capability.MOVABLE_CLOCK, clock="settable"))


@given(parsers.re(f'^{NAME} told the assistant "(?P<sentence>.+)" (?P<days>\\d+) days ago$'),
       converters={"days": int})
def told_days_ago(world: World, name: str, sentence: str, days: int) -> None:
    actor = world.actors[name]
    actor.session.remember([sentence])
    actor.told.append(Fact.parse(sentence))
    world.app.advance_clock(days)


@when(parsers.re(f"^{NAME} signs out$"), target_fixture="left_session")
def signs_out(world: World, name: str) -> LeftSession:
    actor = world.actors[name]
    return LeftSession(name, actor.account, actor.sign_out(), f"{name} signed out")


@then(parsers.re(f"^the session {NAME} (?:signed out of|had) is refused by the app$"))
def old_session_refused(world: World, left_session: LeftSession, name: str) -> None:
    """The session the browser held before signing out or the account's deletion no longer works, as a copied
    cookie or token would be tried."""
    assert left_session.name == name, f"{name} left no session; {left_session.name} did"
    assert not world.app.accepts(left_session.held), (
        f"after {left_session.why}, the app still accepts the session {name}'s browser held (a copied cookie or "
        "token keeps working)")
