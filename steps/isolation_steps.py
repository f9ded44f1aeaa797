"""Steps of multi_user_isolation.feature: several users at once, and what one of them must never see."""

from __future__ import annotations

from dataclasses import dataclass

from pytest_bdd import given, parsers, then, when

from harness.drivers.base import HeldSessions
from harness.users.actor import Actor, Exchange
from harness.users.foreign_reads import leaks
from harness.vocabulary.answers import AnswerCheck
from harness.vocabulary.facts import Fact
from steps.records import Listing, Talk
from steps.world import HER, NAME, World

OTHER = r"(?P<other>[A-Z][a-z]+)"


@dataclass(frozen=True)
class ForeignVisit:
    """One user opening another user's conversation by its address, and what the app answered."""

    intruder: str
    owner: str
    conversation_id: str
    status: int


def seed_told(actor: Actor, talk: Talk, sentence: str) -> Talk:
    """A conversation in which the actor told the assistant `sentence`, seeded through the driver."""
    return talk.seeded(actor.name, actor.session.seed_conversation(sentence), Fact.parse(sentence))


def only_own_memories(actor: Actor, talk: Talk, everyone: list[Actor], searches: bool) -> None:
    """What was recalled for the actor, on the page and through the API, is the actor's own and nobody else's.
    Ownership is by memory id: users may hold memories with identical text. `searches`: the app offers its users a
    search of their memories, which must find only their own too."""
    said = talk.of(actor.name)
    own = {m.id: m.text for m in actor.session.memories()}
    recalled_as_own(actor.name, said.last, own)
    others = {m.id: (a.name, m.text) for a in everyone if a is not actor for m in a.session.memories()}
    for fact in said.told if searches else ():
        hits = actor.session.search(fact.question, k=10)
        foreign = [f"{others[h.id][0]}'s {h.text!r}" if h.id in others else repr(h.text)
                   for h in hits if h.id not in own]
        assert not foreign, f"searching {actor.name}'s memory for {fact.question!r} found others' {foreign}"
        assert hits and hits[0].text == fact.sentence, (
            f"searching {actor.name}'s memory for {fact.question!r} should find {fact.sentence!r} first, got {hits}")
        best = actor.session.search(fact.question, k=1)  # the search's smallest page: only the best memory
        assert [h.text for h in best] == [fact.sentence], (  # by text: a user may hold one text twice
            f"searching {actor.name}'s memory for {fact.question!r} for the best memory only found {best}, "
            f"expected exactly {fact.sentence!r}")
    shared = [others[i] for i in own.keys() & others.keys()]
    assert not shared, f"{actor.name}'s memory lists memories of other users: {shared}"


def recalled_as_own(name: str, last: Exchange | None, own: dict[str, str]) -> None:
    """What the app showed it recalled for the user's last turn: memories of theirs, each (where the app shows ids)
    under the id and with the text their own list gives it."""
    if last is None:
        return
    foreign = [t for t in last.recalled if t not in own.values()]
    assert not foreign, f"{name} was shown memories that are not theirs: {foreign}"
    if last.recalled_ids:
        shown = dict(zip(last.recalled_ids, last.recalled, strict=True))
        wrong = {mid: text for mid, text in shown.items() if own.get(mid) != text}
        assert not wrong, (f"the app showed {name} recalled memories whose ids are not theirs with that text "
                           f"(id: text shown): {wrong}; {name}'s list: {own}")


@then(parsers.re(f"^the memories recalled for {NAME} are {HER} own, as {HER} list gives them$"))
def recalled_for_one(world: World, talk: Talk, name: str) -> None:
    """For the user's last turn: each memory the app showed it recalled is one of theirs, by id and text."""
    recalled_as_own(name, talk.of(name).last, {m.id: m.text for m in world.actors[name].session.memories()})


def heard(name: str, talk: Talk, answer: str, answers: AnswerCheck) -> None:
    last = talk.of(name).last
    assert last is not None, f"{name} has said nothing yet"
    assert answers.matches(last.reply, answer), (
        f"{name} expected {answer!r} but the assistant said {last.reply!r} (recalled: {list(last.recalled) or 'none'})")


@given(parsers.re(f"^{NAME} and {OTHER} are signed in, each in their own browser$"))
def both_signed_in(world: World, name: str, other: str) -> None:
    """Each signed in the quickest way the app allows, in a browser (or API session) of their own."""
    for who in (name, other):
        world.actor(who).sign_in()


