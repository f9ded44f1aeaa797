"""Steps of multi_user_isolation.feature: several users at once, and what one of them must never see."""

from __future__ import annotations

from dataclasses import dataclass

from pytest_bdd import given, parsers, then, when

from harness.answers import AnswerCheck
from harness.facts import Fact
from harness.foreign_reads import leaks
from steps.world import NAME, Actor, Listing, World

OTHER = r"(?P<other>[A-Z][a-z]+)"


@dataclass(frozen=True)
class ForeignVisit:
    """One user opening another user's conversation by its address, and what the app answered."""

    intruder: str
    owner: str
    conversation_id: str
    status: int


def seed_told(actor: Actor, sentence: str) -> str:
    """A conversation in which the actor told the assistant `sentence`, seeded through the driver."""
    conversation_id = actor.session.seed_conversation(sentence)
    actor.told.append(Fact.parse(sentence))
    actor.conversations.append(conversation_id)
    return conversation_id


def only_own_memories(actor: Actor, everyone: list[Actor]) -> None:
    """What was recalled for the actor, on the page and through the API, is the actor's own and nobody else's.
    Ownership is by memory id: users may hold memories with identical text."""
    own = {m.id: m.text for m in actor.session.memories()}
    foreign_shown = [t for t in actor.recalled if t not in own.values()]
    assert not foreign_shown, f"{actor.name} was shown memories that are not theirs: {foreign_shown}"
    others = {m.id: (a.name, m.text) for a in everyone if a is not actor for m in a.session.memories()}
    for fact in actor.told:
        hits = actor.session.search(fact.question, k=10)
        foreign = [f"{others[h.id][0]}'s {h.text!r}" if h.id in others else repr(h.text)
                   for h in hits if h.id not in own]
        assert not foreign, f"searching {actor.name}'s memory for {fact.question!r} found others' {foreign}"
        assert hits and hits[0].text == fact.sentence, (
            f"searching {actor.name}'s memory for {fact.question!r} should find {fact.sentence!r} first, got {hits}")
    shared = [others[i] for i in own.keys() & others.keys()]
    assert not shared, f"{actor.name}'s memory lists memories of other users: {shared}"


def heard(actor: Actor, answer: str, answers: AnswerCheck) -> None:
    assert answers.matches(actor.last_reply, answer), (
        f"{actor.name} expected {answer!r} but the assistant said {actor.last_reply!r}"
        f" (recalled: {actor.recalled or 'none'})")


@given(parsers.re(f"^{NAME} and {OTHER} are signed in, each in their own browser$"))
def both_signed_in(world: World, name: str, other: str) -> None:
    """Signs both users in, each in a browser of their own (their accounts created first if needed)."""
    for who in (name, other):
        world.actor(who).sign_in()


@when("at the same time they tell the assistant their secrets:")
def tell_secrets_at_once(world: World, datatable: list[list[str]]) -> None:
    """Every user of the table (columns user and secret) sends their secret before any reply is read."""
    rows = [dict(zip(datatable[0], r, strict=True)) for r in datatable[1:]]
    pending = [(world.actors[row["user"]], row["secret"]) for row in rows]
    waiters = [(actor, secret, actor.submit(secret)) for actor, secret in pending]  # all send before any reply
    for actor, secret, reply in waiters:
        reply()
        actor.told.append(Fact.parse(secret))


@when(parsers.parse('each of them starts a new conversation and asks "{question}"'))
def each_asks(world: World, question: str) -> None:
    """Every user starts a new conversation and asks the question."""
    for actor in world.actors.values():
        actor.start_new_conversation()
        actor.say(question)


@then(parsers.re(f'^{NAME} hears "(?P<answer>.+)"$'))
def hears(world: World, answers: AnswerCheck, name: str, answer: str) -> None:
    """The user's last reply is the answer given."""
    heard(world.actors[name], answer, answers)


@then("the memories recalled for each of them are only their own")
def each_only_own(world: World) -> None:
    """What was recalled for each user, on the page and through the API, is their own (by memory id)."""
    everyone = list(world.actors.values())
    for actor in everyone:
        only_own_memories(actor, everyone)


@when(parsers.re(f"^{NAME} opens {OTHER}'s conversation by its address$"), target_fixture="foreign_visit")
def open_foreign_conversation(world: World, name: str, other: str) -> ForeignVisit:
    """The user opens the other user's open conversation by its address."""
    intruder, owner = world.actors[name], world.actors[other]
    conversation_id = owner.note_conversation()
    return ForeignVisit(name, other, conversation_id, intruder.open_by_address(conversation_id))


@then(parsers.re(f"^nothing of {NAME}'s conversation is shown to {OTHER}$"))
def nothing_shown(world: World, foreign_visit: ForeignVisit, name: str, other: str) -> None:
    """No turn of the owner's conversation is on the other user's screen, whatever the app answered."""
    assert (foreign_visit.owner, foreign_visit.intruder) == (name, other), f"{other} did not open {name}'s conversation"
    assert foreign_visit.status in (200, 401, 403, 404), (
        f"opening {name}'s conversation answered {other} {foreign_visit.status}")
    text = world.actors[other].shown_text()
    leaked = [t for _, t in world.actors[name].turns if t in text]
    assert not leaked, f"{other} was shown {name}'s turns: {leaked}"


