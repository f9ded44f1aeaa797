"""Steps of hostile_users.feature: a user who writes into another's data, types wrong passwords for another's address,
or signs up with an address a wrong matcher confuses with another's."""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from urllib.parse import urlsplit

import pytest
from pytest_bdd import given, parsers, then, when

from harness.app.target import FORGETTING_FAILURES, Limits
from harness.drivers.base import Capability, MovableClock, PasswordSignIn
from harness.users.hostile import Breach, Holdings, cannot_tamper, kinds_of, same_words
from steps.world import NAME, World

ANOTHER_ADDRESS = "127.0.0.2"  # another client of this machine: the whole 127/8 is loopback on Linux

OTHER = r"(?P<other>[A-Z][a-z]+)"
SHOWN_BREACHES = 5  # the first few in the message; the count says how many more


@dataclass(frozen=True)
class Tampering:
    """One user's writes on another's data: what the other held before, and the writes the app did not refuse."""

    tamperer: str
    owner: str
    before: Holdings
    breaches: tuple[Breach, ...]


@dataclass(frozen=True)
class WrongPasswords:
    """Wrong passwords someone typed for a user's address, and the throttle the app declares."""

    name: str
    count: int
    limits: Limits
    told: str  # what the app said to the last wrong password


def declared_throttle(world: World) -> Limits:
    """The target's sign-in throttling ([limits]), or the scenario skips with one line."""
    limits = world.app.target.limits
    if limits.sign_in_failures is None or limits.sign_in_lockout_minutes is None:
        pytest.skip(f"the {world.app.target.name} target declares no sign-in throttling ([limits] sign_in_failures, "
                    "sign_in_lockout_minutes)")
    return limits


@when(parsers.re(f"^{NAME} tries every write the app's API offers on {OTHER}'s memories, conversations and "
                 "settings$"), target_fixture="tampering")
def tries_every_write(world: World, name: str, other: str) -> Tampering:
    """Through the tamperer's API session (harness.users.hostile.tamper): the owner's ids in the path, in owner fields
    of the body, in identity headers; what the owner's API showed of their data just before is kept."""
    why_not = cannot_tamper(world.app.target)  # before reading the owner's data through writes the target lacks
    if why_not:
        pytest.skip(why_not)
    tamperer, owner = world.actors[name], world.actors[other]
    owner.settle()
    before = Holdings.of(owner.session, world.app.target)
    return Tampering(name, other, before, tuple(tamperer.tamper_with(owner)))


@then(parsers.re(f"^the app refused {NAME} every write on {OTHER}'s data$"))
def refused_every_write(tampering: Tampering, name: str, other: str) -> None:
    """No write naming the owner's data was answered below 400, and nothing written landed outside the tamperer's."""
    assert (tampering.tamperer, tampering.owner) == (name, other), f"{name} did not tamper with {other}'s data"
    shown = "; ".join(str(b) for b in tampering.breaches[:SHOWN_BREACHES])
    more = len(tampering.breaches) - SHOWN_BREACHES
    assert not tampering.breaches, (f"{name}'s writes on {other}'s data were not refused ("
                                    + ", ".join(kinds_of(tampering.breaches))
                                    + f"): {shown}" + (f" (and {more} more)" if more > 0 else ""))


@then(parsers.re(f"^{NAME}'s memories and conversations are exactly as before, every field and every turn$"))
def exactly_as_before(world: World, tampering: Tampering, name: str) -> None:
    """The owner's memory listing (every field the app lists) and every turn of every conversation, unchanged."""
    assert tampering.owner == name, f"nobody tampered with {name}'s data"
    changed = Holdings.of(world.actors[name].session, world.app.target).changes_since(tampering.before)
    assert not changed, f"after {tampering.tamperer}'s writes, {name} sees her data changed: {'; '.join(changed)}"


@given("the app locks sign-in after too many wrong passwords")
def app_throttles(world: World) -> None:
    """The target declares its sign-in throttling; a target that declares none skips the scenario."""
    declared_throttle(world)


