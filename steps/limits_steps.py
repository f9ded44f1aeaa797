"""Steps of lists_and_limits.feature: more memories and conversations than a page holds, messages past the
longest the app accepts, searches for the most memories one search returns through each index kind, and more users
searching at once than the app holds connections to its database (the target's [limits])."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from types import MappingProxyType

import pytest
from pytest_bdd import given, parsers, then, when

from harness.app.index_use import Asked, against_full_scan, asked, index_method, scans_during
from harness.app.seeding import Seeded, seed_many
from harness.drivers.base import Capability, EdgeAnswer
from harness.replay.run import IndexKind
from harness.vocabulary.order import out_of_order
from harness.vocabulary.polling import Timeout, wait_until
from harness.vocabulary.recall import assert_same_recall
from steps.records import Listing, Talk
from steps.world import HER, NAME, World

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


# -- searches at their edges: as many memories as one search returns, as many users as the app has connections ------
@dataclass(frozen=True)
class Questions:
    """What each user of the scenario will search their memory for, by name."""

    by: MappingProxyType[str, tuple[str, ...]] = field(default_factory=lambda: MappingProxyType({}))

    def adding(self, name: str, *questions: str) -> Questions:
        return Questions(MappingProxyType({**self.by, name: self.by.get(name, ()) + questions}))


@pytest.fixture
def questions() -> Questions:
    """Nobody has anything to search for yet."""
    return Questions()


@dataclass(frozen=True)
class Searched:
    """Each user's searches and what the app returned, for `k` memories each; and, when the searches were to go
    through a vector index, how many scans the app's database counted of its indexes of that kind, for how many
    searches with words to search for."""

    searches: tuple[Asked, ...]
    k: int
    vectors: tuple[bytes | None, ...]  # each search's question as the app embeds it
    method: str | None = None
    scans: int = 0


def declared_limit(world: World, key: str, what: str) -> int:
    """The target's `[limits] key`; a target that declares none skips, saying what the scenario needs."""
    value = getattr(world.app.target.limits, key)
    if value is None:
        pytest.skip(f"needs {what}: {world.app.target.path.name} has no [limits] {key}")
    return int(value)


def most_results(world: World) -> int:
    return declared_limit(world, "search_results", "the most memories one search returns")


def tell_each(world: World, name: str, memories: list[str]) -> None:
    """The memories stored for the user directly, one request each, as many at once as the app's driver says it
    serves."""
    session = world.actor(name).session
    with ThreadPoolExecutor(world.app.driver.seeding_concurrency) as pool:
        list(pool.map(lambda memory: session.remember([memory]), memories))


@given(parsers.re(r"^the app's operators recall only memories at least (?P<similarity>0\.\d+) similar to what is "
                  "asked$"), converters={"similarity": float})
def operators_set_threshold(world: World, similarity: float) -> None:
    """The app started with the least similarity its operators chose, through the setting its target declares for it
    ([operator_settings] recall_threshold), on data of its own; a target that declares none skips."""
    world.use_operator_setting("recall_threshold", str(similarity), "choose the least similarity of a recalled memory")


@given(parsers.re(f"^{NAME} has told the app more about {HER} gate codes than a search returns at once$"),
       target_fixture="questions")
def told_many_gate_codes(world: World, questions: Questions, name: str) -> Questions:
    """Twenty more gate codes than the most memories one search returns (the target's [limits] search_results), each
    of another door, and a few other facts; she will ask for her gate code, and for one of the others."""
    most, fake = most_results(world), world.fake
    codes = [f"My gate code for door {n} is {fake.unique.random_int(1000, 9999)}." for n in range(1, most + 21)]
    tell_each(world, name, [*codes, "My bike shop is Rueda on Elm Street.", "My dentist is Doctor Okafor."])
    return questions.adding(name, "What is my gate code?", "Which bike shop do I use?")


@given(parsers.re(f"^{NAME} has told the app one thing$"), target_fixture="questions")
def told_one_thing(world: World, questions: Questions, name: str) -> Questions:
    """One memory; they will ask about it."""
    tell_each(world, name, [f"My locker code is {world.fake.random_int(1000, 9999)}."])
    return questions.adding(name, "What is my locker code?")


@when("each of them searches their memory for as many memories as a search returns", target_fixture="searched")
def each_searches_for_the_most(world: World, questions: Questions, index_kind: IndexKind) -> Searched:
    """Each user's questions, each for the most memories one search returns; where the index kind names a vector
    index, the scans its indexes counted meanwhile. The app (the scenario's own) is then stopped, so that its
    connections report their scans at once: every later step reads the app's store only."""
    app, most = world.app, most_results(world)
    vectors = tuple(app.embed([q for mine in questions.by.values() for q in mine]))
    searches: list[Asked] = []

    def ask() -> int:
        for name, mine in questions.by.items():
            actor = world.actors[name]
            searches.extend(asked(actor.session, name, actor.account.id, list(mine), most))
        return sum(1 for vector in vectors if vector is not None)  # one without words to search for is not searched

    method = index_method(index_kind)
    if method is None:
        ask()
        return Searched(tuple(searches), most, vectors)
    scans, _ = scans_during(app, method, ask, f"{index_kind.name} index scans")
    return Searched(tuple(searches), most, vectors, method, scans)


@then("each of them gets what a full scan of their own memories ranks as similar as the app's operators require, in "
      "order, with the same scores")