@then(parsers.re(f"^the app's API refuses {NAME} {OTHER}'s conversation$"))
def api_refuses(world: World, foreign_visit: ForeignVisit, name: str, other: str) -> None:
    """The conversation by its id, and every other read the API offers of the owner's data: nothing of it."""
    reader, owner = world.actors[name], world.actors[other]
    answer = reader.session.ask_for_conversation(foreign_visit.conversation_id)
    assert answer.refused, f"the API answered {name} {answer.status} for {other}'s conversation (401, 403 or 404)"
    memories = owner.session.memories()
    answers = reader.session.reads_of(owner.account, [foreign_visit.conversation_id], [m.id for m in memories])
    theirs = {t for _, t in owner.turns} | {m.text for m in memories}
    leaked = leaks(answers, theirs - {t for _, t in reader.turns})
    assert not leaked, f"{name}'s API gives {other}'s data: {leaked}"


@then(parsers.re(f"^a session made up in the shape of {NAME}'s is refused by the app$"))
def made_up_session_refused(world: World, name: str) -> None:
    """A guessed cookie, a forged token, a user id the app never issued: what a stranger would try."""
    held = world.actors[name].held_session()
    assert world.app.accepts(held), f"the app does not take {name}'s own session, so refusing another proves nothing"
    made_up = world.app.made_up_credentials(held)
    assert not world.app.accepts(made_up), f"the app takes a session it never gave, made up in the shape of {name}'s"


@given(parsers.re(f"^{NAME} has (?P<count>\\d+) conversations?$"), converters={"count": int})
def has_conversations(world: World, name: str, count: int) -> None:
    """Seeds that many conversations for the user through the app's API, each telling one fact."""
    actor = world.actor(name)
    for i in range(count):
        seed_told(actor, f"My note number {i} is {world.fake.word()}.")


@when(parsers.re(f"^{NAME} looks at (?:his|her|their) conversation list$"), target_fixture="listing")
def looks_at_list(world: World, name: str) -> Listing:
    """The user signs in and reads the conversation list the app shows, once it lists all of theirs."""
    actor = world.actors[name]
    actor.sign_in()
    return Listing(name, actor.conversations_listed(len(actor.session.conversation_ids())))


@then(parsers.re(f"^{NAME} sees exactly (?:his|her|their) own conversations$"))
def sees_own(world: World, listing: Listing, name: str) -> None:
    """The list shows exactly the conversations seeded for the user, the newest first."""
    assert listing.name == name, f"{name} did not look at a conversation list; {listing.name} did"
    own = list(reversed(world.actors[name].conversations))  # newest first
    assert listing.ids == own, f"{name}'s list shows {listing.ids}, expected exactly {own}"


def _email_parts(address: str) -> tuple[str, str]:
    local, _, domain = address.partition("@")
    return local, domain


@given(parsers.re('^a user signed up as "(?P<address>[^"]+)" who told the assistant "(?P<sentence>.+)"$'))
def signed_up_user(world: World, address: str, sentence: str) -> None:
    """Creates the first (then the second) user with that address, made unique to the run, who told the sentence."""
    role = "First" if "First" not in world.actors else "Second"
    local, domain = _email_parts(address)
    seed_told(world.create_user(role, email_local=local, domain=domain), sentence)


@when(parsers.parse('the second user signs in with the address typed as "{typed}"'))
def second_signs_in(world: World, typed: str) -> None:
    """The second user signs in with the address typed so; the app must open their own account."""
    actor = world.actors["Second"]
    local, domain = _email_parts(typed)
    actor.open_new_browser()
    actor.log_in_as(world.data.email(local, world.tag, domain))
    shown, expected = actor.identity_shown(), world.app.shown_identity(actor.account)
    assert shown == expected, f"signing in as {typed!r} opened the account of {shown!r}, not {expected!r}"


@when(parsers.parse('the second user asks in a new conversation "{question}"'))
def second_asks(world: World, question: str) -> None:
    """The second user starts a new conversation and asks the question."""
    actor = world.actors["Second"]
    actor.start_new_conversation()
    actor.say(question)


@then(parsers.parse('the second user hears "{answer}"'))
def second_hears(world: World, answers: AnswerCheck, answer: str) -> None:
    """The second user's last reply is the answer given."""
    heard(world.actors["Second"], answer, answers)


@then("the memories recalled for the second user are only their own")
def second_only_own(world: World) -> None:
    """What was recalled for the second user, on the page and through the API, is their own (by memory id)."""
    only_own_memories(world.actors["Second"], list(world.actors.values()))


@given("users whose ids differ by one character, each with their own memories:")
def near_colliding_ids(world: World, datatable: list[list[str]]) -> None:
    """Creates a user per row with an id the test chooses (the row's suffix) and stores the row's memory."""
    for suffix, memory in datatable[1:]:
        actor = world.create_user(f"Owner{suffix}", user_id=f"{world.tag}-{suffix}")
        actor.session.remember([memory])
        actor.told.append(Fact.parse(memory))


@then(parsers.parse('searching the memory of each user for "{question}" finds only that user\'s memories'))
def each_finds_own(world: World, question: str) -> None:
    """Searching each user's memory for the question finds exactly that user's memories, in order."""
    for actor in world.actors.values():
        hits = actor.session.search(question, k=10)
        own = [f.sentence for f in actor.told]
        assert [h.text for h in hits] == own, (
            f"searching user {actor.account.id}'s memory for {question!r} found {[h.text for h in hits]},"
            f" expected exactly {own}")
