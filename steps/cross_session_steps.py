"""Steps of cross_session_persistence.feature and memory_expiry.feature: closing and reopening the browser, pages
that close mid-write, signing out, and time passing."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import pytest
from pytest_bdd import given, parsers, then, when

from harness.drivers.base import Capability
from harness.facts import Fact
from harness.held_session import HeldSession
from harness.polling import wait_until
from steps.world import NAME, Actor, LeftSession, World

# Longer than Chromium waits for a closing page to answer (500 ms), as on a loaded machine or a heavy page.
BUSY_PAGE_S = 1.0


@given(parsers.re(f"^{NAME} signs in through the login form in her own browser profile$"))
def sign_in_with_profile(world: World, name: str) -> None:
    """Signs the user in through the login form, in a browser profile of their own that a later step reopens."""
    world.actor(name).sign_in_with_own_profile()


@when(parsers.re(f"^{NAME} signs in through the login form$"))
def sign_in_with_form(world: World, name: str) -> None:
    """Signs in through the login form on the page that is open."""
    world.actors[name].log_in_through_form()


@when(parsers.re(f"^{NAME} closes the browser$"))
def close_browser(world: World, name: str) -> None:
    """Notes the open conversation, then closes the browser as a person does: every tab, then the browser."""
    actor = world.actors[name]
    actor.note_conversation()
    actor.close_browser()


@when(parsers.re(f"^{NAME} opens the browser again with the same profile$"))
def reopen_browser(world: World, name: str) -> None:
    """Opens the browser again on the same profile, at the app's start address."""
    world.actors[name].open_browser_again()


@when(parsers.re(f"^{NAME} closes the page right after the reply$"))
def close_page(world: World, name: str) -> None:
    """Closes the tab right after the reply, leaving the page only the time a browser gives a closing tab."""
    world.actors[name].close_page()


@given(parsers.re(f"^{NAME}'s computer is so busy that her pages are slow to answer$"))
def busy_computer(world: World, name: str) -> None:
    """From now on the user's pages are busy for longer than the browser waits when a tab closes (untraced)."""
    world.actor(name).use_busy_computer(BUSY_PAGE_S)


@when(parsers.re(f"^{NAME} opens the app in a fresh browser profile$"))
def fresh_profile(world: World, name: str) -> None:
    """Notes the open conversation, then opens the app in a new browser profile that holds no sign-in."""
    actor = world.actors[name]
    actor.note_conversation()
    actor.open_fresh_profile()


@then(parsers.re(f"^{NAME} is still signed in$"))
def still_signed_in(world: World, name: str) -> None:
    """The app shows the user still signed in, as their own account."""
    actor = world.actors[name]
    assert actor.is_signed_in(), f"{name} was asked to sign in again"
    shown, expected = actor.identity_shown(), world.app.shown_identity(actor.account)
    assert shown == expected, f"{name} reopened the browser signed in as {shown!r}, not {expected!r}"


@then(parsers.re(f"^{NAME} is asked to sign in$"))
def asked_to_sign_in(world: World, name: str) -> None:
    """The app asks the user to sign in (an app without a page: it refuses what the user's client holds)."""
    world.actors[name].expect_asked_to_sign_in()


@then("her conversation is listed")
def conversation_listed(world: World) -> None:
    """The noted conversation is listed, and the list is exactly the user's conversations as the API lists them."""
    actor = world.speaking()
    listed = actor.conversations_listed()
    assert actor.noted_conversation in listed, (
        f"{actor.name}'s conversation {actor.noted_conversation} is not in her list {listed}")
    own = actor.session.conversation_ids()
    assert listed == own, f"{actor.name}'s list shows {listed}, her conversations are {own}"