def as_a_full_scan_at_threshold(world: World, searched: Searched) -> None:
    """Every search returned what a full scan of the user's memories in the app's store ranks for the question at or
    above the similarity the app's operators set (ties in either order): none less similar, none as similar left
    out."""
    assert_same_recall(against_full_scan(world.app, list(searched.searches), searched.k, list(searched.vectors)),
                       f"searches for {searched.k} memories on an app whose operators recall only memories at least "
                       f"{world.app.threshold} similar to what is asked")


@then('each of them gets what a full scan of their own memories ranks, in order, with the same scores, through the '
      '"<index kind>" index')
def as_a_full_scan_through_index(world: World, searched: Searched, index_kind: IndexKind) -> None:
    """Every search returned what a full scan of the user's memories in the app's store ranks for the question (ties
    in either order); and, for a kind with a vector index, its indexes were scanned at least once per search with
    words to search for."""
    assert_same_recall(against_full_scan(world.app, list(searched.searches), searched.k, list(searched.vectors)),
                       f"searches for {searched.k} memories through the {index_kind.name!r} index kind")
    with_words = sum(1 for vector in searched.vectors if vector is not None)
    assert searched.method is None or searched.scans >= with_words, (
        f"the {index_kind.name} index was scanned {searched.scans} times for {with_words} searches: not every search "
        "went through it")


@given("an app of its own that many users search at once")
def own_app_for_many(world: World) -> None:
    """A fresh app of the scenario's own: the connections to its database are its own."""
    world.use_app(world.app.fresh(Capability.APP_SETTINGS))


def declared_connections(world: World) -> int:
    return declared_limit(world, "database_connections", "the most connections the app holds to its database")


# Users searching at once beyond the connections the app declares: enough to fill them, and to wait for them.
MORE_USERS = 4
# How long the app's connections may take to reach the declared number while every search waits on the database.
CONNECTIONS_WAIT_S = 15
# How long, once they reached it, the suite watches for one more connection (the searches come all at once: one
# past the declared number opens within milliseconds of the others).
ONE_MORE_WAIT_S = 2


@given("more users than the app holds connections to its database have each told it their gate code",
       target_fixture="questions")
def many_users_told(world: World, questions: Questions) -> Questions:
    """Four more users than the connections the app declares ([limits] database_connections), each with one memory
    of their own gate code; each will ask for it."""
    for _ in range(declared_connections(world) + MORE_USERS):
        name = world.fake.unique.first_name()
        tell_each(world, name, [f"My gate code is {world.fake.unique.random_int(1000, 9999)}."])
        questions = questions.adding(name, "What is my gate code?")
    return questions


@dataclass(frozen=True)
class HeldSearches:
    """Searches made all at once while the app's database was held: what each returned once it was free again, and
    the most connections the app held to its database meanwhile."""

    searched: Searched
    most_connections: int
    declared: int


@when("they all search their memories at once, while an operator's maintenance holds the app's database",
      target_fixture="held_searches")
def search_at_once_while_held(world: World, questions: Questions) -> HeldSearches:
    """Every table of the app's database locked (as VACUUM FULL or ALTER TABLE locks one), then every user's question
    searched at once; the app's connections to its database watched until it holds as many as it declares, each
    waiting on the locked tables, and a moment more for one past that; then the tables are freed and every search is
    answered."""
    app, declared = world.app, declared_connections(world)
    asks = [(name, question) for name, mine in questions.by.items() for question in mine]
    vectors = tuple(app.embed([question for _, question in asks]))
    seen = [0]

    with ThreadPoolExecutor(len(asks)) as pool:
        with app.database_held() as held:
            def connections() -> int:
                seen[0] = max(seen[0], held.connections())
                return seen[0]

            pending = [pool.submit(asked, world.actors[name].session, name, world.actors[name].account.id,
                                   [question], app.recall_k) for name, question in asks]
            try:
                wait_until(connections, lambda n: n >= declared, timeout=CONNECTIONS_WAIT_S,
                           what=f"the app's connections to its database, reaching the {declared} it declares")
                wait_until(connections, lambda n: n > declared, timeout=ONE_MORE_WAIT_S,
                           what="one connection more than the app declares")
            except Timeout:
                pass  # what the app held is in `seen`, for the steps that judge it
        searches = tuple(s for future in pending for s in future.result())
    return HeldSearches(Searched(searches, app.recall_k, vectors), seen[0], declared)


@then("the app held as many connections to its database as it declares, and never more")
def held_as_declared(held_searches: HeldSearches) -> None:
    """With more searches waiting than the connections it declares, the app used every one of them, and opened none
    besides: an operator sizes the database's connections by that number."""
    most, declared = held_searches.most_connections, held_searches.declared
    assert most == declared, (
        f"with {len(held_searches.searched.searches)} searches waiting on its database, the app held {most} "
        f"connections to it at most, where it declares it holds {declared}: "
        + ("more than an operator sizing the database for it allows" if most > declared
           else "searches waited for a connection it declares it has"))


@then("once the maintenance is over, each of them gets what a full scan of their own memories ranks")
def answered_after_hold(world: World, held_searches: HeldSearches) -> None:
    """Every search waiting on the held database was answered, as a full scan of the user's memories ranks it."""
    searched = held_searches.searched
    assert_same_recall(against_full_scan(world.app, list(searched.searches), searched.k, list(searched.vectors)),
                       "searches made while the app's database was held")
