"""Steps shared by every feature: signing in, starting conversations, telling and asking, checking answers."""

from __future__ import annotations

from pytest_bdd import given, parsers, then, when

from harness.answers import AnswerCheck
from harness.facts import Fact
from harness.polling import wait_until
from harness.sessions.generator import FACT_KEYS
from steps.world import NAME, Actor, World

# A quoted sentence in a step runs to the last quote of the line, so it may hold quotes itself ("My nickname is "Bo".").


def each_question_answered(actor: Actor, facts: list[Fact], answers: AnswerCheck) -> None:
    """Ask about every fact and check every answer; one failure report lists all wrong answers."""
    wrong = []
    for fact in facts:
        reply = actor.say(fact.question)
        if not answers.matches(reply, fact.answer):
            wrong.append(f"  asked {fact.question!r}: expected {fact.answer!r}, got {reply!r}")
    assert not wrong, f"{actor.name}'s assistant got {len(wrong)} of {len(facts)} answers wrong:\n" + "\n".join(wrong)


@given(parsers.re(f"^{NAME} is signed in$"))
def given_signed_in(world: World, name: str) -> None:
    """Signs the user in (their account created first if the scenario has none yet), on a new conversation."""
    world.actor(name).sign_in()


@given(parsers.re(f"^{NAME} starts a new conversation$"))
@when(parsers.re(f"^{NAME} starts a new conversation$"))
def new_conversation(world: World, name: str) -> None:
    """Starts a new conversation, once the memory writes the app makes on its own after a turn have landed."""
    world.actors[name].start_new_conversation()


@given(parsers.re(f'^{NAME} tells the assistant "(?P<sentence>.+)"$'))
@when(parsers.re(f'^{NAME} tells the assistant "(?P<sentence>.+)"$'))
def tells(world: World, name: str, sentence: str) -> None:
    """Sends a fact ("My <thing> is <value>.", or "Actually, my ...") as one turn; later steps ask about it."""
    world.actors[name].tell(sentence)


@when(parsers.re(f"^{NAME} tells the assistant, over several lines:$"))
def tells_over_lines(world: World, name: str, docstring: str) -> None:
    """One message of several lines (the docstring, exactly); the facts are its lines that state one."""
    actor = world.actors[name]
    actor.say(docstring)
    actor.told += [Fact.parse(line) for line in docstring.splitlines() if Fact.states_one(line)]


@when(parsers.re(f"^{NAME} tells the assistant (?P<count>\\d+) facts in one message$"), converters={"count": int})
def tells_many_at_once(world: World, name: str, count: int) -> None:
    """One message of `count` sentences, each a fact with a value of the scenario's seeded faker."""
    actor = world.actors[name]
    facts = [Fact(f"parcel {n} code", f"{world.fake.word()}-{world.fake.random_int(100, 999)}")
             for n in range(1, count + 1)]
    actor.say(" ".join(f.sentence for f in facts))
    actor.told += facts


@when(parsers.re(f"^{NAME} tells the assistant a fact as long as the longest message, in (?P<script>[A-Za-z ]+)$"))
def tells_longest_fact(world: World, name: str, script: str) -> None:
    """A fact whose sentence is as long as the longest message the app accepts (4,000 where none is declared)."""
    words = {"Chinese": "东京的春天樱花很美丽", "Arabic": "مرحبا بالعالم ", "English": "lorem ipsum dolor "}
    if script not in words:
        raise ValueError(f"no filler for {script!r}; known: {', '.join(words)}")
    longest = world.app.target.longest_message
    start = "My travel diary is "
    value = (words[script] * longest)[:longest - len(start) - 1].strip()
    world.actors[name].tell(f"{start}{value}.")


@then("in a new conversation the assistant answers her question about the last of them")
def answers_last_in_new_conversation(world: World, answers: AnswerCheck) -> None:
    """Starts a new conversation and asks about the last fact told; the answer gives its value."""
    actor = world.speaking()
    actor.start_new_conversation()
    each_question_answered(actor, actor.told[-1:], answers)


@when(parsers.re(f'^{NAME} (?:says|asks) "(?P<text>.+)"$'))
def says(world: World, name: str, text: str) -> None:
    """Sends the text as one turn (a question, small talk); the reply is kept for the Then steps."""
    world.actors[name].say(text)


@when(parsers.re(f"^{NAME} tells the assistant these facts(?: one right after the other)?:$"))
def tells_facts(world: World, name: str, datatable: list[list[str]]) -> None:
    """Tells each row of the table (columns fact and value) as a sentence of its own, one turn each."""
    actor = world.actors[name]
    header, *rows = datatable
    for row in rows:
        fact = dict(zip(header, row, strict=True))
        actor.tell(Fact(fact["fact"], fact["value"]).sentence)


@then(parsers.parse('the assistant answers "{answer}"'))
def assistant_answers(world: World, answers: AnswerCheck, answer: str) -> None:
    """The last reply is the answer given (exactly, or containing it with --answer-check contains)."""
    actor = world.speaking()
    assert answers.matches(actor.last_reply, answer), (
        f"{actor.name} expected the assistant to answer {answer!r} but it answered {actor.last_reply!r}"
        f" (memories recalled for that answer: {actor.recalled or 'none'})")


@then("the assistant answers each of her questions about them correctly")
def answers_each_question(world: World, answers: AnswerCheck) -> None:
    """Asks about every fact the user told, in the open conversation; each answer gives its value."""
    actor = world.speaking()
    each_question_answered(actor, actor.told, answers)


@then("in a new conversation the assistant answers each of her questions about them correctly")
def answers_in_new_conversation(world: World, answers: AnswerCheck) -> None:
    """Starts a new conversation and asks about every fact the user told; each answer gives its value."""
    actor = world.speaking()
    actor.start_new_conversation()
    each_question_answered(actor, actor.told, answers)


@given(parsers.re(f"^{NAME}'s long-term memory holds:$"))
def memory_holds(world: World, name: str, datatable: list[list[str]]) -> None:
    """Stores the table's sentences (one column under a header) in the user's memory through the app's API."""
    actor = world.actors[name]
    sentences = [row[0] for row in datatable[1:]]
    actor.session.remember(sentences)
    actor.told += [Fact.parse(s) for s in sentences]
    world.speaker = name


@then("her long-term memory holds exactly these facts, in the order she told them")
def memory_holds_exactly(world: World) -> None:
    """Once the app's own writes have landed, the user's memory lists exactly the facts told, in order."""
    actor = world.speaking()
    expected = [f.sentence for f in actor.told]
    actor.settle()
    stored = wait_until(lambda: [m.text for m in actor.session.memories()], lambda texts: texts == expected,
                        timeout=8, what=f"{actor.name}'s memory holding exactly {expected}")
    assert stored == expected


@given(parsers.re(f"^{NAME}'s long-term memory holds (?P<count>\\d+) facts about (?:her|him|them)$"),
       converters={"count": int})
def memory_holds_generated(world: World, name: str, count: int) -> None:
    """Facts with values from the scenario's seeded faker, stored through the app's memory API."""
    if count > len(FACT_KEYS):
        raise ValueError(f"at most {len(FACT_KEYS)} generated facts, not {count}")
    actor = world.actors[name]
    values = [world.fake.city, world.fake.last_name, lambda: f"{world.fake.word()}-{world.fake.random_int(10, 999)}"]
    facts = [Fact(kind, values[i % len(values)]()) for i, kind in enumerate(FACT_KEYS[:count])]
    actor.session.remember([f.sentence for f in facts])
    actor.told += facts
    world.speaker = name
