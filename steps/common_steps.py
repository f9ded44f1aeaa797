"""Steps shared by every feature: signing in, starting conversations, telling and asking, checking answers."""

from __future__ import annotations

from pytest_bdd import given, parsers, then, when

from harness.polling import wait_until
from harness.sessions.generator import FACT_KEYS
from steps.world import Actor, Fact, Scenario

NAME = r"(?P<name>[A-Z][a-z]+)"
# A quoted sentence in a step runs to the last quote of the line, so it may hold quotes itself ("My nickname is "Bo".").


def speak(actor: Actor, text: str) -> str:
    """One turn through the chat page; remembers what was said and answered, for later checks."""
    reply = actor.chat.send(text)
    actor.turns += [("user", text), ("assistant", reply)]
    actor.turns_sent += 1
    actor.last_reply = reply
    actor.recalled = actor.chat.recalled_in_last_reply()
    actor.scenario.speaker = actor.name
    return reply


def tell(actor: Actor, sentence: str) -> None:
    speak(actor, sentence)
    actor.told.append(Fact.parse(sentence))


def speaker(world: Scenario) -> Actor:
    return world.actors[world.speaker]


def answered(world: Scenario, reply: str, expected: str) -> bool:
    """The exact reply by default; with a real model (--answer-check contains), any reply that contains it."""
    if world.answer_check == "contains":
        return expected.rstrip(".").lower() in reply.lower()
    return reply == expected


def sign_in(world: Scenario, name: str) -> Actor:
    actor = world.actor(name)
    world.open_signed_in_browser(actor)
    actor.chat.open_new()
    world.speaker = name
    return actor


def start_new_conversation(actor: Actor) -> None:
    on_this_app = actor.page is not None and actor.page.url.startswith(actor.app.base_url)
    home = actor.chat.url_for("home_page") if actor.page is not None else None
    if on_this_app and actor.page.url == home and not actor.turns:
        pass  # already on a new, empty conversation
    elif on_this_app:
        actor.sidebar.start_new()  # through the UI: the page flushes its pending memory writes first
        actor.page.wait_for_url(home)
        actor.chat.expect_ready()
    else:
        actor.chat.open_new()
    actor.settle()  # a later question may rely on what the app still writes on its own
    actor.turns = []


def questions_answered(actor: Actor, facts: list[Fact]) -> None:
    """Ask about every fact and check every answer; one failure report lists all wrong answers."""
    wrong = []
    for fact in facts:
        reply = speak(actor, fact.question)
        if not answered(actor.scenario, reply, fact.answer):
            wrong.append(f"  asked {fact.question!r}: expected {fact.answer!r}, got {reply!r}")
    assert not wrong, f"{actor.name}'s assistant got {len(wrong)} of {len(facts)} answers wrong:\n" + "\n".join(wrong)


@given(parsers.re(f"^{NAME} is signed in$"))
def given_signed_in(world: Scenario, name: str) -> None:
    sign_in(world, name)


@given(parsers.re(f"^{NAME} starts a new conversation$"))
@when(parsers.re(f"^{NAME} starts a new conversation$"))
def new_conversation(world: Scenario, name: str) -> None:
    start_new_conversation(world.actors[name])
    world.speaker = name


@given(parsers.re(f'^{NAME} tells the assistant "(?P<sentence>.+)"$'))
@when(parsers.re(f'^{NAME} tells the assistant "(?P<sentence>.+)"$'))
def tells(world: Scenario, name: str, sentence: str) -> None:
    tell(world.actors[name], sentence)


@when(parsers.re(f"^{NAME} tells the assistant, over several lines:$"))
def tells_over_lines(world: Scenario, name: str, docstring: str) -> None:
    """One message of several lines (the docstring, exactly); the facts are its lines that state one."""
    actor = world.actors[name]
    speak(actor, docstring)
    actor.told += [Fact.parse(line) for line in docstring.splitlines() if Fact.states_one(line)]


@when(parsers.re(f'^{NAME} (?:says|asks) "(?P<text>.+)"$'))
def says(world: Scenario, name: str, text: str) -> None:
    speak(world.actors[name], text)


@when(parsers.re(f"^{NAME} tells the assistant these facts(?: one right after the other)?:$"))
def tells_facts(world: Scenario, name: str, datatable: list[list[str]]) -> None:
    actor = world.actors[name]
    header, *rows = datatable
    for row in rows:
        fact = dict(zip(header, row, strict=True))
        tell(actor, Fact(fact["fact"], fact["value"]).sentence)


@then(parsers.parse('the assistant answers "{answer}"'))
def assistant_answers(world: Scenario, answer: str) -> None:
    actor = speaker(world)
    assert answered(world, actor.last_reply, answer), (
        f"{actor.name} expected the assistant to answer {answer!r} but it answered {actor.last_reply!r}"
        f" (memories recalled for that answer: {actor.recalled or 'none'})")


@then("the assistant answers each of her questions about them correctly")
def answers_each_question(world: Scenario) -> None:
    actor = speaker(world)
    questions_answered(actor, actor.told)


@then("in a new conversation the assistant answers each of her questions about them correctly")
def answers_in_new_conversation(world: Scenario) -> None:
    actor = speaker(world)
    start_new_conversation(actor)
    questions_answered(actor, actor.told)


@given(parsers.re(f"^{NAME}'s long-term memory holds:$"))
def memory_holds(world: Scenario, name: str, datatable: list[list[str]]) -> None:
    actor = world.actors[name]
    sentences = [row[0] for row in datatable[1:]]
    actor.session.remember(sentences)
    actor.told += [Fact.parse(s) for s in sentences]
    world.speaker = name


@then("her long-term memory holds exactly these facts, in the order she told them")
def memory_holds_exactly(world: Scenario) -> None:
    actor = speaker(world)
    expected = [f.sentence for f in actor.told]
    actor.settle()
    stored = wait_until(lambda: [m.text for m in actor.session.memories()], lambda texts: texts == expected,
                        timeout=8, what=f"{actor.name}'s memory holding exactly {expected}")
    assert stored == expected




@given(parsers.re(f"^{NAME}'s long-term memory holds (?P<count>\\d+) facts about (?:her|him|them)$"))
def memory_holds_generated(world: Scenario, name: str, count: str) -> None:
    """Facts with values from the scenario's seeded faker, stored through the app's memory API."""
    if int(count) > len(FACT_KEYS):
        raise ValueError(f"at most {len(FACT_KEYS)} generated facts, not {count}")
    actor = world.actors[name]
    values = [world.fake.city, world.fake.last_name, lambda: f"{world.fake.word()}-{world.fake.random_int(10, 999)}"]
    facts = [Fact(kind, values[i % len(values)]()) for i, kind in enumerate(FACT_KEYS[:int(count)])]
    actor.session.remember([f.sentence for f in facts])
    actor.told += facts
    world.speaker = name
