"""The seeded generator of a session: users, and a long run of their actions drawn from what the app supports, with a
bias to the edges of every promise: values of every shape, keys that are common words, every wording, messages at
the longest the app accepts, several facts in one message, time passing to just inside and just outside the
retention and the session lifetime, and (in the long form) more memories and conversations than any page or batch.

Whatever a short session must cover (every action kind, value class, wording, boundary, ...) is drawn first, in a
seeded order, so that even the short form draws each at least once.

What users take back is drawn with what shows it soon after, by the same user (follow-ups): a memory deleted, then a
question about it in a new conversation and the fact told again; a memory edited, then a question about it; memory
turned off, then a question about a fact told before, a new fact told, memory turned on again, and questions about
both. All memories are cleared while someone else keeps memories; what the runner checks after a clear-all or a
conversation's deletion needs no action of the user's (every user's state; the conversation's address). An account
deleted is opened again soon after.

Each kind is drawn by its move (harness/sessions/moves/), which says when it may be drawn, how, what follows it and
what it covers; the generator chooses which kind is drawn next, by whom, and what steers towards the transitions
still to show."""

from __future__ import annotations

import copy
from collections import Counter
from dataclasses import dataclass, field

from faker import Faker

from harness.app.target import Forgetting, Limits
from harness.sessions.actions import Action
from harness.sessions.draws import Draws, FollowUp
from harness.sessions.model import EVERY_STATEMENT, NotApplicable, SessionModel
from harness.sessions.moves import COVERING, KINDS, effects, rule_for, rule_of, shown_as
from harness.sessions.moves.ask import question
from harness.sessions.moves.new_conversation import NewConversation
from harness.sessions.moves.reopen import Reopen
from harness.sessions.pairs import drawn as pairs_drawn
from harness.sessions.reads import ANSWERS, READ_AFTER, changes, observe, pair

# How often each kind of action is drawn, relative to the others (each move declares its kinds' weights).
WEIGHTS = {kind.name: kind.weight for kind in KINDS}
# The long form outgrows every page, batch and cap: many facts at once, many conversations.
VOLUME_WEIGHTS = {kind.name: kind.long_form_weight for kind in KINDS if kind.long_form_weight is not None}
ALL_KINDS = tuple(kind.name for kind in KINDS)
# The kinds whose prediction needs the app's documented choice ([forgetting]), and which choice.
NEEDS_CHOICE = {kind.name: kind.needs for kind in KINDS if kind.needs}
# The moves the generator's own strategy takes: time passing to the edges of promises, an account opened again by a
# user whose account is deleted, and the kinds drawn otherwise than by weight (follow-ups).
TIME, REJOIN = "let time pass", "open an account again"
FOLLOWING = {kind.name for kind in KINDS if kind.follows}
# The kinds that are a way of doing another kind's action, drawn once in its place: what they show is that kind's.
VARIANTS = {kind.name: kind.variant_of for kind in KINDS if kind.variant_of}
LONG_FORM = 100  # actions from which a session is a long one
SHORT_FORM = 60  # actions from which a session must show every transition once (the default run's size)
STEER_TRIES = 3  # transitions still to show tried at each steering, the others after them
FULL_CHECK_EVERY = 10  # actions between two checks of every user by the runner (the acting user is checked after each)
ATTEMPTS = 6  # draws of one seed before a short form that leaves a transition uncovered fails
CONTEXTS = ("", "reopen an older conversation", "start a conversation")  # moves that make an effect observable


class GenerationError(ValueError):
    """A short session that leaves a transition of the model uncovered: the generator failed, not the app."""


class Incomplete(Exception):
    """A short session that shows every transition but leaves a kind or an edge of time undrawn: another attempt may
    draw them all (generate keeps it where none does)."""

    def __init__(self, plan: Plan) -> None:
        super().__init__("a kind or an edge of time undrawn")
        self.plan = plan


# Near-colliding addresses: ana, Ana11, ana_1, ... The second and third differ only in a character a wildcard matcher
# (SQL LIKE/ILIKE: `_` any one character, and no case) takes for another: the third's sign-in must reach the third.
_EMAIL_SUFFIXES = ("", "11", "_1", "-1", "1", "1a")
# Addresses of every common shape, each user another (the local part is the near-colliding one).
_EMAIL_SHAPES = (("{local}", "x.test"), ("{Local}", "x.test"), ("{local}", "x.test"),
                 ("{local}.smith", "mail.x.test"), ("{local}-o-neil", "my-company.test"),
                 ("{local}.a.very.long.local.part", "sub.domain.x.test"))


