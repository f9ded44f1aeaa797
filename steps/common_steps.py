"""Steps shared by every feature: signing in, starting conversations, telling and asking, checking answers."""

from __future__ import annotations

import time

from pytest_bdd import given, parsers, then, when

from harness.sessions.draws import FACT_KEYS
from harness.users.actor import Actor
from harness.vocabulary.answers import AnswerCheck
from harness.vocabulary.facts import Fact
from harness.vocabulary.polling import wait_until
from steps.records import Talk
from steps.world import NAME, World

# A quoted sentence in a step runs to the last quote of the line, so it may hold quotes itself ("My nickname is "Bo".").


def each_question_answered(actor: Actor, talk: Talk, facts: tuple[Fact, ...], answers: AnswerCheck) -> Talk:
    """Ask about every fact and check every answer; one failure report lists all wrong answers."""
    wrong = []
    for fact in facts:
        exchange = actor.say(fact.question)
        talk = talk.after(exchange)
        if not answers.matches(exchange.reply, fact.answer):
            wrong.append(f"  asked {fact.question!r}: expected {fact.answer!r}, got {exchange.reply!r}")
    assert not wrong, f"{actor.name}'s assistant got {len(wrong)} of {len(facts)} answers wrong:\n" + "\n".join(wrong)
    return talk


@given(parsers.re(f"^{NAME} is signed in$"))
def given_signed_in(world: World, name: str) -> None:
    """Signed in the quickest way the app allows (a cached sign-in), on a new conversation."""
    world.actor(name).sign_in()


@given(parsers.re(f"^{NAME} starts a new conversation$"), target_fixture="talk")
@when(parsers.re(f"^{NAME} starts a new conversation$"), target_fixture="talk")
def new_conversation(world: World, talk: Talk, name: str) -> Talk:
    """A new conversation, once the memory writes the app makes on its own have landed."""
    world.actors[name].start_new_conversation()
    return talk.new_conversation(name)


@given(parsers.re(f'^{NAME} tells the assistant "(?P<sentence>.+)"$'), target_fixture="talk")
@when(parsers.re(f'^{NAME} tells the assistant "(?P<sentence>.+)"$'), target_fixture="talk")
def tells(world: World, talk: Talk, name: str, sentence: str) -> Talk:
    """One turn stating a fact ("My <thing> is <value>."), kept for the questions asked about it later."""
    return talk.after(world.actors[name].say(sentence), Fact.parse(sentence))


@when(parsers.re(f"^{NAME} tells the assistant, over several lines:$"), target_fixture="talk")
def tells_over_lines(world: World, talk: Talk, name: str, docstring: str) -> Talk:
    """One message of several lines (the docstring, exactly), typed as a person does (a new line with Shift+Enter on a
    page); the facts are its lines that state one."""
    told = [Fact.parse(line) for line in docstring.splitlines() if Fact.states_one(line)]
    return talk.after(world.actors[name].say_lines(docstring), *told)


@when(parsers.re(f"^{NAME} tells the assistant (?P<count>\\d+) facts in one message$"), converters={"count": int},
      target_fixture="talk")
def tells_many_at_once(world: World, talk: Talk, name: str, count: int) -> Talk:
    """One message of `count` sentences, each a fact with a value of the scenario's seeded faker."""
    facts = [Fact(f"parcel {n} code", f"{world.fake.word()}-{world.fake.random_int(100, 999)}")
             for n in range(1, count + 1)]
    return talk.after(world.actors[name].say(" ".join(f.sentence for f in facts)), *facts)


@when(parsers.re(f"^{NAME} tells the assistant a fact as long as the longest message, in (?P<script>[A-Za-z ]+)$"),
      target_fixture="talk")
def tells_longest_fact(world: World, talk: Talk, name: str, script: str) -> Talk:
    """A fact whose sentence is as long as the longest message the app accepts (4,000 where none is declared)."""
    words = {"Chinese": "东京的春天樱花很美丽", "Arabic": "مرحبا بالعالم ", "English": "lorem ipsum dolor "}
    if script not in words:
        raise ValueError(f"no filler for {script!r}; known: {', '.join(words)}")
    longest = world.app.target.limits.longest_to_type
    start = "My travel diary is "
    sentence = f"{start}{(words[script] * longest)[:longest - len(start) - 1].strip()}."
    return talk.after(world.actors[name].say(sentence), Fact.parse(sentence))


@then("in a new conversation the assistant answers her question about the last of them", target_fixture="talk")
def answers_last_in_new_conversation(world: World, talk: Talk, answers: AnswerCheck) -> Talk:
    """The last fact she told, asked about in a new conversation."""
    actor = world.actors[talk.speaker]
    actor.start_new_conversation()
    return each_question_answered(actor, talk.new_conversation(actor.name), talk.of(actor.name).told[-1:], answers)


@when(parsers.re(f'^{NAME} (?:says|asks) "(?P<text>.+)"$'), target_fixture="talk")
def says(world: World, talk: Talk, name: str, text: str) -> Talk:
    """One turn, exactly as written."""
    return talk.after(world.actors[name].say(text))


