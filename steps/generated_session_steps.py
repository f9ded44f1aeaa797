"""Steps of generated_sessions.feature: a seeded run of many users' actions, compared with the model after each.
The drawn session is handed on as `generated_session`, what acting it out found as `session_outcome`
(harness.sessions.runner)."""

from __future__ import annotations

import json

import pytest
from pytest_bdd import given, parsers, then, when

from harness import report
from harness.actor import Actor
from harness.answers import AnswerCheck
from harness.drivers.base import Capability
from harness.sessions.actions import script
from harness.sessions.generator import generate
from harness.sessions.runner import GeneratedSession, SessionOutcome, SessionRunner
from harness.suite_options import ROOT
from steps.world import World

SUMMARIES = ROOT / "reports" / "generated-sessions"
# What users take back, by the driver capability each needs.
TAKING_BACK = {Capability.MEMORY_DELETE: ("delete a memory",), Capability.MEMORY_EDIT: ("edit a memory",),
               Capability.MEMORY_CLEAR: ("clear all memories",),
               Capability.CONVERSATION_DELETE: ("delete a conversation",),
               Capability.MEMORY_SWITCH: ("turn memory off", "turn memory on")}


def left_out_kinds(world: World) -> dict[str, str]:
    """Action kinds the app cannot have acted out, with the one-line reason printed for each."""
    left_out = {}
    if not world.app.offers(Capability.MOVABLE_CLOCK):
        left_out["let time pass"] = (f"needs {Capability.MOVABLE_CLOCK.value}, which the {world.app.name} driver "
                                     "does not offer")
    elif not world.app.started_by_suite:
        left_out["let time pass"] = "needs an app the suite starts (not --base-url)"
    if not world.app.target.has_pages:
        for kind in ("close and reopen the browser", "sign out and back in"):
            left_out[kind] = f"needs a web page, and the {world.app.target.name} target has none"
    for capability, kinds in TAKING_BACK.items():
        if not world.app.offers(capability):
            for kind in kinds:
                left_out[kind] = f"needs {capability.value}, which the {world.app.name} driver does not offer"
    return left_out


@given(parsers.re(r"^a seeded session of (?P<count>\d+) actions by (?P<users>\d+) users$"),
       converters={"count": int, "users": int}, target_fixture="generated_session")
def seeded_session(world: World, answers: AnswerCheck, count: int, users: int) -> GeneratedSession:
    """Drawn from the run's seed alone (--seed), within the target's [limits], as its [recall] memory_listing and
    [forgetting] choices say; what the app cannot act out, or the target does not say, is left out with one line
    each."""
    left_out = left_out_kinds(world)
    if "let time pass" not in left_out:
        world.use_app(world.app.with_settings(Capability.MOVABLE_CLOCK, clock="settable"))
    target = world.app.target
    plan = generate(str(world.data.seed), count, users, left_out, limits=target.limits, forgetting=target.forgetting,
                    memory_listing=target.recall.memory_listing)

    def join(name: str, email_local: str, tag: str, domain: str) -> Actor:
        actor = world.create_user(name, email_local, domain=domain, tag=tag)
        actor.sign_in_to_stay()
        return actor

    runner = SessionRunner(world.app, plan, join, answers, world.data.unique_tag)
    runner.use_app = world.use_app  # a restart the session acts out goes on with the app restarted
    session = GeneratedSession(plan, runner)
    print(session.head())
    report.attach_text("generated actions", script(plan.users, plan.actions))
    return session


@when("the users act it out, each in their own browser", target_fixture="session_outcome")
def act_out(generated_session: GeneratedSession, pytestconfig: pytest.Config) -> SessionOutcome:
    """Each action acted out in turn, compared with the model after each; a difference is shrunk (--shrink-seconds)."""
    return generated_session.act_out(shrink_budget_s=pytestconfig.getoption("--shrink-seconds"))


@then("everything each user was told is remembered exactly as the model says")
def remembered_as_modelled(world: World, session_outcome: SessionOutcome) -> None:
    """No difference: else the seed, the first difference and the actions that reproduce it."""
    plan = session_outcome.session.plan
    SUMMARIES.mkdir(parents=True, exist_ok=True)
    name = f"{world.app.target.name}-seed{plan.seed}-{len(plan.actions)}x{len(plan.users)}.json"
    summary = session_outcome.summary(world.app.target.name)
    (SUMMARIES / name).write_text(json.dumps(summary, indent=2, ensure_ascii=False) + "\n")
    text = session_outcome.report()
    report.attach_text("generated session result", text)
    print(text)
    if session_outcome.difference is not None:
        raise AssertionError(text)
