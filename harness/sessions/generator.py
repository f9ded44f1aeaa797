"""The seeded generator of a session: users, and a long run of their actions drawn from what the app supports."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from faker import Faker

from harness.sessions.actions import (
    Action,
    Ask,
    Chat,
    DeleteAccount,
    NewConversation,
    PassTime,
    Rejoin,
    Reopen,
    ReopenBrowser,
    SignOutAndIn,
    Tell,
)
from harness.sessions.model import SessionModel
from harness.sessions.text import CHAT_CLASSES, VALUE_CLASSES, TextMaker

# The facts users tell: one line each, as people name the things they want remembered.
FACT_KEYS = ("locker code", "gate code", "dentist", "plumber", "gym class", "book club", "favourite tea", "bike shop",
             "tax advisor", "car plate", "library card", "wifi password", "piano teacher", "vet", "bank branch",
             "passport number", "seat preference", "home city", "sister's birthday", "order number", "dog",
             "nickname", "home folder", "signature", "train", "parking spot")

# How often each kind of action is drawn, relative to the others.
WEIGHTS = {"tell": 22, "correct": 10, "ask": 26, "chat": 8, "start a conversation": 8, "reopen a conversation": 7,
           "close and reopen the browser": 5, "let time pass": 4, "sign out and back in": 4, "delete an account": 2}
ALL_KINDS = (*WEIGHTS, "open an account again")
LEAVING = ("close and reopen the browser", "sign out and back in", "delete an account")

_TELL = ("My {key} is {value}.", "Oh, and my {key} is {value}.", "Also my {key} is {value}!")
_CORRECT = ("Actually, my {key} is {value}.", "Correction: my {key} is {value}.", "Sorry, my {key} is {value}.")
_ASK = ("What is my {key}?", "What's my {key}?", "Do you remember my {key}?", "Tell me my {key}.")
_DAYS = (1, 3, 10, 30, 90, 200, 400)  # 400 is past the retention of a year: everything told before is forgotten
_EMAIL_SUFFIXES = ("", "1", "-1", "11", "_1", "1a")  # near-colliding addresses: ana, ana1, ana-1, ...


@dataclass(frozen=True)
class Plan:
    seed: str
    users: list[str]
    email_locals: dict[str, str]
    actions: list[Action]
    left_out: dict[str, str]  # kind -> why the driver cannot act it out

    def counts(self) -> dict[str, dict[str, int]]:
        kinds = Counter(a.kind for a in self.actions)
        classes = Counter(c for a in self.actions for c in a.classes)
        return {"action kinds": dict(sorted(kinds.items())), "character classes": dict(sorted(classes.items()))}


def generate(seed: str, count: int, users: int, left_out: dict[str, str] | None = None,
             retention_days: float | None = 365) -> Plan:
    """`count` actions by `users` users, from `seed` alone; kinds in `left_out` (kind -> why) are never drawn."""
    if users < 1 or count < 1:
        raise ValueError(f"a session needs at least one user and one action, not {users} users and {count} actions")
    left_out = dict(left_out or {})
    unknown = set(left_out) - set(ALL_KINDS)
    if unknown:
        raise ValueError(f"unknown action kinds {sorted(unknown)}; known: {', '.join(ALL_KINDS)}")
    fake = Faker("en_US")
    fake.seed_instance(f"generated-session:{seed}:{count}:{users}")
    text = TextMaker(fake)
    names: list[str] = []
    while len(names) < users:
        name = "".join(ch for ch in fake.first_name() if ch.isalpha())
        if name and name not in names:
            names.append(name)
    base = names[0].lower()
    locals_ = {n: f"{base}{_EMAIL_SUFFIXES[i % len(_EMAIL_SUFFIXES)]}{i // len(_EMAIL_SUFFIXES) or ''}"
               for i, n in enumerate(names)}
    model = SessionModel(names, retention_days)
    kinds = [k for k in WEIGHTS if k not in left_out]
    # Every kind and every character class early, in a seeded order, so that even a short session covers them all.
    unseen_kinds = fake.random.sample(kinds, len(kinds))
    text.unseen = fake.random.sample(CHAT_CLASSES, len(CHAT_CLASSES))
    actions: list[Action] = []
    last = names[0]
    while len(actions) < count:
        name = fake.random_element(names)
        if not model.alive(name):
            if "open an account again" in left_out:
                continue
            action: Action | None = Rejoin(name)
        else:
            kind = (unseen_kinds[0] if unseen_kinds and fake.boolean(60)
                    else fake.random.choices(kinds, weights=[WEIGHTS[k] for k in kinds])[0])
            if kind in LEAVING and model.alive(last) and fake.boolean(70):
                name = last  # people close the browser or sign out right after a reply, before a write is done
            action = _draw(kind, name, model, fake, text)
        if action is None:
            continue
        model.apply(action)
        actions.append(action)
        last = action.user or last
        if action.kind in unseen_kinds:
            unseen_kinds.remove(action.kind)
    return Plan(seed, names, locals_, actions, left_out)


def _draw(kind: str, name: str, model: SessionModel, fake: Faker, text: TextMaker) -> Action | None:
    """One action of `kind` by `name` that fits the model's state, or None when none fits."""
    told = model.keys(name)
    if kind in ("tell", "correct"):
        correction = kind == "correct"
        if correction and not told:
            return None
        fresh = [k for k in FACT_KEYS if k not in told]
        if not correction and not fresh:
            return None
        key = fake.random_element(told) if correction else fake.random_element(fresh)
        value_class = text.next_class(VALUE_CLASSES)
        value = text.value(value_class)
        others = [(k, v) for k, v in model.values() if k == key]
        if not correction and others and fake.boolean(30):  # another user holds the identical fact
            value = fake.random_element(others)[1]
            value_class = "identical"
        sentence = fake.random_element(_CORRECT if correction else _TELL).format(key=key, value=value)
        prefix, separator = "", " "
        if fake.boolean(20):
            prefix = text.small_talk("plain")
            separator = fake.random_element((" ", "\n", "\n\n"))
        return Tell(name, key=key, value=value, sentence=sentence, prefix=prefix, separator=separator,
                    value_class=value_class, correction=correction)
    if kind == "ask":
        others = [k for k, _ in model.values() if k not in told]
        pool = told if told and (fake.boolean(80) or not others) else others or list(FACT_KEYS)
        key = fake.random_element(pool)
        return Ask(name, key=key, question=fake.random_element(_ASK).format(key=key))
    if kind == "chat":
        text_class = text.next_class(CHAT_CLASSES)
        return Chat(name, text=text.small_talk(text_class), text_class=text_class)
    if kind == "start a conversation":
        return NewConversation(name) if model.current(name) is not None else None
    if kind == "reopen a conversation":
        choices = [i for i in range(len(model.conversations(name))) if i != model.current(name)]
        return Reopen(name, conversation=fake.random_element(choices) + 1) if choices else None
    if kind == "close and reopen the browser":
        return ReopenBrowser(name)
    if kind == "sign out and back in":
        return SignOutAndIn(name)
    if kind == "let time pass":
        return PassTime("", days=fake.random_element(_DAYS))
    if kind == "delete an account":
        return DeleteAccount(name) if model.conversations(name) else None
    raise ValueError(f"unknown action kind {kind!r}")