@when(parsers.re(f"^{NAME} tells the assistant these facts(?: one right after the other)?:$"), target_fixture="talk")
def tells_facts(world: World, talk: Talk, name: str, datatable: list[list[str]]) -> Talk:
    """One turn per row of the table (columns `fact` and `value`), each sent as soon as the last is answered."""
    actor = world.actors[name]
    header, *rows = datatable
    for row in rows:
        fact = dict(zip(header, row, strict=True))
        told = Fact(fact["fact"], fact["value"])
        talk = talk.after(actor.say(told.sentence), told)
    return talk


@then(parsers.parse('the assistant answers "{answer}"'))
def assistant_answers(talk: Talk, answers: AnswerCheck, answer: str) -> None:
    """The reply to the last turn of whoever spoke last, compared as the run's answer check compares."""
    last = talk.last
    assert answers.matches(last.reply, answer), (
        f"{last.name} expected the assistant to answer {answer!r} but it answered {last.reply!r}"
        f" (memories recalled for that answer: {list(last.recalled) or 'none'})")


@then("the assistant answers each of her questions about them correctly", target_fixture="talk")
def answers_each_question(world: World, talk: Talk, answers: AnswerCheck) -> Talk:
    """Every fact she told, asked about in the open conversation."""
    actor = world.actors[talk.speaker]
    return each_question_answered(actor, talk, talk.of(actor.name).told, answers)


@then("in a new conversation the assistant answers each of her questions about them correctly", target_fixture="talk")
def answers_in_new_conversation(world: World, talk: Talk, answers: AnswerCheck) -> Talk:
    """Every fact she told, asked about in a new conversation."""
    actor = world.actors[talk.speaker]
    actor.start_new_conversation()
    return each_question_answered(actor, talk.new_conversation(actor.name), talk.of(actor.name).told, answers)


@given(parsers.re(f"^{NAME}'s long-term memory holds:$"), target_fixture="talk")
def memory_holds(world: World, talk: Talk, name: str, datatable: list[list[str]]) -> Talk:
    """Memories stored through the app's memory API, one per row (after a header row). Where the app's timestamps
    are coarse, one at a time, each with when it was made: memories made within the app's clock resolution of each
    other may be listed either way, and only those."""
    sentences = [row[0] for row in datatable[1:]]
    session = world.actors[name].session
    if not world.app.target.limits.clock_resolution_s:
        session.remember(sentences)
        return talk.stored(name, *(Fact.parse(s) for s in sentences))
    made = []
    for sentence in sentences:
        started = time.monotonic()
        session.remember([sentence])
        made.append((sentence, (started, time.monotonic())))
    return talk.stored(name, *(Fact.parse(s) for s in sentences), made=tuple(made))


@then("her long-term memory holds exactly these facts, in the order she told them")
def memory_holds_exactly(world: World, talk: Talk) -> None:
    """Her memory list, once the app has written what it writes on its own, is exactly her facts' sentences."""
    actor = world.actors[talk.speaker]
    expected = [f.sentence for f in talk.of(actor.name).told]
    actor.settle()
    stored = wait_until(lambda: [m.text for m in actor.session.memories()], lambda texts: texts == expected,
                        timeout=8, what=f"{actor.name}'s memory holding exactly {expected}")
    assert stored == expected


@then("searching her memory for each of them by its whole text finds it first")
def found_by_whole_text(world: World, talk: Talk) -> None:
    """The app's memory search, asked with each fact's sentence exactly as she told it (as long as a memory's text
    gets: the longest query its own text makes), finds that memory first."""
    actor = world.actors[talk.speaker]
    if not world.app.searches():
        return
    for fact in talk.of(actor.name).told:
        hits = actor.session.search(fact.sentence, k=world.app.recall_k)
        assert hits and hits[0].text == fact.sentence, (
            f"searching {actor.name}'s memory for her whole {len(fact.sentence)}-character fact "
            f"{fact.sentence[:40]!r}... found {[h.text[:40] for h in hits]}")


@given(parsers.re(f"^{NAME}'s long-term memory holds (?P<count>\\d+) facts about (?:her|him|them)$"),
       converters={"count": int}, target_fixture="talk")
def memory_holds_generated(world: World, talk: Talk, name: str, count: int) -> Talk:
    """Facts with values from the scenario's seeded faker, stored through the app's memory API."""
    if count > len(FACT_KEYS):
        raise ValueError(f"at most {len(FACT_KEYS)} generated facts, not {count}")
    values = [world.fake.city, world.fake.last_name, lambda: f"{world.fake.word()}-{world.fake.random_int(10, 999)}"]
    facts = [Fact(kind, values[i % len(values)]()) for i, kind in enumerate(FACT_KEYS[:count])]
    world.actors[name].session.remember([f.sentence for f in facts])
    return talk.stored(name, *facts)


@given("the app has restarted on its data, as a deploy restarts it")
@when("the app has restarted on its data, as a deploy restarts it")
def restarted_on_its_data(world: World) -> None:
    """The app (one of the scenario's own) stopped and started again on its own data, at the same address, with the
    same settings."""
    world.restart_app()
