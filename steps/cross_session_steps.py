"""Steps of cross_session_persistence.feature and memory_expiry.feature: closing and reopening the browser, pages
that close mid-write, signing out, and time passing."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from pytest_bdd import given, parsers, then, when

from harness.browser.held_session import HeldSession
from harness.drivers.base import Capability, HeldSessions, MovableClock, StoppedApp
from harness.users.actor import Actor
from harness.vocabulary.facts import Fact
from harness.vocabulary.polling import wait_until
from steps.records import LeftSession, Talk
from steps.world import NAME, World

# Longer than Chromium waits for a closing page to answer (500 ms), as on a loaded machine or a heavy page.
BUSY_PAGE_S = 1.0


@given(parsers.re(f"^{NAME} signs in through the login form in her own browser profile$"))
def sign_in_with_profile(world: World, name: str) -> None:
    """A browser profile of her own (kept on disk, as a person's), signed in through the login form."""
    world.actor(name).sign_in_with_own_profile()


@when(parsers.re(f"^{NAME} signs in through the login form$"))
def sign_in_with_form(world: World, name: str) -> None:
    """Through the sign-in form the page shows now."""
    world.actors[name].log_in_through_form()


@when(parsers.re(f"^{NAME} closes the browser$"), target_fixture="talk")
def close_browser(world: World, talk: Talk, name: str) -> Talk:
    """Every tab put away, then the browser quits; the conversation she had open is noted for later steps."""
    actor = world.actors[name]
    noted = actor.conversation_id()
    actor.close_browser()
    return talk.noting(name, noted)


@when(parsers.re(f"^{NAME} opens the browser again with the same profile$"))
def reopen_browser(world: World, name: str) -> None:
    """The browser launched again on her profile, at the app's start address."""
    world.actors[name].open_browser_again()


@when(parsers.re(f"^{NAME} closes the page right after the reply$"))
def close_page(world: World, name: str) -> None:
    """The tab closed at once: whatever the page still meant to write must leave now."""
    world.actors[name].close_page()


@given(parsers.re(f"^{NAME}'s computer is so busy that her pages are slow to answer$"))
def busy_computer(world: World, name: str) -> None:
    """From now on her pages still have a second of work when their tab closes (longer than Chromium waits)."""
    world.actor(name).use_busy_computer(BUSY_PAGE_S)


@when(parsers.re(f"^{NAME} opens the app in a fresh browser profile$"), target_fixture="talk")
def fresh_profile(world: World, talk: Talk, name: str) -> Talk:
    """A new profile that holds nothing of the app; the conversation she had open is noted for later steps."""
    actor = world.actors[name]
    noted = actor.conversation_id()
    actor.open_fresh_profile()
    return talk.noting(name, noted)


@then(parsers.re(f"^{NAME} is still signed in$"))
def still_signed_in(world: World, name: str) -> None:
    """Signed in, as herself (the identity the app shows)."""
    actor = world.actors[name]
    assert actor.is_signed_in(), f"{name} was asked to sign in again"
    shown, expected = actor.identity_shown(), world.app.shown_identity(actor.account)
    assert shown == expected, f"{name} reopened the browser signed in as {shown!r}, not {expected!r}"


@then(parsers.re(f"^{NAME} is asked to sign in$"))
def asked_to_sign_in(world: World, name: str) -> None:
    """The sign-in page (or, through the API, the app refuses her client's session)."""
    world.actors[name].expect_asked_to_sign_in()


@then("her conversation is listed")
def conversation_listed(world: World, talk: Talk) -> None:
    """The conversation noted before is in her list, and the list is exactly her conversations."""
    actor, noted = world.actors[talk.speaker], talk.of(talk.speaker).noted
    listed = actor.conversations_listed()
    assert noted in listed, f"{actor.name}'s conversation {noted} is not in her list {listed}"
    own = actor.session.conversation_ids()
    assert listed == own, f"{actor.name}'s list shows {listed}, her conversations are {own}"


@given(parsers.parse('her long-term memory soon holds "{sentence}"'))
@then(parsers.parse('her long-term memory soon holds "{sentence}"'))
def memory_soon_holds(world: World, talk: Talk, sentence: str) -> None:
    """Within seconds her memory list is exactly that one memory."""
    actor = world.actors[talk.speaker]
    stored = wait_until(lambda: [m.text for m in actor.session.memories()], lambda texts: sentence in texts,
                        timeout=5, what=f"{actor.name}'s memory holding {sentence!r}")
    assert stored == [sentence], f"{actor.name}'s memory should hold exactly [{sentence!r}], holds {stored}"


@given("an app whose clock the test can move")
def movable_clock(world: World) -> None:
    """The app with a clock the test moves (the same app for every scenario that asks for it)."""
    world.use_app(world.app.with_settings(Capability.MOVABLE_CLOCK, clock="settable"))


@given(parsers.re(r"^the app's operators keep memories for (?P<days>\d+) days$"), converters={"days": int})
def operators_keep_memories(world: World, days: int) -> None:
    """The app started with the retention its operators chose, through the setting its target declares for it
    ([operator_settings] retention_days), on data of its own; a target that declares none skips."""
    world.use_operator_setting("retention_days", str(days), "keep memories for a number of days")


@given(parsers.re(f'^{NAME} told the assistant "(?P<sentence>.+)" (?P<days>\\d+) days ago$'),
       converters={"days": int}, target_fixture="talk")
def told_days_ago(world: World, talk: Talk, name: str, sentence: str, days: int) -> Talk:
    """The memory stored through the app's API, then the app's clock moved on by that many days."""
    actor = world.actors[name]
    actor.session.remember([sentence])
    world.app.part(MovableClock).advance_clock(world.app.running, days)
    actor.come_back()  # after so long she may have to sign in again
    return talk.stored(name, Fact.parse(sentence))


@given(parsers.re(f'^{NAME} told the assistant "(?P<past>.+)" just over the app\'s retention period ago, and '
                  '"(?P<within>.+)" just under it$'), target_fixture="talk")
def told_at_the_retention_edge(world: World, talk: Talk, name: str, past: str, within: str) -> Talk:
    """Two memories stored through the app's API two minutes apart, then the app's clock moved on until the first is
    a minute past the retention the target declares ([limits] retention_days) and the second a minute short of it."""
    days = world.app.target.limits.retention_days
    if days is None:
        pytest.skip(f"{world.app.target.path.name} declares no retention period ([limits] retention_days): its "
                    "memories are kept for good")
    minute = 1 / (24 * 60)
    actor = world.actors[name]
    actor.session.remember([past])
    world.app.part(MovableClock).advance_clock(world.app.running, 2 * minute)
    actor.session.remember([within])
    world.app.part(MovableClock).advance_clock(world.app.running, days - minute)
    actor.come_back()  # after so long she may have to sign in again
    return talk.stored(name, Fact.parse(past), Fact.parse(within))


@when(parsers.re(f"^{NAME} signs out$"), target_fixture="left_session")
def signs_out(world: World, name: str) -> LeftSession:
    """Through the page's own control; what her browser held before is kept, as a copied cookie would be."""
    actor = world.actors[name]
    return LeftSession(name, actor.account, actor.sign_out(), f"{name} signed out")


@then(parsers.re(f"^the session {NAME} (?:signed out of|had) is refused by the app$"))
def old_session_refused(world: World, left_session: LeftSession, name: str) -> None:
    """The session the browser held before signing out or the account's deletion no longer works, as a copied
    cookie or token would be tried."""
    assert left_session.name == name, f"{name} left no session; {left_session.name} did"
    assert not world.app.part(HeldSessions).accepts(world.app.running, left_session.held), (
        f"after {left_session.why}, the app still accepts the session {name}'s browser held (a copied cookie or "
        "token keeps working)")


# -- a sign-in's lifetime, where it is kept, one person on two browsers, a restart ---------------------------------
WORKING_DAY = timedelta(hours=8)  # the least users expect a sign-in to last
SLACK = timedelta(minutes=5)  # the seconds between the app granting a session and the suite reading it, and more
SKEW = timedelta(minutes=1)  # the app's clock ahead of the suite's (a token's expiry is the app's time), and rounding


@dataclass(frozen=True)
class SecondBrowser:
    """The same person signed in on a second browser: another actor of the same account."""

    name: str
    actor: Actor


@dataclass(frozen=True)
class BeforeRestart:
    """What each actor's account held just before the app restarted."""

    memories: dict[str, list[tuple[str, str]]]  # name -> (id, text), as listed
    conversations: dict[str, list[str]]  # name -> ids, as listed


def promised_session(world: World) -> timedelta | None:
    days = world.app.target.limits.session_days
    return timedelta(days=days) if days else None


@then(parsers.re(f"^the sign-in the app gave {NAME} lasts at least a working day, and as long as the app promises$"))
def sign_in_lasts(world: World, name: str) -> None:
    """The lifetime of the cookie or token her browser holds: at least 8 hours, and the app's [limits] session_days,
    no more (granted just before: its lifetime from now is at most the promised one, as the app's clock reads it)."""
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
    assert promised is None or lifetime <= promised + SKEW, (
        f"{name}'s sign-in lasts {lifetime} from now (its cookie or token, granted just before), longer than the "
        f"{promised} the app promises: her browser keeps it {lifetime - promised} more")


@then(parsers.re(f"^{NAME}'s session is kept out of the page's address and out of reach of its scripts$"))
def session_kept_out_of_reach(world: World, name: str) -> None:
    """No session token in any page's address, none readable by the page's scripts (HttpOnly cookies only)."""
    actor = world.actors[name]
    held = HeldSession.of(actor.held_session(), world.app.base_url)
    assert held.tokens, f"{name}'s browser holds nothing that looks like a session of the app"
    in_address = [url for url in (p.url for p in world.browsers.pages()) if any(t in url for t in held.tokens)]
    assert not in_address, f"{name}'s session shows in the page's address: {in_address}"
    readable = held.readable_by_scripts()
    assert not readable, f"the page's scripts can read {name}'s session: {', '.join(readable)}"


@when("the app's sign-in lifetime has all but passed")
def lifetime_all_but_passed(world: World) -> None:
    """The app's clock moved to an hour before the sign-in lifetime it promises ([limits] session_days) ends."""
    promised = promised_session(world)
    if promised is None:
        pytest.skip(f"needs the sign-in lifetime the app promises: {world.app.target.path.name} has no [limits] "
                    "session_days")
    world.app.part(MovableClock).advance_clock(world.app.running, (promised - timedelta(hours=1)) / timedelta(days=1))


@when(parsers.re(r"^(?P<hours>\d+) more hours pass$"), converters={"hours": int})
def hours_pass(world: World, hours: int) -> None:
    """The app's clock moved on."""
    world.app.part(MovableClock).advance_clock(world.app.running, hours / 24)


@when(parsers.re(f"^{NAME} opens the app again$"))
def opens_app_again(world: World, name: str) -> None:
    """The app's start address opened again in her browser (through the API: her client starts again)."""
    world.actors[name].reload()


@given(parsers.re(f"^{NAME} signs in through the login form on a second browser$"), target_fixture="second_browser")
@when(parsers.re(f"^{NAME} signs in through the login form on a second browser$"), target_fixture="second_browser")
def signs_in_on_second_browser(world: World, name: str) -> SecondBrowser:
    """A second browser profile of hers, signed in through the login form: a session of its own."""
    second = world.new_actor(name, world.actors[name].account)
    second.sign_in_with_own_profile()
    return SecondBrowser(name, second)


def on_second_browser(second_browser: SecondBrowser, name: str) -> Actor:
    assert second_browser.name == name, f"{name} has no second browser; {second_browser.name} has"
    return second_browser.actor


@then(parsers.re(f"^{NAME}'s two browsers hold different sessions$"))
def different_sessions(world: World, second_browser: SecondBrowser, name: str) -> None:
    """No session token of one browser is the other's."""
    first, second = (HeldSession.of(a.held_session(), world.app.base_url).tokens
                     for a in (world.actors[name], on_second_browser(second_browser, name)))
    assert first and second, f"{name}'s browsers hold no session of the app"
    shared = set(first) & set(second)
    assert not shared, f"{name}'s two sign-ins were given the same session (one stolen token is both)"


@when(parsers.re(f'^{NAME} tells the assistant "(?P<sentence>.+)" on the second browser$'), target_fixture="talk")
def tells_on_second_browser(second_browser: SecondBrowser, talk: Talk, name: str, sentence: str) -> Talk:
    """One turn stating a fact, in her second browser."""
    return talk.after(on_second_browser(second_browser, name).say(sentence), Fact.parse(sentence))


@when(parsers.re(f"^{NAME} signs out on the second browser$"), target_fixture="left_session")
def signs_out_on_second_browser(second_browser: SecondBrowser, name: str) -> LeftSession:
    """Through the second browser's page; what it held before is kept, as a copied cookie would be."""
    second = on_second_browser(second_browser, name)
    return LeftSession(name, second.account, second.sign_out(), f"{name} signed out on her second browser")


@given("an app of its own that the test can restart")
def restartable_app(world: World) -> None:
    """An app on data of its own, which the scenario may stop and start again."""
    world.use_app(world.app.fresh(Capability.RESTART))


@when("the app restarts on its data", target_fixture="before_restart")
def app_restarts(world: World) -> BeforeRestart:
    """Every actor's memories and conversations read, then the app stopped and started on the same data."""
    before = BeforeRestart({n: [(m.id, m.text) for m in a.session.memories()] for n, a in world.actors.items()},
                           {n: a.session.conversation_ids() for n, a in world.actors.items()})
    world.restart_app()
    return before


@then(parsers.re(f"^everything {NAME} had before the restart is still there$"))
def still_there_after_restart(world: World, before_restart: BeforeRestart, name: str) -> None:
    """Her memories (ids and texts) and conversations, exactly as before the restart."""
    actor = world.actors[name]
    memories = [(m.id, m.text) for m in actor.session.memories()]
    assert memories == before_restart.memories[name], (
        f"{name}'s memories before the restart: {before_restart.memories[name]}; after: {memories}")
    conversations = actor.session.conversation_ids()
    assert conversations == before_restart.conversations[name], (
        f"{name}'s conversations before the restart: {before_restart.conversations[name]}; after: {conversations}")


# -- the app on databases of its own ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class OwnDataFolder:
    """The data folder an operator keeps the app's own databases in, for the scenario."""

    path: Path


@given(parsers.re(f"^an operator adds an account for {NAME} on the app's command line, in a new data folder for the "
                  "app's own databases$"), target_fixture="own_data_folder")
def added_in_new_data_folder(world: World, name: str) -> OwnDataFolder:
    """A folder nothing has used yet; the account added there with the app's own tool before the app ever ran on it,
    the tool leaving nothing running (skipped where the app runs on no databases of its own)."""
    folder = OwnDataFolder(world.app.new_data_folder())
    world.add_in_data_folder(name, folder.path)
    return folder


@given("the operator starts the app on its own databases in that folder")
def starts_on_own_databases(world: World, own_data_folder: OwnDataFolder) -> None:
    """Started with no databases given, as its operator starts it; its driver holds what it says as it starts to its
    documentation. Restarting it from then on stops it as a service manager does (SIGTERM), checked alike."""
    world.use_app(world.app.on_own_databases(own_data_folder.path))


@given("the operator starts the app on a new database, with its other stores its own in a new data folder")
def starts_on_given_database(world: World) -> None:
    """Started on a database of the suite's server (the operator's), with no other store given: those it starts
    itself, in a folder nothing has used yet; its driver holds what it says as it starts to its documentation."""
    world.use_app(world.app.on_own_databases(world.app.new_data_folder(), given_database=True))


@when("the operator stops the app with Ctrl-C", target_fixture="stopped_app")
def stops_with_ctrl_c(world: World) -> StoppedApp:
    """Ctrl-C, as at the terminal it runs in; run to its end."""
    return world.app.stop_as_operator(interrupt=True)


@then("the app ends as its operators are told, and nothing it started is left running")
def ended_as_told(stopped_app: StoppedApp) -> None:
    """Its documented exit status, nothing on its error stream, none of the servers it started still running."""
    wrong = stopped_app.wrong()
    assert not wrong, f"the app, stopped {stopped_app.how}, " + "; ".join(wrong)
