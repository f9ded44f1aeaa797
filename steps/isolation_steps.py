"""Steps of multi_user_isolation.feature: several users at once, and what one of them must never see."""

from __future__ import annotations

from pytest_bdd import given, parsers, then, when

from steps.common_steps import NAME, answered, sign_in, speak, start_new_conversation
from steps.world import Actor, Fact, Scenario


def seed_told(actor: Actor, sentence: str) -> str:
    """A conversation in which the actor told the assistant `sentence`, seeded through the driver."""
    conversation_id = actor.session.seed_conversation(sentence)
    actor.told.append(Fact.parse(sentence))
    return conversation_id


def only_own_memories(actor: Actor) -> None:
    """What was recalled for the actor, on the page and through the API, is the actor's own and nobody else's.
    Ownership is by memory id: users may hold memories with identical text."""
    own = {m.id: m.text for m in actor.session.memories()}
    foreign_shown = [t for t in actor.recalled if t not in own.values()]
    assert not foreign_shown, f"{actor.name} was shown memories that are not theirs: {foreign_shown}"
    others = {m.id: (a.name, m.text) for a in actor.scenario.actors.values() if a is not actor
              for m in a.session.memories()}
    for fact in actor.told:
        hits = actor.session.search(fact.question, k=10)
        foreign = [f"{others[h.id][0]}'s {h.text!r}" if h.id in others else repr(h.text)
                   for h in hits if h.id not in own]
        assert not foreign, f"searching {actor.name}'s memory for {fact.question!r} found others' {foreign}"
        assert hits and hits[0].text == fact.sentence, (
            f"searching {actor.name}'s memory for {fact.question!r} should find {fact.sentence!r} first, got {hits}")
    shared = [others[i] for i in own.keys() & others.keys()]
    assert not shared, f"{actor.name}'s memory lists memories of other users: {shared}"


@given(parsers.re(f"^{NAME} and (?P<other>[A-Z][a-z]+) are signed in, each in their own browser$"))
def both_signed_in(world: Scenario, name: str, other: str) -> None:
    for who in (name, other):
        sign_in(world, who)


@when("at the same time they tell the assistant their secrets:")
def tell_secrets_at_once(world: Scenario, datatable: list[list[str]]) -> None:
    rows = [dict(zip(datatable[0], r, strict=True)) for r in datatable[1:]]
    pending = []
    for row in rows:  # both send before either reply is awaited
        actor = world.actors[row["user"]]
        pending.append((actor, row["secret"], actor.chat.submit(row["secret"])))
    for actor, secret, waiter in pending:
        reply = waiter()
        actor.turns += [("user", secret), ("assistant", reply)]
        actor.turns_sent += 1
        actor.told.append(Fact.parse(secret))


@when(parsers.parse('each of them starts a new conversation and asks "{question}"'))
def each_asks(world: Scenario, question: str) -> None:
    for actor in world.actors.values():
        start_new_conversation(actor)
        speak(actor, question)


@then(parsers.re(f'^{NAME} hears "(?P<answer>.+)"$'))
def hears(world: Scenario, name: str, answer: str) -> None:
    actor = world.actors[name]
    assert answered(world, actor.last_reply, answer), (
        f"{name} expected {answer!r} but the assistant said {actor.last_reply!r}"
        f" (recalled: {actor.recalled or 'none'})")


@then("the memories recalled for each of them are only their own")
def each_only_own(world: Scenario) -> None:
    for actor in world.actors.values():
        only_own_memories(actor)


@when(parsers.re(f"^{NAME} opens (?P<owner>[A-Z][a-z]+)'s conversation by its address$"))
def open_foreign_conversation(world: Scenario, name: str, owner: str) -> None:
    intruder, victim = world.actors[name], world.actors[owner]
    world.conversation = victim.chat.conversation_id()
    world.notes["page status"] = intruder.chat.open_conversation(world.conversation)


@then(parsers.re(f"^nothing of {NAME}'s conversation is shown to (?P<other>[A-Z][a-z]+)$"))
def nothing_shown(world: Scenario, name: str, other: str) -> None:
    status = world.notes["page status"]
    assert status in (200, 401, 403, 404), f"opening {name}'s conversation answered {other} {status}"
    text = world.actors[other].chat.page_text()
    leaked = [t for _, t in world.actors[name].turns if t in text]
    assert not leaked, f"{other} was shown {name}'s turns: {leaked}"