@when("at the same time they tell the assistant their secrets:", target_fixture="talk")
def tell_secrets_at_once(world: World, talk: Talk, datatable: list[list[str]]) -> Talk:
    """Every row's user sends their secret (columns `user`, `secret`) before anyone's reply is awaited."""
    rows = [dict(zip(datatable[0], r, strict=True)) for r in datatable[1:]]
    waiters = [(world.actors[row["user"]].submit(row["secret"]), row["secret"]) for row in rows]
    for reply, secret in waiters:
        talk = talk.after(reply(), Fact.parse(secret))
    return talk


@when(parsers.parse('each of them starts a new conversation and asks "{question}"'), target_fixture="talk")
def each_asks(world: World, talk: Talk, question: str) -> Talk:
    """Each user of the scenario in turn, in a new conversation of their own."""
    for actor in world.actors.values():
        actor.start_new_conversation()
        talk = talk.new_conversation(actor.name).after(actor.say(question))
    return talk


@then(parsers.re(f'^{NAME} hears "(?P<answer>.+)"$'))
def hears(talk: Talk, answers: AnswerCheck, name: str, answer: str) -> None:
    """The reply to that user's last turn."""
    heard(name, talk, answer, answers)


@then("the memories recalled for each of them are only their own")
def each_only_own(world: World, talk: Talk) -> None:
    """For each user: what the app showed it recalled, and a search for each fact they told, only their own."""
    everyone, searches = list(world.actors.values()), world.app.searches()
    for actor in everyone:
        only_own_memories(actor, talk, everyone, searches)


@when(parsers.re(f"^{NAME} opens {OTHER}'s conversation by its address$"), target_fixture="foreign_visit")
def open_foreign_conversation(world: World, name: str, other: str) -> ForeignVisit:
    """The address of the conversation the other user has open, typed into this user's browser."""
    intruder, owner = world.actors[name], world.actors[other]
    conversation_id = owner.conversation_id()
    return ForeignVisit(name, other, conversation_id, intruder.open_by_address(conversation_id))


@then(parsers.re(f"^nothing of {NAME}'s conversation is shown to {OTHER}$"))
def nothing_shown(world: World, talk: Talk, foreign_visit: ForeignVisit, name: str, other: str) -> None:
    """No turn of the owner's conversation on the intruder's screen (any status from 200 to 404 may say so)."""
    assert (foreign_visit.owner, foreign_visit.intruder) == (name, other), f"{other} did not open {name}'s conversation"
    assert foreign_visit.status in (200, 401, 403, 404), (
        f"opening {name}'s conversation answered {other} {foreign_visit.status}")
    text = world.actors[other].shown_text()
    leaked = [t for _, t in talk.of(name).turns if t in text]
    assert not leaked, f"{other} was shown {name}'s turns: {leaked}"


@then(parsers.re(f"^the app's API refuses {NAME} {OTHER}'s conversation$"))
def api_refuses(world: World, talk: Talk, foreign_visit: ForeignVisit, name: str, other: str) -> None:
    """The conversation by its id, and every other read the API offers of the owner's data: nothing of it."""
    reader, owner = world.actors[name], world.actors[other]
    answer = reader.session.ask_for_conversation(foreign_visit.conversation_id)
    assert answer.refused, f"the API answered {name} {answer.status} for {other}'s conversation (401, 403 or 404)"
    memories = owner.session.memories()
    answers = reader.session.reads_of(owner.account, [foreign_visit.conversation_id], [m.id for m in memories])
    theirs = {t for _, t in talk.of(other).turns} | {m.text for m in memories}
    leaked = leaks(answers, theirs - {t for _, t in talk.of(name).turns})
    assert not leaked, f"{name}'s API gives {other}'s data: {leaked}"


@then(parsers.re(f"^a session made up in the shape of {NAME}'s is refused by the app$"))
def made_up_session_refused(world: World, name: str) -> None:
    """A guessed cookie, a forged token, a user id the app never issued: what a stranger would try."""
    held, sessions = world.actors[name].held_session(), world.app.part(HeldSessions)
    assert sessions.accepts(world.app.running, held), \
        f"the app does not take {name}'s own session, so refusing another proves nothing"
    made_up = sessions.made_up_credentials(world.app.running, held)
    assert not sessions.accepts(world.app.running, made_up), \
        f"the app takes a session it never gave, made up in the shape of {name}'s"


@given(parsers.re(f"^{NAME} has (?P<count>\\d+) conversations?$"), converters={"count": int},
       target_fixture="talk")
