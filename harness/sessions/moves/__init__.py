"""The moves of the generated sessions, one module each (harness.sessions.rules.Rule, as its module's `RULE`): found
here by their modules, so that a new move is one new module and nothing else. Their kinds come in the orders below."""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from harness.sessions.actions import Action
from harness.sessions.rules import PARTS, Kind, NotApplicable, Rule

if TYPE_CHECKING:
    from harness.sessions.model import SessionModel

# The orders the seeded draws go through the kinds in, as the generator had them before the moves were modules of
# their own, so that every seed draws the session it drew then; a kind none lists (a new move's) comes after them.
# The kinds in the draw (their weights, the coverage still to draw, what the target leaves out):
DRAW_ORDER = ("tell", "tell several facts at once", "correct", "ask", "chat", "start a conversation",
              "reopen a conversation", "close and reopen the browser", "let time pass", "sign out and back in",
              "delete an account", "start many conversations", "delete a memory", "edit a memory",
              "clear all memories", "delete a conversation", "turn memory off", "turn memory on",
              "send refused by the app", "connection dropped mid-reply", "restart the app",
              "tamper with another user's data", "type wrong passwords at another's address", "open an account again")
# The transitions to show (each kind's effects, in the order they are sampled from):
EFFECT_ORDER = ("tell", "tell several facts at once", "correct", "ask", "chat", "start many conversations",
                "close and reopen the browser", "sign out and back in", "let time pass", "delete an account",
                "open an account again", "delete a memory", "edit a memory", "clear all memories", "turn memory off",
                "send refused by the app", "restart the app", "tamper with another user's data",
                "type wrong passwords at another's address", "connection dropped mid-reply", "delete a conversation",
                "turn memory on")
# What a short session draws first while several kinds still have something to cover:
COVER_ORDER = ("tell", "chat", "tell several facts at once", "correct", "ask", "let time pass")
# The kinds a user acts out on the app's page only (left out for users who speak through its API):
NEEDS_A_PAGE = ("close and reopen the browser", "sign out and back in", "send refused by the app",
                "connection dropped mid-reply", "say something, clicking Send twice",
                "tell, then start a new conversation before the answer shows", "send while the browser is offline")


def _found() -> list[Rule[Any]]:
    """Every module's move, in the order of the modules' names; a module whose name starts with "_" holds what
    several moves share."""
    rules = []
    for module in pkgutil.iter_modules(__path__):
        if module.name.startswith("_"):
            continue
        rule = importlib.import_module(f"{__name__}.{module.name}").RULE
        unknown = (rule.writes | rule.acts_on | rule.reads) - PARTS
        if unknown:
            raise ValueError(f"the move of {__name__}.{module.name} names no part of the model's state: "
                             f"{', '.join(sorted(unknown))}; the parts: {', '.join(sorted(PARTS))}")
        rules.append(rule)
    return rules


def _ordered(names: Iterable[str], order: tuple[str, ...]) -> list[str]:
    """`names` in `order`; those it does not list after them, as they come."""
    return sorted(names, key=lambda name: order.index(name) if name in order else len(order))


RULES = _found()
_BY_ACTION = {rule.action: rule for rule in RULES}
_BY_KIND = {kind.name: (rule, kind) for rule in RULES for kind in rule.kinds}
KINDS: tuple[Kind, ...] = tuple(_BY_KIND[name][1] for name in _ordered(_BY_KIND, DRAW_ORDER))
COVERING = tuple(_ordered(_BY_KIND, COVER_ORDER))  # the kinds in the order a short session covers them


def rule_of(action: Action) -> Rule[Any]:
    """The move an action is one of."""
    if type(action) not in _BY_ACTION:
        raise NotApplicable(f"the model knows no action {type(action).__name__}")
    return _BY_ACTION[type(action)]


def rule_for(kind: str) -> Rule[Any]:
    """The move that draws a kind of action."""
    if kind not in _BY_KIND:
        raise ValueError(f"unknown action kind {kind!r}")
    return _BY_KIND[kind][0]


def shown_as(action: Action, model: SessionModel) -> str:
    """The kind whose transitions an action shows (Rule.shows_as)."""
    return rule_of(action).shows_as(action, model)


def effects(model: SessionModel) -> dict[str, tuple[str, ...]]:
    """For each action kind, the reads its effect can change under the model's promises (the target's retention,
    session lifetime and documented choices): the pairs a short session must each show once. A test explores the
    model to keep this exact (every change it sees is here, and each pair here is seen)."""
    declared = {kind: reads for rule in RULES for kind, reads in rule.effects(model).items()}
    return {kind: declared[kind] for kind in _ordered(declared, EFFECT_ORDER)}
