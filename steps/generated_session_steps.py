"""Steps of generated_sessions.feature: a seeded run of many users' actions, compared with the model after each."""

from __future__ import annotations

import json

import pytest
from pytest_bdd import given, parsers, then, when

from harness import report
from harness.drivers.base import Capability
from harness.sessions.actions import script
from harness.sessions.generator import generate
from harness.suite_options import ROOT
from steps.session_runner import GeneratedSession, SessionRunner
from steps.world import Scenario

SUMMARIES = ROOT / "reports" / "generated-sessions"


def left_out_kinds(world: Scenario) -> dict[str, str]:
    """Action kinds the driver cannot act out, with the one-line reason printed for each."""
    left_out = {}
    if Capability.MOVABLE_CLOCK not in world.driver.capabilities or world.apps is None:
        left_out["let time pass"] = (f"needs {Capability.MOVABLE_CLOCK.value}, which the {world.driver.name} "
                                     "driver does not offer" if world.apps is not None else "needs an app the suite "
                                     "starts (not --base-url)")
    return left_out


@given(parsers.re(r"^a seeded session of (?P<count>\d+) actions by (?P<users>\d+) users$"))
def seeded_session(world: Scenario, count: str, users: str) -> None:
    left_out = left_out_kinds(world)
    if "let time pass" not in left_out:
        world.use_variant(Capability.MOVABLE_CLOCK, clock="settable")
    plan = generate(str(world.data.seed), int(count), int(users), left_out,
                    world.target.recall.get("retention_days"))
    world.generated = GeneratedSession(plan, SessionRunner(world, plan))
    print(world.generated.report().splitlines()[0])
    report.attach_text("generated actions", script(plan.users, plan.actions))


@when("the users act it out, each in their own browser")
def act_out(world: Scenario, pytestconfig: pytest.Config) -> None:
    world.generated.act_out(shrink_budget_s=pytestconfig.getoption("--shrink-seconds"))


@then("everything each user was told is remembered exactly as the model says")
def remembered_as_modelled(world: Scenario) -> None:
    generated = world.generated
    plan = generated.plan
    summary = {"seed": plan.seed, "actions": len(plan.actions), "users": plan.users, "target": world.target.name,
               "seconds": round(generated.seconds, 1), "passed": generated.difference is None,
               "left_out": plan.left_out, **plan.counts(),
               "difference": generated.difference.describe() if generated.difference else None}
    SUMMARIES.mkdir(parents=True, exist_ok=True)
    name = f"{world.target.name}-seed{plan.seed}-{len(plan.actions)}x{len(plan.users)}.json"
    (SUMMARIES / name).write_text(json.dumps(summary, indent=2, ensure_ascii=False) + "\n")
    text = generated.report()
    report.attach_text("generated session result", text)
    print(text)
    if generated.difference is not None:
        raise AssertionError(text)