@then(parsers.re(f"^the app's API refuses {NAME} (?P<owner>[A-Z][a-z]+)'s conversation$"))
def api_refuses(world: Scenario, name: str, owner: str) -> None:
    answer = world.actors[name].session.ask_for_conversation(world.conversation)
    leaked = [t for _, t in world.actors[owner].turns if t in answer.body]
    assert answer.refused and not leaked, (
        f"the API answered {name} {answer.status} for {owner}'s conversation (401, 403 or 404 expected)"
        + (f", showing {leaked}" if leaked else ""))


@given(parsers.re(f"^{NAME} has (?P<count>\\d+) conversations?$"))
def has_conversations(world: Scenario, name: str, count: str) -> None:
    actor = world.actor(name)
    ids = [seed_told(actor, f"My note number {i} is {world.fake.word()}.") for i in range(int(count))]
    world.notes[f"{name}'s conversations"] = ids


@when(parsers.re(f"^{NAME} looks at (?:his|her|their) conversation list$"))
def looks_at_list(world: Scenario, name: str) -> None:
    actor = world.actors[name]
    world.open_signed_in_browser(actor)
    actor.chat.open_new()
    world.notes["listed"] = actor.sidebar.ids()


@then(parsers.re(f"^{NAME} sees exactly (?:his|her|their) own conversations$"))
def sees_own(world: Scenario, name: str) -> None:
    own = list(reversed(world.notes[f"{name}'s conversations"]))  # newest first
    assert world.notes["listed"] == own, f"{name}'s list shows {world.notes['listed']}, expected exactly {own}"


def _email_parts(address: str) -> tuple[str, str]:
    local, _, domain = address.partition("@")
    return local, domain


@given(parsers.re('^a user signed up as "(?P<address>[^"]+)" who told the assistant "(?P<sentence>.+)"$'))
def signed_up_user(world: Scenario, address: str, sentence: str) -> None:
    role = "First" if "First" not in world.actors else "Second"
    local, domain = _email_parts(address)
    actor = world.create_user(role, email_local=local, domain=domain)
    seed_told(actor, sentence)


@when(parsers.parse('the second user signs in with the address typed as "{typed}"'))
def second_signs_in(world: Scenario, typed: str) -> None:
    actor = world.actors["Second"]
    local, domain = _email_parts(typed)
    actor.page = world.browsers.anonymous()
    actor.login.open().log_in(world.data.email(local, world.tag, domain), actor.account.password)
    actor.chat.expect_signed_in()
    shown, expected = actor.chat.signed_in_as(), world.driver.shown_identity(actor.account)
    assert shown == expected, f"signing in as {typed!r} opened the account of {shown!r}, not {expected!r}"


@when(parsers.parse('the second user asks in a new conversation "{question}"'))
def second_asks(world: Scenario, question: str) -> None:
    actor = world.actors["Second"]
    start_new_conversation(actor)
    speak(actor, question)


@then(parsers.parse('the second user hears "{answer}"'))
def second_hears(world: Scenario, answer: str) -> None:
    hears(world, "Second", answer)


@then("the memories recalled for the second user are only their own")
def second_only_own(world: Scenario) -> None:
    only_own_memories(world.actors["Second"])


@given("users whose ids differ by one character, each with their own memories:")
def near_colliding_ids(world: Scenario, datatable: list[list[str]]) -> None:
    for suffix, memory in datatable[1:]:
        actor = world.create_user(f"Owner{suffix}", user_id=f"{world.tag}-{suffix}")
        actor.session.remember([memory])
        actor.told.append(Fact.parse(memory))


@then(parsers.parse('searching the memory of each user for "{question}" finds only that user\'s memories'))
def each_finds_own(world: Scenario, question: str) -> None:
    for actor in world.actors.values():
        hits = actor.session.search(question, k=10)
        own = [f.sentence for f in actor.told]
        assert [h.text for h in hits] == own, (
            f"searching user {actor.account.id}'s memory for {question!r} found {[h.text for h in hits]},"
            f" expected exactly {own}")
