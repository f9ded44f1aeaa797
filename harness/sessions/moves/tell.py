"""Telling the assistant facts: one ("tell"), a correction of one told before ("correct"), or several in one message
("tell several facts at once"), each in a wording and a value of the next shape still to cover, maybe after small
talk on the same line or the next."""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import TYPE_CHECKING, ClassVar

from harness.sessions.actions import Said, quoted
from harness.sessions.draws import CORRECT_WORDINGS, FACT_KEYS, TELL_WORDINGS, Draws, FollowUp
from harness.sessions.moves._turns import Message, TurnRule
from harness.sessions.reads import KEPT, TALK
from harness.sessions.rules import Kind, NotApplicable
from harness.sessions.state import Statement
from harness.sessions.text import CHAT_CLASSES, VALUE_CLASSES
from harness.vocabulary.language import normalise_key, told_reply

if TYPE_CHECKING:
    from harness.sessions.model import SessionModel, UserState


@dataclass(frozen=True)
class Tell(Message):
    """States a fact (a correction when the user had stated the key before), maybe with more facts after it in the
    same message."""

    key: str = ""
    value: str = ""
    sentence: str = ""  # the fact as typed ("Oh, and my dog is Rex.")
    prefix: str = ""  # small talk typed before it in the same message, if any
    separator: str = " "
    value_class: str = "plain"
    correction: bool = False
    more: tuple[Said, ...] = ()  # further facts of the same message, each after `joiner`
    joiner: str = " "

    @property
    def kind(self) -> str:  # type: ignore[override]
        if self.more:
            return "tell several facts at once"
        return "correct" if self.correction else "tell"

    @property
    def statements(self) -> tuple[Said, ...]:
        return (Said(self.key, self.value, self.sentence, self.value_class, self.correction), *self.more)

    @property
    def classes(self) -> tuple[str, ...]:
        newline = "\n" in self.separator or (self.more and "\n" in self.joiner)
        return (*dict.fromkeys(s.value_class for s in self.statements), *(("newline",) if newline else ()))

    @property
    def told(self) -> tuple[tuple[Said, ...], ...]:
        return (self.statements,)

    @property
    def message(self) -> str:
        facts = self.joiner.join(s.sentence for s in self.statements)
        return f"{self.prefix}{self.separator}{facts}" if self.prefix else facts

    @property
    def typed(self) -> str:
        """The chat message as the user types it."""
        return self.message

    def gherkin(self) -> str:
        return f"When {self.user} tells the assistant {quoted(self.message)}"


@dataclass(frozen=True)
class WayOfTelling(Tell):
    """One fact told in a way of its own (a kind that is a way of telling, Kind.variant_of "tell"): its kind is its
    class's `way`."""

    way: ClassVar[str] = ""

    @property
    def kind(self) -> str:  # type: ignore[override]
        return self.way


def reply_to(tell: Tell) -> str:
    return told_reply((s.key, s.value) for s in tell.statements)


class TellRule(TurnRule[Tell]):
    """Facts told: each a statement of the conversation, and a memory while memory is on."""

    action = Tell
    kinds: tuple[Kind, ...] = (Kind("tell", 20), Kind("tell several facts at once", 6, long_form_weight=12),
                               Kind("correct", 10))
    writes = TurnRule.writes | {"memories"}
    acts_on = TurnRule.acts_on | {"memory_switch", "memories"}  # kept only with memory on; a correction replaces

    def to_cover(self, kind: str, model: SessionModel, name: str, draws: Draws) -> bool:
        if kind == "tell":  # a value at the longest message, in a script still to cover
            return bool(draws.long_values)
        if kind == "tell several facts at once":
            return bool(draws.values)
        return bool(draws.corrects and model.keys(name))

    def effects(self, model: SessionModel) -> dict[str, tuple[str, ...]]:
        return {kind.name: TALK + KEPT for kind in self.kinds}

    def draw(self, kind: str, name: str, model: SessionModel, draws: Draws) -> Tell | None:
        if kind == "tell several facts at once":
            fake = draws.fake
            several = fake.random_int(20, 60) if draws.long_form and fake.boolean(70) else fake.random_int(
                3 if draws.values else 2, 5 if draws.values else 4)
            return draw_tell(name, model, draws, several, False)
        return draw_tell(name, model, draws, 1, kind == "correct")

    def followed(self, follow: FollowUp, model: SessionModel, draws: Draws) -> Tell | None:
        """The fact asked about, told again (a correction where a memory of it is still kept); or a fact not told
        yet, with more while value shapes are still to cover, which the question after it then asks about."""
        name = follow.user
        given = (follow.key, follow.key) if follow.key else draw_key(model, name, draws, set())
        several = draws.fake.random_int(2, 4) if draws.values else 1  # more facts with it while classes are to cover
        tell = draw_tell(name, model, draws, several, given is not None and model.remembers(name, given[0]),
                         given) if given else None
        if tell is not None and not follow.key:  # the question after it asks about the fact it told
            waiting = next((i for i, f in enumerate(draws.follow_ups)
                            if f.user == name and f.kind == "ask" and not f.key), None)
            if waiting is not None:
                draws.follow_ups[waiting] = replace(draws.follow_ups[waiting], key=tell.key)
        return tell

    def say(self, model: SessionModel, user: UserState, action: Tell, remember: bool = True) -> str:
        """Each fact a statement of the conversation, and a memory while the user's memory is on; a fact stated
        again while a memory of it is kept must be a correction."""
        keys = [said.key for said in action.statements]
        if len(set(keys)) != len(keys):
            raise NotApplicable(f"{action.user} states one key twice in one message")
        for said in action.statements:
            if not said.correction and model.remembers(action.user, said.key):
                raise NotApplicable(f"{action.user} already told her {said.key}: that is a correction")
        reply = reply_to(action)
        conversation = model.add_turn(user, action.message, reply)
        told = [Statement(said.key, said.value, said.sentence, model.day, conversation, model.seq)
                for said in action.statements]
        user.statements += told
        model.keys_told.update(dict.fromkeys(s.key for s in told))
        if user.memory_on and remember:  # else nothing told is remembered: only the conversation's turns say it
            for statement in told:
                model.remember(user, statement)
        return reply