@dataclass(frozen=True)
class Plan:
    seed: str
    users: list[str]
    email_locals: dict[str, str]
    actions: list[Action]
    left_out: dict[str, str]  # kind -> why the driver cannot act it out
    email_domains: dict[str, str] = field(default_factory=dict)
    covered: dict[str, int] = field(default_factory=dict)  # transition -> the action number that first showed it
    uncovered: dict[str, str] = field(default_factory=dict)  # transition -> why the plan does not show it
    read_after: frozenset[int] = frozenset()  # turns after which the runner reads what the turn changed
    # The pairs of actions (harness/sessions/pairs.py) it covers when acted out as drawn -> the action b covering each
    pairs: dict[tuple[str, str], int] = field(default_factory=dict)

    def transitions(self) -> dict[str, object]:
        """The transitions (action kind -> read) the plan shows, with the action that first shows each, and those
        it does not, with why."""
        return {"covered": dict(self.covered), "uncovered": dict(self.uncovered)}

    def counts(self) -> dict[str, dict[str, int]]:
        kinds = Counter(a.kind for a in self.actions)
        classes = Counter(c for a in self.actions for c in a.classes)
        told = [s for a in self.actions for message in a.told for s in message]
        shapes = Counter(s.value_class for s in told)
        boundaries = Counter(b for a in self.actions for b in a.boundaries)
        boundaries.update(s.value_class for s in told if "limit" in s.value_class)
        return {"action kinds": dict(sorted(kinds.items())), "character classes": dict(sorted(classes.items())),
                "value shapes": dict(sorted(shapes.items())), "boundaries": dict(sorted(boundaries.items())),
                "facts told": {"statements": len(told), "in messages of several facts": sum(
                    len(message) for a in self.actions for message in a.told if len(message) > 1)}}


def generate(seed: str, count: int, users: int, left_out: dict[str, str] | None = None,
             retention_days: float | None = 365, limits: Limits | None = None, forgetting: Forgetting | None = None,
             memory_listing: str = EVERY_STATEMENT, unread: dict[str, str] | None = None) -> Plan:
    """`count` actions by `users` users, from `seed` alone; kinds in `left_out` (kind -> why) are never drawn, nor
    those whose prediction needs a choice `forgetting` does not declare (the app's [forgetting]). A short form
    shows each transition of the model (an action kind and a later read its effect changes) at least once, except
    reads the runner cannot make on the target (`unread`: read -> why): a draw that leaves one uncovered is drawn
    again from the same seed (a few attempts, each its own sub-seed), and the last one's failure raises
    GenerationError. A draw that leaves a kind or an edge of time undrawn is drawn again too, and kept only where no
    attempt draws them all."""
    drawn = (seed, count, users, left_out, retention_days, limits, forgetting, memory_listing, unread)
    fallback = None  # the first that shows every transition, though it leaves a kind or an edge undrawn
    for attempt in range(ATTEMPTS):
        try:
            return _generate(*drawn, attempt)
        except Incomplete as e:
            fallback = fallback or e.plan
        except GenerationError:
            if attempt == ATTEMPTS - 1 and fallback is None:
                raise
    assert fallback is not None
    return fallback