def has_conversations(world: World, talk: Talk, name: str, count: int) -> Talk:
    """Conversations of one fact each, seeded through the app's API."""
    actor = world.actor(name)
    for i in range(count):
        talk = seed_told(actor, talk, f"My note number {i} is {world.fake.word()}.")
    return talk


@when(parsers.re(f"^{NAME} looks at (?:his|her|their) conversation list$"), target_fixture="listing")
def looks_at_list(world: World, name: str) -> Listing:
    """Signed in, the list as the page shows it once it shows as many as the app's API lists."""
    actor = world.actors[name]
    actor.sign_in()
    return Listing(name, actor.conversations_listed(len(actor.session.conversation_ids())))


@then(parsers.re(f"^{NAME} sees exactly (?:his|her|their) own conversations$"))
def sees_own(talk: Talk, listing: Listing, name: str) -> None:
    """Exactly the conversations seeded for that user, the newest first."""
    assert listing.name == name, f"{name} did not look at a conversation list; {listing.name} did"
    own = list(reversed(talk.of(name).conversations))  # newest first
    assert listing.ids == own, f"{name}'s list shows {listing.ids}, expected exactly {own}"


def _email_parts(address: str) -> tuple[str, str]:
    local, _, domain = address.partition("@")
    return local, domain


@given(parsers.re('^a user signed up as "(?P<address>[^"]+)" who told the assistant "(?P<sentence>.+)"$'),
       target_fixture="talk")
def signed_up_user(world: World, talk: Talk, address: str, sentence: str) -> Talk:
    """An account with that address exactly (the first such step makes the first user, the next the second), and a
    conversation in which they told the sentence, seeded through the app's API."""
    role = "First" if "First" not in world.actors else "Second"
    local, domain = _email_parts(address)
    return seed_told(world.create_user(role, email_local=local, domain=domain), talk, sentence)


@when(parsers.parse('the second user signs in with the address typed as "{typed}"'))
def second_signs_in(world: World, typed: str) -> None:
    """A new browser, the sign-in form with the address typed so: the second user's own account opens."""
    actor = world.actors["Second"]
    local, domain = _email_parts(typed)
    actor.open_new_browser()
    actor.log_in_as(world.data.email(local, world.tag, domain))
    shown, expected = actor.identity_shown(), world.app.shown_identity(actor.account)
    assert shown == expected, f"signing in as {typed!r} opened the account of {shown!r}, not {expected!r}"


@when(parsers.parse('the second user asks in a new conversation "{question}"'), target_fixture="talk")
def second_asks(world: World, talk: Talk, question: str) -> Talk:
    """One question, in a new conversation."""
    actor = world.actors["Second"]
    actor.start_new_conversation()
    return talk.new_conversation("Second").after(actor.say(question))


@then(parsers.parse('the second user hears "{answer}"'))
def second_hears(talk: Talk, answers: AnswerCheck, answer: str) -> None:
    """The reply to the second user's last turn."""
    heard("Second", talk, answer, answers)


@then("the memories recalled for the second user are only their own")
def second_only_own(world: World, talk: Talk) -> None:
    """What the app showed it recalled, and a search for each fact they told: only the second user's own."""
    only_own_memories(world.actors["Second"], talk, list(world.actors.values()), world.app.searches())


@given("users whose ids differ by one character, each with their own memories:", target_fixture="talk")
def near_colliding_ids(world: World, talk: Talk, datatable: list[list[str]]) -> Talk:
    """Users created with the ids the scenario chooses (the scenario's tag and each row's suffix), each with the
    row's memory stored through the app's API."""
    for suffix, memory in datatable[1:]:
        actor = world.create_user(f"Owner{suffix}", user_id=f"{world.tag}-{suffix}")
        actor.session.remember([memory])
        talk = talk.stored(actor.name, Fact.parse(memory))
    return talk


@then(parsers.parse('searching the memory of each user for "{question}" finds only that user\'s memories'))
def each_finds_own(world: World, talk: Talk, question: str) -> None:
    """Each user's search finds exactly the memories they hold, nobody else's."""
    if not world.app.searches():
        return
    for actor in world.actors.values():
        hits = actor.session.search(question, k=10)
        own = [f.sentence for f in talk.of(actor.name).told]
        assert [h.text for h in hits] == own, (
            f"searching user {actor.account.id}'s memory for {question!r} found {[h.text for h in hits]},"
            f" expected exactly {own}")
