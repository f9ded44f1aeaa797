"""Steps of lists_and_limits.feature: more memories and conversations than a page holds, and messages past the
longest the app accepts (the target's [limits])."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from pytest_bdd import given, parsers, then, when

from harness.drivers.base import Capability, EdgeAnswer
from harness.order import out_of_order
from harness.polling import wait_until
from harness.seeding import Seeded, seed_many
from steps.records import Listing, Talk
from steps.world import NAME, World

MEMORY_WAIT_S = 10  # how long a page's memory write may take to land after the reply

LEAST_VOLUME = 100  # more than the pages apps commonly use (20, 50, 60, 100), where a target declares none


@dataclass(frozen=True)
class EdgeRequests:
    """The requests sent at the edges of the app's API, with the user's memories just before them."""

    name: str
    memories_before: tuple[str, ...]
    answers: tuple[EdgeAnswer, ...]


@dataclass(frozen=True)
class RefusedMessage:
    name: str
    text: str
    error: str  # what the page said


def past_a_page(page: int | None) -> int:
    """One more than a page of the list: its declared page size, else more than the pages apps commonly use."""
    return (page or LEAST_VOLUME) + 1


@given(parsers.re(f"^{NAME} has more memories and conversations than a page of the app's lists holds$"),
       target_fixture="seeded")
def more_than_a_page(world: World, name: str) -> Seeded:
    """One conversation more than a page of the app's conversation list, one fact each; one memory more than a page
    of its memory list besides, stored directly, one request each."""
    limits, fake = world.app.target.limits, world.fake
    notes = [f"My note number {n} is {fake.word()}." for n in range(past_a_page(limits.conversation_page))]
    spare = [f"My spare key {n} is {fake.word()}-{n}." for n in range(past_a_page(limits.memory_page))]
    return seed_many(name, world.actor(name).session, notes, spare, world.app.driver.seeding_concurrency)


def resolution(world: World) -> float:
    return world.app.target.limits.clock_resolution_s


@then(parsers.re(f"^{NAME} sees every one of (?:his|her|their) conversations, the most recent first$"))
def sees_every_conversation(world: World, seeded: Seeded, listing: Listing, name: str) -> None:
    """The list shows every conversation seeded for the user and no other, newest first, as the API does."""
    assert listing.name == name == seeded.name, f"{name} did not look at the list of what was stored for her"
    missing = [c for c in seeded.conversations if c not in listing.ids]
    foreign = [c for c in listing.ids if c not in seeded.conversations]
    assert not missing and not foreign, (f"{name}'s list of {len(listing.ids)} lacks {len(missing)} of her "
                                         f"{len(seeded.conversations)} conversations {missing[:5]} and shows "
                                         f"{foreign[:5]} that are not hers")
    wrong = out_of_order(listing.ids, seeded.conversations, newest_first=True, resolution_s=resolution(world))
    assert not wrong, f"{name}'s list shows older conversations above newer ones: {wrong[:5]}"
    api = world.actors[name].session.conversation_ids()
    assert api == listing.ids, f"{name}'s page lists {listing.ids[:5]}..., the app's API {api[:5]}..."


@then(parsers.re(f"^{NAME}'s long-term memory lists every one of (?:his|her|their) memories, oldest first$"))
def lists_every_memory(world: World, seeded: Seeded, name: str) -> None:
    """The user's memory lists every memory seeded for them, and no other, oldest first."""
    listed = [m.text for m in world.actors[name].session.memories()]
    missing = [m for m in seeded.memories if m not in listed]
    assert not missing and len(listed) == len(seeded.memories), (
        f"{name}'s memory lists {len(listed)} of her {len(seeded.memories)} memories; missing {missing[:3]}")
    wrong = out_of_order(listed, seeded.memories, newest_first=False, resolution_s=resolution(world))
    assert not wrong, f"{name}'s memory lists newer memories above older ones: {wrong[:5]}"


def longest(world: World) -> int:
    limit = world.app.target.limits.longest_message
    if not limit:
        pytest.skip(f"needs the longest message the app accepts: {world.app.target.path.name} has no [limits] "
                    "longest_message")
    return limit