@given(parsers.parse('her long-term memory soon holds "{sentence}"'))
@then(parsers.parse('her long-term memory soon holds "{sentence}"'))
def memory_soon_holds(world: World, sentence: str) -> None:
    """Within 5 s the user's long-term memory holds exactly this sentence, and nothing else."""
    actor = world.speaking()
    stored = wait_until(lambda: [m.text for m in actor.session.memories()], lambda texts: sentence in texts,
                        timeout=5, what=f"{actor.name}'s memory holding {sentence!r}")
    assert stored == [sentence], f"{actor.name}'s memory should hold exactly [{sentence!r}], holds {stored}"


@given("an app whose clock the test can move")
def movable_clock(world: World) -> None:
    """The scenario goes on with an app whose clock the test can move (skipped where the driver has none)."""
    world.use_app(world.app.with_settings(Capability.MOVABLE_CLOCK, clock="settable"))


@given(parsers.re(f'^{NAME} told the assistant "(?P<sentence>.+)" (?P<days>\\d+) days ago$'),
       converters={"days": int})
def told_days_ago(world: World, name: str, sentence: str, days: int) -> None:
    """Stores the sentence in the user's memory, moves the app's clock on that many days, and the user comes back."""
    actor = world.actors[name]
    actor.session.remember([sentence])
    actor.told.append(Fact.parse(sentence))
    world.app.advance_clock(days)
    actor.come_back()  # after so long she may have to sign in again


@when(parsers.re(f"^{NAME} signs out$"), target_fixture="left_session")
def signs_out(world: World, name: str) -> LeftSession:
    """Signs out through the page, keeping the session the browser held for a later step to try."""
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


# -- a sign-in's lifetime, where it is kept, one person on two browsers, a restart ---------------------------------
WORKING_DAY = timedelta(hours=8)  # the least users expect a sign-in to last
SLACK = timedelta(minutes=5)  # the seconds between the app granting a session and the suite reading it, and more


@dataclass
class SecondBrowsers:
    """The other browsers a person signed in on, by the person's name."""

    actors: dict[str, Actor] = field(default_factory=dict)


@pytest.fixture
def second_browsers() -> SecondBrowsers:
    return SecondBrowsers()


@dataclass(frozen=True)
class BeforeRestart:
    """What each actor's account held just before the app restarted."""

    memories: dict[str, list[tuple[str, str]]]  # name -> (id, text), as listed
    conversations: dict[str, list[str]]  # name -> ids, as listed


def promised_session(world: World) -> timedelta | None:
    days = world.app.target.limits.get("session_days")
    return timedelta(days=days) if days else None


@then(parsers.re(f"^the sign-in the app gave {NAME} lasts at least a working day, and as long as the app promises$"))
def sign_in_lasts(world: World, name: str) -> None:
    """The sign-in the browser holds lasts at least 8 hours from now, and as long as [limits] session_days."""
    actor = world.actors[name]
    lifetime = HeldSession.of(actor.held_session(), world.app.base_url).lifetime(datetime.now(UTC))
    promised = promised_session(world)
    if promised is not None:
        assert promised >= WORKING_DAY, (f"{world.app.target.path.name} promises sign-ins of {promised}, less than "
                                         "the working day users expect")
    needed = max(WORKING_DAY, promised or WORKING_DAY)
    assert lifetime >= needed - SLACK, (
        f"{name}'s sign-in lasts {lifetime} from now (its cookie or token), less than "
        + (f"the {promised} the app promises" if promised else "a working day"))


@then(parsers.re(f"^{NAME}'s session is kept out of the page's address and out of reach of its scripts$"))
def session_kept_out_of_reach(world: World, name: str) -> None:
    """No page address holds the user's session, and no script of the page can read it."""
    actor = world.actors[name]
    held = HeldSession.of(actor.held_session(), world.app.base_url)
    assert held.tokens, f"{name}'s browser holds nothing that looks like a session of the app"
    in_address = [url for url in (p.url for p in world.browsers.pages()) if any(t in url for t in held.tokens)]
    assert not in_address, f"{name}'s session shows in the page's address: {in_address}"
    readable = held.readable_by_scripts()
    assert not readable, f"the page's scripts can read {name}'s session: {', '.join(readable)}"


