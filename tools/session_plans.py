"""The generated sessions' plans as JSON, drawn without an app or a browser: for each target and form the steps draw
(the first seed's session in browsers, the other seeds' through the API, the long form), each seed's every action
(its class, fields, kind, character classes and Gherkin line), what the model replies to it and a digest of every
user's state after it, the transitions the plan shows and its counts. A change to harness/sessions/ that only moves
code leaves the dump identical byte for byte: compare one taken before with one taken after.

    python -m tools.session_plans --out before.jsonl [--seeds 1-40] [--long-seeds 1-10]
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from harness.app.app_handle import why_memories_cannot_be_busy
from harness.app.target import Target, load_target
from harness.drivers import load_driver
from harness.drivers.base import Capability
from harness.sessions.actions import Action
from harness.sessions.generator import SHORT_FORM, Plan, generate
from harness.sessions.model import NotApplicable, SessionModel
from harness.sessions.reads import observe
from harness.sessions.reads import unread as unread_reads
from harness.sessions.seeds import load_seeds
from steps.generated_session_steps import left_out_kinds

# (target, through the API, actions, users): the short form in browsers and through the API as the feature draws it
# (60 actions by 3 users), and its long form (300 by 4); memchat's and the targets that leave moves out (Khoj and
# Letta have no page, Open WebUI no movable clock and no failures on the way).
SHORT = [("memchat", False), ("memchat", True), ("khoj", True), ("letta", True), ("open-webui", False)]
LONG = [("memchat", False), ("khoj", True)]
LONG_FORM = (300, 4)


def left_out_and_unread(target: Target, through_api: bool) -> tuple[dict[str, str], dict[str, str]]:
    """What the steps leave out of the target's sessions, and the reads they cannot make, for an app the suite
    starts with its driver's capabilities."""
    driver = load_driver(target)
    def offers(capability: Capability) -> bool:
        return capability in driver.capabilities

    app = SimpleNamespace(offers=offers, name=driver.name, why_not=driver.why_not, started_by_suite=True,
                          target=target, why_store_cannot_be_busy=lambda: why_memories_cannot_be_busy(
                              target, offers, driver.why_not, has_database=True))
    left_out = left_out_kinds(SimpleNamespace(app=app), through_api)  # type: ignore[arg-type]
    unread = unread_reads(target)
    return left_out, unread


def plain(value: Any) -> Any:
    """A record as JSON: each dataclass with its class's name and its fields, in their order."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {"type": type(value).__name__,
                **{f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, frozenset | set):
        return sorted(plain(v) for v in value)
    return value


def action_record(action: Action) -> dict[str, Any]:
    return {"kind": action.kind, "classes": list(action.classes), "gherkin": action.gherkin(), **plain(action)}


def replayed(plan: Plan, target: Target, every_read: bool) -> list[dict[str, Any]]:
    """Each action applied to a fresh model as the runner applies it: the reply it must get, and a digest of what
    every user can read after it (the runner signs in again those whose sign-in ended); in the long form, of what
    the runner compares (every answer of hundreds of facts after each of hundreds of actions took seconds a plan)."""
    model = SessionModel(plan.users, target.limits.retention_days, target.recall.memory_listing,
                         target.limits.session_days, target.forgetting)
    steps: list[dict[str, Any]] = []
    for action in plan.actions:
        try:
            reply = model.apply(action)
        except NotApplicable as e:
            steps.append({"not applicable": str(e)})
            continue
        for name in model.expired_sessions():
            model.signed_in_again(name)
        # (a search's reads are sets: as sorted lists, the digest is the same whatever Python's hash seed)
        state = json.dumps(plain(observe(model, plan.users)), ensure_ascii=False) if every_read else repr(
            [(model.memories(u), model.listed(u), model.current(u), model.memory_on(u), model.sign_in_state(u),
              [len(turns) for turns in model.conversations(u)])
             for u in plan.users])
        steps.append({"reply": reply, "day": model.day, "seq": model.seq,
                      "state": hashlib.sha256(state.encode()).hexdigest()[:16]})
    return steps


def plan_record(plan: Plan, target: Target) -> dict[str, Any]:
    return {"seed": plan.seed, "users": plan.users, "email_locals": plan.email_locals,
            "email_domains": plan.email_domains, "left_out": plan.left_out,
            "actions": [action_record(a) for a in plan.actions], "transitions": plan.transitions(),
            "read_after": sorted(plan.read_after), "counts": plan.counts(),
            "model": replayed(plan, target, every_read=len(plan.actions) < LONG_FORM[0])}


def seeds_from(spec: str) -> list[str]:
    first, _, last = spec.partition("-")
    return [str(n) for n in range(int(first), int(last or first) + 1)]


def drawn(name: str, through_api: bool, count: int, users: int, seed: str) -> dict[str, Any]:
    """One seed's record: its plan as the steps draw it on the target, or the error its generation ends with."""
    target = load_target(name)
    left_out, unread = left_out_and_unread(target, through_api)
    head = {"target": name, "through_api": through_api, "count": count, "users": users, "seed": seed}
    try:
        plan = generate(seed, count, users, left_out, limits=target.limits, forgetting=target.forgetting,
                        memory_listing=target.recall.memory_listing, unread=unread)
    except ValueError as e:  # a generation error is part of what is drawn
        return {**head, "error": f"{type(e).__name__}: {e}"}
    return {**head, **plan_record(plan, target)}


def line(record: dict[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False) + "\n"


def plans(seeds: list[str], long_seeds: list[str]) -> Iterator[dict[str, Any]]:
    """One record per (target, form, seed), in a fixed order."""
    listed = load_seeds()
    own = [*dict.fromkeys([*listed.fixed, *(r.seed for r in listed.regressions)])]
    forms = [(name, api, (SHORT_FORM, 3), [*seeds, *own]) for name, api in SHORT]
    forms += [(name, api, LONG_FORM, [*long_seeds, *own]) for name, api in LONG]
    for name, through_api, (count, users), form_seeds in forms:
        for seed in form_seeds:
            yield drawn(name, through_api, count, users, seed)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--seeds", default="1-40", help="a range of seeds of the short forms, as 1-40")
    parser.add_argument("--long-seeds", default="1-10", help="a range of seeds of the long forms")
    args = parser.parse_args()
    digest = hashlib.sha256()
    with args.out.open("w", encoding="utf-8") as out:
        for record in plans(seeds_from(args.seeds), seeds_from(args.long_seeds)):
            text = line(record)
            out.write(text)
            digest.update(text.encode())
    print(f"{args.out}: sha256 {digest.hexdigest()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