@given("the app locks sign-in after too many wrong passwords, and forgets them once the user signs in")
def app_forgets_failures_at_sign_in(world: World) -> None:
    """The target declares its sign-in throttling and that a right password clears the wrong ones counted before
    it ([limits] sign_in_failures_forgotten_after); a target that declares either otherwise skips."""
    limits = declared_throttle(world)
    if limits.sign_in_failures_forgotten_after != FORGETTING_FAILURES[1]:
        pytest.skip(f"the {world.app.target.name} target forgets wrong passwords after "
                    f"{limits.sign_in_failures_forgotten_after!r}, not after {FORGETTING_FAILURES[1]!r} "
                    "([limits] sign_in_failures_forgotten_after)")


def wrong_passwords_typed(world: World, name: str, fewer: int) -> WrongPasswords:
    """A stranger at the sign-in page of a browser of their own, on the same machine as the user (one network
    address, as behind one proxy): the declared throttle's count of wrong passwords less `fewer`, each refused."""
    limits = declared_throttle(world)
    assert limits.sign_in_failures is not None
    count = limits.sign_in_failures - fewer
    stranger = world.new_actor("Someone", world.actors[name].account)
    told = stranger.type_wrong_passwords(world.actors[name].account.email, count)
    return WrongPasswords(name, count, limits, told)


@when(parsers.re(f"^someone types wrong passwords for {NAME}'s address, one fewer than the app locks sign-in after, "
                 "from (?:her|his|their) network address$"), target_fixture="wrong_passwords")
def one_fewer_wrong_passwords(world: World, name: str) -> WrongPasswords:
    """One wrong password fewer than the target's [limits] sign_in_failures, from the user's network address."""
    return wrong_passwords_typed(world, name, fewer=1)


@when(parsers.re(f"^someone types wrong passwords for {NAME}'s address, as many as the app locks sign-in after, "
                 "from (?:her|his|their) network address$"), target_fixture="wrong_passwords")
def as_many_wrong_passwords(world: World, name: str) -> WrongPasswords:
    """As many wrong passwords as the target's [limits] sign_in_failures, from the user's network address."""
    return wrong_passwords_typed(world, name, fewer=0)


@given("the app locks sign-in after too many wrong passwords, counted by the network address they come from")
def app_counts_by_address(world: World) -> None:
    """The target declares its throttling counted per address ([limits] sign_in_failures_per: "account and address"
    or "address"), so that nobody elsewhere can lock a user out; one that counts per account alone skips."""
    limits = declared_throttle(world)
    if "address" not in limits.sign_in_failures_per:
        pytest.skip(f"the {world.app.target.name} target counts wrong passwords per {limits.sign_in_failures_per!r}, "
                    "not by the address they come from ([limits] sign_in_failures_per)")


@when(parsers.re(f"^someone types wrong passwords for {NAME}'s address, as many as the app locks sign-in after, "
                 "from another network address$"), target_fixture="wrong_passwords")
def wrong_passwords_from_elsewhere(world: World, name: str) -> WrongPasswords:
    """As many wrong passwords as the target's [limits] sign_in_failures, through the app's API from another address
    of this machine's loopback (ANOTHER_ADDRESS): an app reached elsewhere cannot be, and the scenario skips."""
    world.app.require(Capability.PASSWORD_SIGN_IN)
    limits = declared_throttle(world)
    assert limits.sign_in_failures is not None
    host = urlsplit(world.app.base_url).hostname or ""
    if not (host == "localhost" or host.startswith("127.")):
        pytest.skip(f"needs the app on this machine's loopback to come from another address, not {host}")
    email, told, sign_in = world.actors[name].account.email, "", world.app.part(PasswordSignIn)
    for attempt in range(1, limits.sign_in_failures + 1):
        told = sign_in.try_sign_in(world.app.running, email, f"wrong-{attempt}-{secrets.token_hex(4)}",
                                   from_address=ANOTHER_ADDRESS)
        assert told, f"someone typed a wrong password for {email} from {ANOTHER_ADDRESS} (attempt {attempt}) and was " \
                     "let in"
    return WrongPasswords(name, limits.sign_in_failures, limits, told)