def _generate(seed: str, count: int, users: int, left_out: dict[str, str] | None = None,
             retention_days: float | None = 365, limits: Limits | None = None, forgetting: Forgetting | None = None,
             memory_listing: str = EVERY_STATEMENT, unread: dict[str, str] | None = None, attempt: int = 0) -> Plan:
    if users < 1 or count < 1:
        raise ValueError(f"a session needs at least one user and one action, not {users} users and {count} actions")
    limits = limits or Limits(retention_days=retention_days)
    forgetting = forgetting or Forgetting()
    left_out = dict(left_out or {})
    unknown = set(left_out) - set(ALL_KINDS)
    if unknown:
        raise ValueError(f"unknown action kinds {sorted(unknown)}; known: {', '.join(ALL_KINDS)}")
    for each in KINDS:
        missing = [name for name in each.limits if getattr(limits, name) is None]
        if missing:
            left_out.setdefault(each.name, f"needs what the target declares of it: [limits] {', '.join(missing)}")
        elif each.clock and TIME in left_out:
            left_out.setdefault(each.name, f"moves the app's clock, and time cannot pass: {left_out[TIME]}")
    for kind, (choice, what) in NEEDS_CHOICE.items():
        if getattr(forgetting, choice) is None:
            left_out.setdefault(kind, f"needs what the target documents of {what}: [forgetting] {choice}")
    fake = Faker("en_US")
    fake.seed_instance(f"generated-session:{seed}:{count}:{users}" + (f":{attempt}" if attempt else ""))
    names: list[str] = []
    while len(names) < users:
        name = "".join(ch for ch in fake.first_name() if ch.isalpha())
        if name and name not in names:
            names.append(name)
    base = names[0].lower()
    locals_, domains = {}, {}
    for i, n in enumerate(names):
        local = f"{base}{_EMAIL_SUFFIXES[i % len(_EMAIL_SUFFIXES)]}{i // len(_EMAIL_SUFFIXES) or ''}"
        shape, domain = _EMAIL_SHAPES[i % len(_EMAIL_SHAPES)] if i else _EMAIL_SHAPES[0]
        locals_[n] = shape.format(local=local, Local=local.capitalize(), n=i)
        domains[n] = domain
    model = SessionModel(names, limits.retention_days, memory_listing, limits.session_days, forgetting)
    weights = dict(WEIGHTS, **(VOLUME_WEIGHTS if count >= LONG_FORM else {}))
    kinds = [k for k in weights if k not in left_out and weights[k]]
    draws = Draws(fake, kinds, limits, TIME not in left_out, count >= LONG_FORM)
    draws.addresses = {n: f"{locals_[n]}@{domains[n]}" for n in names}
    draws.variant_kinds = {v: of for v, of in VARIANTS.items() if v not in left_out and of in kinds}
    draws.variants = list(draws.variant_kinds)
    tracked = count < LONG_FORM  # the long form outgrows pages and batches; the short form shows each transition
    required, uncovered = _transitions(model, weights, left_out, unread or {})
    draws.transitions = fake.random.sample(required, len(required)) if tracked else []
    covered: dict[tuple[str, str], int] = {}
    read_after: set[int] = set()
    actions: list[Action] = []
    last = names[0]
    while len(actions) < count:
        draws.left = count - len(actions)
        action = _next(model, draws, names, left_out, kinds, weights, last)
        if action is None:
            continue
        draws.follow_ups += _follow_ups_of(action, model, draws, left_out)
        who = [action.user] if action.user else names  # (time passes for everyone)
        before = observe(model, who) if tracked else {}
        model.apply(action)
        for name in model.expired_sessions():  # what the runner does: they sign in again
            model.signed_in_again(name)
        actions.append(action)
        last = action.user or last
        if action.kind in draws.kinds:
            draws.kinds.remove(action.kind)
        if tracked:
            _shown(action, len(actions), before, observe(model, who), model, draws, covered, read_after)
    left = [t for t in required if t not in covered] if tracked else []
    plan = Plan(seed, names, locals_, actions, left_out, domains,
                covered={pair(*t): n for t, n in sorted(covered.items(), key=lambda c: c[1])},
                uncovered={**uncovered, **{pair(*t): "not drawn" for t in left},
                           **({} if tracked else {"*": "the long form does not track transitions"})},
                read_after=frozenset(read_after),
                pairs=dict(pairs_drawn(actions, names, read_after, FULL_CHECK_EVERY).covered))
    if left and count >= SHORT_FORM:
        raise GenerationError(f"seed {seed}: the session of {count} actions by {users} users leaves "
                              f"{len(left)} transition(s) of the model uncovered: {', '.join(pair(*t) for t in left)}"
                              "; draw them (the generator's steering, or the moves' draws in harness/sessions/moves/)"
                              " or give the session more actions")
    if (draws.kinds or draws.variants or draws.boundaries) and count >= SHORT_FORM:
        raise Incomplete(plan)
    return plan