RULE = TellRule()


def draw_key(model: SessionModel, name: str, draws: Draws, taken: set[str]) -> tuple[str, str] | None:
    """A key the user has not told yet (normalised, and as typed): an edge key first, then the usual ones, then
    numbered ones (long sessions run out of names)."""
    told = set(model.keys(name)) | taken
    edge = next((k for k in draws.keys if normalise_key(k) not in told), None)
    if edge is not None:
        draws.keys.remove(edge)
        return normalise_key(edge), edge
    fresh = [k for k in FACT_KEYS if k not in told]
    if fresh:
        key = draws.fake.random_element(fresh)
        return key, key
    for n in range(1, 10_000):
        if f"parcel {n}" not in told:
            return f"parcel {n}", f"parcel {n}"
    return None


def draw_said(model: SessionModel, name: str, draws: Draws, key: str, typed: str, correction: bool,
          room: int | None = None) -> Said:
    """One fact: a value of the next class to cover, worded in the next way to cover."""
    fake, text = draws.fake, draws.text
    template = draws.first(*((draws.corrects, CORRECT_WORDINGS) if correction else (draws.tells, TELL_WORDINGS)))
    if draws.long_values and room is None:
        value_class = draws.long_values.pop(0)
        script = value_class[value_class.index("(") + 1:-1]
        limits = draws.limits
        longest = min(limits.longest_to_type, limits.longest_fact or limits.longest_to_type)
        length = longest - len(template.format(key=typed, value=""))
        value = text.near_limit(script, length)[:-1].rstrip(" .!?") or "x"
    else:
        others = [(k, v) for k, v in model.values(but=name) if k == key]
        if not correction and others and fake.boolean(30):  # another user holds the identical fact
            value, value_class = fake.random_element(others)[1], "identical"
        else:
            value_class = draws.first(draws.values, VALUE_CLASSES)
            value = text.value(value_class)
    return Said(key, value, template.format(key=typed, value=value), value_class, correction)


def draw_tell(name: str, model: SessionModel, draws: Draws, several: int, correction: bool,
          given: tuple[str, str] | None = None) -> Tell | None:
    """A message of `several` facts (a correction of one told before first, or the `given` key first: normalised,
    and as typed)."""
    told = model.keys(name)
    if correction and not told and given is None:
        return None
    taken: set[str] = set()
    facts: list[Said] = []
    for i in range(several):
        if i == 0 and given is not None:
            key, typed = given
        elif correction and i == 0:
            key = draws.fake.random_element(told)
            typed = key
        else:
            found = draw_key(model, name, draws, taken)
            if found is None:
                break
            key, typed = found
        taken.add(key)
        said = draw_said(model, name, draws, key, typed, correction and i == 0,
                         room=None if several == 1 else 0)
        if facts and sum(len(f.sentence) + 1 for f in (*facts, said)) > draws.limits.longest_to_type - 200:
            break  # the message is as long as the app takes (less room for small talk before it)
        facts.append(said)
    if not facts:
        return None
    fake = draws.fake
    prefix, separator = "", " "
    near_limit = any("limit" in f.value_class for f in facts)
    if not near_limit and (draws.text.unseen or fake.boolean(20)):  # small talk first, of a class still to cover
        prefix = draws.text.small_talk(draws.text.next_class(CHAT_CLASSES))
        separator = fake.random_element((" ", "\n", "\n\n"))
    first = facts[0]
    tell = Tell(name, key=first.key, value=first.value, sentence=first.sentence, prefix=prefix, separator=separator,
                value_class=first.value_class, correction=first.correction, more=tuple(facts[1:]),
                joiner=fake.random_element((" ", "\n", " ")))
    if len(tell.message) > draws.limits.longest_to_type:
        return None  # several long values: the message would be refused
    return tell


class WayOfTellingRule(TellRule):
    """A way of telling one fact (its action a WayOfTelling, its one kind a variant of "tell"): drawn once a session
    in the place of a tell, where its precondition holds; it covers nothing of its own, and what it shows is the
    tell's. Everything of the user's is read right after it."""

    checked_after = True

    def to_cover(self, kind: str, model: SessionModel, name: str, draws: Draws) -> bool:
        return False

    def effects(self, model: SessionModel) -> dict[str, tuple[str, ...]]:
        return {kind.name: () for kind in self.kinds}  # (what it shows is the tell's: Kind.variant_of)

    def draw(self, kind: str, name: str, model: SessionModel, draws: Draws) -> Tell | None:
        tell = draw_tell(name, model, draws, 1, False)
        return None if tell is None else self.action(**{f.name: getattr(tell, f.name) for f in fields(tell)})