@then(parsers.re(f"^{NAME} signs in with (?:her|his|their) own password$"))
def signs_in_with_own_password(world: World, wrong_passwords: WrongPasswords, name: str) -> None:
    """Through the sign-in page of a new browser (or the API), her address and her own password: let in."""
    actor = world.actors[name]
    said = actor.try_sign_in()
    assert not said, (f"{actor.account.label} typed her own password after someone typed {wrong_passwords.count} "
                      f"wrong ones ({wrong_passwords.limits.sign_in_failures} lock sign-in, per "
                      f"{wrong_passwords.limits.sign_in_failures_per}) and was refused: {said!r}")


@then(parsers.re(f"^{NAME}'s own password is refused while the lockout lasts$"))
def refused_while_locked(world: World, wrong_passwords: WrongPasswords, name: str) -> None:
    """Right after the wrong passwords: even her own password is refused, with words of its own (not a wrong
    password's: she typed hers), on the page and through the app's API where it has one."""
    actor = world.actors[name]
    said = actor.try_sign_in()
    assert said, (f"{actor.account.label} was let in right after someone typed {wrong_passwords.count} wrong "
                  f"passwords, though the app declares a {wrong_passwords.limits.sign_in_lockout_minutes}-minute "
                  "lockout after that many")
    through_api = actor.try_sign_in_through_api()
    for where, words in (("", said), (" through the app's API", through_api)):
        assert words is None or (words and not same_words(words, wrong_passwords.told)), (
            f"{actor.account.label} typed her own password{where} while sign-in was locked and was "
            f"{'let in' if words == '' else f'told {words!r}'}: a wrong password is told {wrong_passwords.told!r}, "
            "so she is not told she is locked out")


@when("the lockout the app declares has passed")
def lockout_passed(world: World, wrong_passwords: WrongPasswords) -> None:
    """The app's clock moved on by the declared lockout and a minute."""
    minutes = wrong_passwords.limits.sign_in_lockout_minutes
    assert minutes is not None
    world.app.part(MovableClock).advance_clock(world.app.running, (minutes + 1) / (24 * 60))


@given(parsers.re('^a user signed up as "(?P<older>[^"]+)", and later another as "(?P<newer>[^"]+)"$'))
def signed_up_in_turn(world: World, older: str, newer: str) -> None:
    """Two accounts, the older first (a wrong matcher takes the oldest account its pattern matches)."""
    for name, address in (("Older", older), ("Newer", newer)):
        local, _, domain = address.partition("@")
        world.create_user(name, email_local=local, domain=domain)


@when("each of them signs in with their own address and password, and keeps a memory of their own")
def each_signs_in(world: World) -> None:
    """Each through the sign-in page of a new browser (or the API); once every one is in, each stores a memory of
    their own through their app."""
    refused = {a.account.label: said for a in world.actors.values() if (said := a.try_sign_in())}
    assert not refused, f"users typed their own address and password and were refused: {refused}"
    for actor in world.actors.values():
        actor.session.remember([f"My account name is {actor.name} {world.tag}."])


@then("each of them is shown as themselves, with only their own memory")
def each_shown_as_themselves(world: World) -> None:
    """The identity the app shows, and the memories listed, are each user's own."""
    for actor in world.actors.values():
        shown, expected = actor.identity_shown(), world.app.shown_identity(actor.account)
        assert shown == expected, f"{actor.account.label} signed in and the app shows {shown!r}"
        memories = actor.memories_shown()
        own = [f"My account name is {actor.name} {world.tag}."]
        assert memories == own, f"{actor.account.label} signed in and sees the memories {memories}, not {own}"