@when(parsers.re(f"^{NAME} sends a message one character longer than the app accepts$"),
      target_fixture="refused_message")
def sends_too_long(world: World, name: str) -> RefusedMessage:
    """Sends a message one character longer than [limits] longest_message (skipped where none is declared)."""
    actor = world.actors[name]
    text = ("My essay is " + "far too long " * 1000)[:longest(world)] + "."
    return RefusedMessage(name, text, actor.send_refused(text))


@then(parsers.re(f"^{NAME} is told the message was not sent$"))
def told_not_sent(refused_message: RefusedMessage, name: str) -> None:
    """The page said something instead of sending the message."""
    assert refused_message.name == name
    assert refused_message.error.strip(), f"the page said nothing when {name}'s too long message was not sent"


@then("nothing of that message is kept")
def nothing_kept(world: World, refused_message: RefusedMessage) -> None:
    """No turn of any conversation and no memory of the user holds a part of the refused message."""
    actor = world.actors[refused_message.name]
    piece = refused_message.text[:40]
    kept = [(cid, t.text[:60]) for cid in actor.session.conversation_ids() for t in actor.session.turns(cid)
            if piece in t.text]
    kept += [("memory", m.text[:60]) for m in actor.session.memories() if piece in m.text]
    assert not kept, f"the app refused {refused_message.name}'s message yet keeps part of it: {kept}"


@when(parsers.re(f"^{NAME} and the app's operator send the app's API a request at each edge it documents$"),
      target_fixture="edge_requests")
def requests_at_the_edges(world: World, talk: Talk, name: str) -> EdgeRequests:
    """The user's and the admin's requests at each size limit (a body exactly as large as accepted, one byte more) and
    each malformed request the app's API documents (skipped for a driver that knows none); her memories before them
    once each fact she told is kept (a page writes them after the reply: read too soon, one landed "after")."""
    world.app.require(Capability.API_EDGES)  # before waiting on anything: an app without them skips at once
    actor = world.actors[name]
    actor.settle()
    told = len(talk.of(name).told)
    kept = wait_until(actor.session.memories, lambda found: len(found) >= told, timeout=MEMORY_WAIT_S,
                      what=f"{name}'s {told} memories of what she told, before the requests at the edges")
    before = tuple(m.text for m in kept)
    session = actor.session
    return EdgeRequests(name, before, tuple(world.app.edge_answers(session)))


@then("each is answered with the status the app promises for it: the largest accepted, one byte more refused as too "
      "large, a malformed one refused")
def answered_as_promised(edge_requests: EdgeRequests) -> None:
    """Every answer is the documented status, to the code: a refusal below 400 is no refusal, a create answered 200
    is not the 201 its clients wait for; and where the documentation says what a refusal names, it names it (an
    import refused for its size is not one refused for its last user)."""
    wrong = [f"{a.what}: answered {a.status} where the app promises {a.promised} ({a.body[:120]})"
             for a in edge_requests.answers if a.status != a.promised]
    wrong += [f"{a.what}: answered {a.body[:160]!r}, which does not say {a.says!r}"
              for a in edge_requests.answers if a.status == a.promised and a.says not in a.body]
    assert edge_requests.answers, "the app's API was sent no request at an edge"
    assert not wrong, "the app's API did not answer its edges as it promises:\n" + "\n".join(wrong)


@then(parsers.re(f"^{NAME}'s memories changed only by what those requests were accepted to write$"))
def changed_only_by_accepted(world: World, edge_requests: EdgeRequests, name: str) -> None:
    """The user's memories are those of before and what the accepted requests wrote, nothing of a refused one."""
    assert edge_requests.name == name, f"the requests at the edges were {edge_requests.name}'s, not {name}'s"
    now = sorted(m.text for m in world.actors[name].session.memories())
    expected = sorted([*edge_requests.memories_before, *(a.kept for a in edge_requests.answers if a.kept)])
    assert now == expected, (f"after the requests at the edges of the app's API, {name}'s memories are {now}, not "
                             f"{expected}: a refused request changed them, or an accepted one did not")