def _transitions(model: SessionModel, weights: dict[str, int], left_out: dict[str, str],
                 unread: dict[str, str]) -> tuple[list[tuple[str, str]], dict[str, str]]:
    """The (kind, read) pairs of the model's effects a session can show, and those it cannot, with why: a kind
    left out, or a read the runner cannot make on this target (`unread`: read -> why)."""
    drawn = {k for k, w in weights.items() if w} | FOLLOWING
    required, why = [], {}
    for kind, reads in effects(model).items():
        for read in reads:
            if kind in left_out or kind not in drawn:
                why[pair(kind, read)] = left_out.get(kind, "drawn in the long form only")
            elif read in unread:
                why[pair(kind, read)] = unread[read]
            else:
                required.append((kind, read))
    return required, why


def _uncovered(draws: Draws, kinds: list[str], model: SessionModel, name: str) -> str | None:
    """The kind of action that covers something still to be drawn once, if any."""
    if draws.kinds and draws.fake.boolean(85):
        ready = next((k for k in draws.kinds if _taker(k, name, model, draws)), None)  # someone may take it
        first = next((f for k in draws.kinds if (f := rule_for(k).wants_first(k, model, name, draws))), None)
        if first or ready:
            return first or ready
    if draws.boundary(model) and TIME in kinds and draws.fake.boolean(60):
        return TIME
    return next((k for k in COVERING if k in kinds and rule_for(k).to_cover(k, model, name, draws)), None)


def _next(model: SessionModel, draws: Draws, names: list[str], left_out: dict[str, str], kinds: list[str],
          weights: dict[str, int], last: str) -> Action | None:
    """The next action: one drawn already, a follow-up, a transition still to show, or a new draw."""
    fake = draws.fake
    if draws.queued:
        return draws.queued.pop(0)
    if draws.follow_ups and fake.boolean(90):  # soon after, now and then after another's
        return _follow_up(model, draws)
    if draws.boundary(model) and TIME in kinds and fake.boolean(10):  # the edges of time, among them
        return rule_for(TIME).draw(TIME, "", model, draws)
    if draws.transitions and (fake.boolean(70) or draws.left <= 2 * len(draws.transitions)):  # (time runs out)
        steered = _steer(model, draws, names)
        if steered:
            draws.queued[:0] = steered[1:]
            return steered[0]
    if not model.alive(name := fake.random_element(names)):
        return None if REJOIN in left_out else rule_for(REJOIN).draw(REJOIN, name, model, draws)
    kind = (_uncovered(draws, kinds, model, name) if fake.boolean(95) else None) or fake.random.choices(
        kinds, weights=[weights[k] for k in kinds])[0]
    if rule_for(kind).leaving and model.alive(last) and fake.boolean(70):
        name = last  # people close the browser or sign out right after a reply, before a write is done
    name = _taker(kind, name, model, draws) or name  # (a take-back goes to someone with something to take back)
    return _draw(kind, name, model, draws)


# -- transitions: what each action changes for a later read ---------------------------------------------------------
def _shown(action: Action, number: int, before: dict, after: dict, model: SessionModel, draws: Draws,
           covered: dict[tuple[str, str], int], read_after: set[int]) -> None:
    """Record the transitions the action showed first; have the runner (or a question drawn next) read them."""
    for user, read in changes(before, after):
        transition = (shown_as(action, model), read)
        if transition in covered:
            continue
        covered[transition] = number
        if transition in draws.transitions:
            draws.transitions.remove(transition)
        if read in READ_AFTER and not rule_of(action).checked_after:
            read_after.add(number)  # (every other action is followed by a read of its user)
        elif read == ANSWERS and model.alive(user) and not draws.pending(user):
            draws.queued += _question(model, draws, user, before[(user, read)], after[(user, read)])


def _question(model: SessionModel, draws: Draws, name: str, before: object, after: object) -> list[Action]:
    """The question that reads a changed answer: in the older conversation that said the fact (reopened from the
    list) where the answer there changed, else in a new conversation."""
    was = dict(before) if isinstance(before, tuple) else {}
    now = dict(after) if isinstance(after, tuple) else {}
    changed = sorted((k for k, v in now.items() if was.get(k) != v), key=lambda k: k[0] is None)
    if not changed:
        return []
    where, key = changed[0]
    if where is not None:
        move: list[Action] = [Reopen(name, conversation=where + 1)]
    else:
        move = [NewConversation(name)] if model.current(name) is not None else []
    return [*move, question(name, key, draws)]