@when("the app's sign-in lifetime has all but passed")
def lifetime_all_but_passed(world: World) -> None:
    """Moves the app's clock to an hour before the promised sign-in lifetime ([limits] session_days) ends."""
    promised = promised_session(world)
    if promised is None:
        pytest.skip(f"needs the sign-in lifetime the app promises: {world.app.target.path.name} has no [limits] "
                    "session_days")
    world.app.advance_clock((promised - timedelta(hours=1)) / timedelta(days=1))


@when(parsers.re(r"^(?P<hours>\d+) more hours pass$"), converters={"hours": int})
def hours_pass(world: World, hours: int) -> None:
    """Moves the app's clock on by that many hours."""
    world.app.advance_clock(hours / 24)


@when(parsers.re(f"^{NAME} opens the app again$"))
def opens_app_again(world: World, name: str) -> None:
    """Opens the app's start address again in the user's browser."""
    world.actors[name].reload()


@given(parsers.re(f"^{NAME} signs in through the login form on a second browser$"))
@when(parsers.re(f"^{NAME} signs in through the login form on a second browser$"))
def signs_in_on_second_browser(world: World, second_browsers: SecondBrowsers, name: str) -> None:
    """Signs the same user in through the login form in a second browser profile of their own."""
    second = world.new_actor(name, world.actors[name].account)
    second.sign_in_with_own_profile()
    second_browsers.actors[name] = second


@then(parsers.re(f"^{NAME}'s two browsers hold different sessions$"))
def different_sessions(world: World, second_browsers: SecondBrowsers, name: str) -> None:
    """Both of the user's browsers hold a session of the app, and they share no token."""
    first, second = (HeldSession.of(a.held_session(), world.app.base_url).tokens
                     for a in (world.actors[name], second_browsers.actors[name]))
    assert first and second, f"{name}'s browsers hold no session of the app"
    shared = set(first) & set(second)
    assert not shared, f"{name}'s two sign-ins were given the same session (one stolen token is both)"


@when(parsers.re(f'^{NAME} tells the assistant "(?P<sentence>.+)" on the second browser$'))
def tells_on_second_browser(second_browsers: SecondBrowsers, name: str, sentence: str) -> None:
    """Tells the assistant the fact in the user's second browser."""
    second_browsers.actors[name].tell(sentence)


@when(parsers.re(f"^{NAME} signs out on the second browser$"), target_fixture="left_session")
def signs_out_on_second_browser(second_browsers: SecondBrowsers, name: str) -> LeftSession:
    """Signs out in the second browser, keeping the session it held for a later step to try."""
    second = second_browsers.actors[name]
    return LeftSession(name, second.account, second.sign_out(), f"{name} signed out on her second browser")


@given("an app of its own that the test can restart")
def restartable_app(world: World) -> None:
    """The scenario goes on with an app of its own that the suite can restart (skipped where it cannot)."""
    world.use_app(world.app.fresh(Capability.RESTART))


@when("the app restarts on its data", target_fixture="before_restart")
def app_restarts(world: World) -> BeforeRestart:
    """Notes every user's memories and conversations, then restarts the app on its data."""
    before = BeforeRestart({n: [(m.id, m.text) for m in a.session.memories()] for n, a in world.actors.items()},
                           {n: a.session.conversation_ids() for n, a in world.actors.items()})
    world.use_app(world.app.restarted())
    return before


@then(parsers.re(f"^everything {NAME} had before the restart is still there$"))
def still_there_after_restart(world: World, before_restart: BeforeRestart, name: str) -> None:
    """The user's memories (ids and texts) and conversations are those of just before the restart."""
    actor = world.actors[name]
    memories = [(m.id, m.text) for m in actor.session.memories()]
    assert memories == before_restart.memories[name], (
        f"{name}'s memories before the restart: {before_restart.memories[name]}; after: {memories}")
    conversations = actor.session.conversation_ids()
    assert conversations == before_restart.conversations[name], (
        f"{name}'s conversations before the restart: {before_restart.conversations[name]}; after: {conversations}")
