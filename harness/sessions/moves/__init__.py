"""The moves of the generated sessions, one module each (harness.sessions.rules.Rule, as its module's `RULE`): found
here by their modules, so that a new move is one new module and nothing else."""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any

from harness.sessions.actions import Action
from harness.sessions.rules import PARTS, NotApplicable, Rule


def _found() -> list[Rule[Any]]:
    """Every module's move, in the order of the modules' names; a module whose name starts with "_" holds what
    several moves share."""
    rules = []
    for module in pkgutil.iter_modules(__path__):
        if module.name.startswith("_"):
            continue
        rule = importlib.import_module(f"{__name__}.{module.name}").RULE
        unknown = (rule.writes | rule.reads) - PARTS
        if unknown:
            raise ValueError(f"the move of {__name__}.{module.name} names no part of the model's state: "
                             f"{', '.join(sorted(unknown))}; the parts: {', '.join(sorted(PARTS))}")
        rules.append(rule)
    return rules


RULES = _found()
_BY_ACTION = {rule.action: rule for rule in RULES}
_BY_KIND = {kind.name: rule for rule in RULES for kind in rule.kinds}


def rule_of(action: Action) -> Rule[Any]:
    """The move an action is one of."""
    if type(action) not in _BY_ACTION:
        raise NotApplicable(f"the model knows no action {type(action).__name__}")
    return _BY_ACTION[type(action)]


def rule_for(kind: str) -> Rule[Any]:
    """The move that draws a kind of action."""
    if kind not in _BY_KIND:
        raise ValueError(f"unknown action kind {kind!r}")
    return _BY_KIND[kind]