def _steer(model: SessionModel, draws: Draws, names: list[str]) -> list[Action] | None:
    """Actions that show transitions not shown yet: of the kind of the next one still to show, the draw (after a
    move that makes its effect observable where it needs one: reopening an older conversation, starting a new one)
    that shows the most of them, found by trying draws on a copy of the model; a kind none of whose draws shows
    anything goes to the back."""
    fake = draws.fake
    alive = [n for n in names if model.alive(n)]
    # Kinds not drawn yet first: one draw then covers the kind too.
    draws.transitions.sort(key=lambda t: t[0] not in draws.kinds)
    for kind, _ in list(draws.transitions[:STEER_TRIES]):
        wanted = {read for k, read in draws.transitions if k == kind}
        best: tuple[int, list[Action], tuple] | None = None
        for name in fake.random.sample(alive, len(alive)):
            for context in CONTEXTS:
                saved = draws.save()
                found = _trial(kind, name, context, model, draws, names)
                shows = len(wanted & found[1]) if found else 0
                if found and shows and (best is None or shows > best[0]):
                    best = (shows, found[0], draws.save())
                draws.restore(saved)
        if best:
            draws.restore(best[2])
            return best[1]
        for transition in [t for t in draws.transitions if t[0] == kind]:
            draws.transitions.remove(transition)
            draws.transitions.append(transition)
    return None


def _trial(kind: str, name: str, context: str, model: SessionModel, draws: Draws,
           names: list[str]) -> tuple[list[Action], set[str]] | None:
    """A draw of `kind` by `name` after the `context` move, on a copy of the model: the actions and the reads they
    change."""
    trial = copy.deepcopy(model)
    moves: list[Action] = []
    if context == "reopen an older conversation":
        listed = trial.listed(name)
        older = [i for i in listed[1:] if i != trial.current(name)]  # not the most recent one
        if not older:
            return None
        moves.append(Reopen(name, conversation=draws.fake.random_element(older) + 1))
    elif context == "start a conversation":
        if trial.current(name) is None:
            return None
        moves.append(NewConversation(name))
    if not trial.alive(name) or not _may(kind, trial, name, draws):
        return None  # (an account is opened again as the follow-up of its deletion)
    try:
        for move in moves:
            trial.apply(move)
        action = _draw(kind, name, trial, draws)
        if action is None or VARIANTS.get(action.kind, action.kind) != kind:
            return None
        who = [name] if action.user else names
        before = observe(trial, who)
        trial.apply(action)
        for other in trial.expired_sessions():
            trial.signed_in_again(other)
    except NotApplicable:
        return None
    return [*moves, action], {read for _, read in changes(before, observe(trial, who))}


def _draw(kind: str, name: str, model: SessionModel, draws: Draws) -> Action | None:
    """One action of `kind` by `name` that fits the model's state, or None when none fits; once a session, drawn
    in another way of doing it where one is still to draw and fits (Kind.variant_of)."""
    for way in draws.variants_of(kind):
        action = rule_for(way).draw(way, name, model, draws) if _may(way, model, name, draws) else None
        if action is not None:
            draws.variants.remove(way)
            return action
    return rule_for(kind).draw(kind, name, model, draws)


def _may(kind: str, model: SessionModel, name: str, draws: Draws) -> bool:
    """Whether the user may take a move of this kind now (its precondition)."""
    return rule_for(kind).precondition(kind, model, name, draws)


def _taker(kind: str, name: str, model: SessionModel, draws: Draws) -> str | None:
    """Who takes the move: the user drawn where she may, else another who may, if anyone may."""
    can = [u for u in model.users if model.alive(u) and _may(kind, model, u, draws)]
    return name if name in can else (draws.fake.random_element(can) if can else None)


def _follow_ups_of(action: Action, model: SessionModel, draws: Draws, left_out: dict[str, str]) -> list[FollowUp]:
    """What the user does soon after taking something back (or deleting their account), drawn from the state before
    the action."""
    return rule_of(action).follow_ups(action, model, draws, left_out)


def _follow_up(model: SessionModel, draws: Draws) -> Action | None:
    """The next follow-up, when it still fits the model's state (else it is dropped)."""
    follow = draws.follow_ups.pop(0)
    return rule_for(follow.kind).follow_up(follow, model, draws)
