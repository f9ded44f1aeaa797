"""What the moves of a generated session draw with: the seeded faker and its text maker, the facts users tell and the
words they tell and ask them in, and what the session must still draw once (coverage) or soon (follow-ups)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from faker import Faker

from harness.app.target import Limits
from harness.sessions.actions import Action
from harness.sessions.text import CHAT_CLASSES, SCRIPTS, VALUE_CLASSES, TextMaker

if TYPE_CHECKING:  # (the model finds its moves, which draw with these)
    from harness.sessions.model import SessionModel

# The facts users tell: one line each, as people name the things they want remembered.
FACT_KEYS = ("locker code", "gate code", "dentist", "plumber", "gym class", "book club", "favourite tea", "bike shop",
             "tax advisor", "car plate", "library card", "wifi password", "piano teacher", "vet", "bank branch",
             "passport number", "seat preference", "home city", "sister's birthday", "order number", "dog",
             "nickname", "home folder", "signature", "train", "parking spot")
# Keys of the edges: made only of common words (no search vector), with digits, and typed in other spellings.
EDGE_KEYS = ("will", "to-do", "why", "wifi 5g password", "kid's school", "favorite colour", "PIN", "Home Address")
TELL_WORDINGS = ("My {key} is {value}.", "Oh, and my {key} is {value}.", "Also my {key} is {value}!",
                 "So my {key} is {value}.", "Well, my {key} is {value}.", "Our {key} is {value}.",
                 "My {key} = {value}.")
CORRECT_WORDINGS = ("Actually, my {key} is {value}.", "Correction: my {key} is {value}.", "Sorry, my {key} is {value}.",
                    "Actually my {key} is {value}!", "Okay, my {key} is {value}.")
ASK_WORDINGS = ("What is my {key}?", "What's my {key}?", "Do you remember my {key}?", "Tell me my {key}.",
                "What was my {key}?", "Do you still remember my {key}?", "Hi! What is my {key}?", "What’s my {key}?")
FOLLOW_UP_ROOM = 8  # the last actions, too few for what shows a take-back
ENDING = 4  # the last actions, too few to show what an account's deletion is followed by


@dataclass(frozen=True)
class FollowUp:
    """What a user does soon after taking something back, to show it: "ask" about `key` (empty: the key of the
    fact told by the follow-up "tell" before it), "tell" `key` (empty: a fact not told yet), "turn memory on",
    "start a conversation"; or soon after their account's deletion, "open an account again"."""

    user: str
    kind: str
    key: str = ""


class Draws:
    """What a session must still draw once (coverage) and soon (follow-ups), the seeded faker it draws with and the
    target's limits it draws within."""

    def __init__(self, fake: Faker, kinds: list[str], limits: Limits, has_clock: bool, long_form: bool) -> None:
        self.fake = fake
        self.limits = limits  # the target's: every message fits them, and time lands by them
        self.long_form = long_form  # the session outgrows pages and batches
        self.text = TextMaker(fake)
        rng = fake.random
        self.kinds = rng.sample(kinds, len(kinds))
        self.text.unseen = rng.sample(CHAT_CLASSES, len(CHAT_CLASSES))
        self.values = rng.sample(VALUE_CLASSES, len(VALUE_CLASSES))
        self.keys = rng.sample(EDGE_KEYS, len(EDGE_KEYS))
        self.tells, self.corrects, self.asks = (rng.sample(t, len(t))
                                                for t in (TELL_WORDINGS, CORRECT_WORDINGS, ASK_WORDINGS))
        # Each script once at the longest message: half as small talk, half as a fact's value.
        scripts = rng.sample([f"near the limit ({s})" for s in SCRIPTS], len(SCRIPTS))
        self.long_chats, self.long_values = scripts[::2], scripts[1::2]
        edges = ["just inside the retention", "just outside the retention"] if limits.retention_days else []
        edges += ["just inside the session", "just outside the session"] if limits.session_days else []
        self.boundaries = rng.sample(edges, len(edges)) if has_clock else []
        self.follow_ups: list[FollowUp] = []  # in the order they are to be drawn
        self.edits = ["long"]  # the value class of the first edit
        self.queued: list[Action] = []  # drawn already, to be taken next in this order
        self.left = 0  # actions still to draw
        self.transitions: list[tuple[str, str]] = []  # (kind, read) still to show, in a seeded order
        self.addresses: dict[str, str] = {}  # each user's e-mail address (near-colliding ones: generator.py)
        self.variants: list[str] = []  # the kinds drawn once in the place of another's action, still to draw
        self.variant_kinds: dict[str, str] = {}  # each such kind -> the kind whose action it is drawn in place of

    def save(self) -> tuple[object, dict[str, list]]:
        """What drawing changes, to go back to after a trial draw."""
        lists = {k: list(v) for k, v in vars(self).items() if isinstance(v, list)}
        return self.fake.random.getstate(), {**lists, "unseen": list(self.text.unseen)}

    def restore(self, saved: tuple[object, dict[str, list]]) -> None:
        state, lists = saved
        self.fake.random.setstate(state)
        self.text.unseen = lists.pop("unseen")
        vars(self).update(lists)

    def first(self, pool: list[str], every: tuple[str, ...] | list[str]) -> str:
        """The next of `pool` not drawn yet, else any of `every`."""
        return pool.pop(0) if pool else self.fake.random_element(every)

    def boundary(self, model: SessionModel) -> str | None:
        """The next edge still to cover that time can reach now (a retention edge needs a memory still kept)."""
        kept = any(u.alive and model.memories(name) for name, u in model.users.items())
        return next((b for b in self.boundaries if "session" in b or kept), None)

    def variants_of(self, kind: str) -> list[str]:
        """The ways of doing `kind` still to draw once (harness.sessions.rules.Kind.variant_of)."""
        return [v for v in self.variants if self.variant_kinds.get(v) == kind]

    def pending(self, name: str) -> bool:
        """Whether the user still has follow-ups to draw."""
        return any(f.user == name for f in self.follow_ups)
