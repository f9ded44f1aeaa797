"""Steps of generated_sessions.feature: a seeded run of many users' actions, compared with the model after each.
The session is the `generated_session` fixture (harness.sessions.runner.GeneratedSession)."""

from __future__ import annotations

import json

import pytest
from pytest_bdd import given, parsers, then, when

from harness import report
from harness.answers import AnswerCheck
from harness.drivers.base import Capability
from harness.sessions.actions import script
from harness.sessions.generator import Limits, generate
from harness.sessions.runner import GeneratedSession, Person, SessionRunner
from harness.suite_options import ROOT
from steps.world import World

SUMMARIES = ROOT / "reports" / "generated-sessions"


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
    return left_out


@given(parsers.re(r"^a seeded session of (?P<count>\d+) actions by (?P<users>\d+) users$"),
       converters={"count": int, "users": int}, target_fixture="generated_session")
def seeded_session(world: World, answers: AnswerCheck, count: int, users: int) -> GeneratedSession:
    """Draws a session of that many actions by that many users from the run's seed, of the kinds the app supports."""
    left_out = left_out_kinds(world)
    if "let time pass" not in left_out:
        world.use_app(world.app.with_settings(Capability.MOVABLE_CLOCK, clock="settable"))
    limits = world.app.target.limits
    plan = generate(str(world.data.seed), count, users, left_out,
                    limits=Limits(limits.get("retention_days"), limits.get("session_days"),
                                  world.app.target.longest_message, limits.get("longest_fact")))

    def join(name: str, email_local: str, tag: str, domain: str) -> Person:
        actor = world.create_user(name, email_local, domain=domain, tag=tag)
        actor.sign_in_to_stay()
        return actor

    session = GeneratedSession(plan, SessionRunner(world.app, plan, join, answers, world.data.unique_tag))
    print(session.report().splitlines()[0])
    report.attach_text("generated actions", script(plan.users, plan.actions))
    return session


@when("the users act it out, each in their own browser")
def act_out(generated_session: GeneratedSession, pytestconfig: pytest.Config) -> None:
    """The users act the session out, compared with the model after every action; a failure is shrunk."""
    generated_session.act_out(shrink_budget_s=pytestconfig.getoption("--shrink-seconds"))


@then("everything each user was told is remembered exactly as the model says")
def remembered_as_modelled(world: World, generated_session: GeneratedSession) -> None:
    """No difference from the model; else the seed, the action, the difference and the shrunk actions."""
    plan = generated_session.plan
    SUMMARIES.mkdir(parents=True, exist_ok=True)
    name = f"{world.app.target.name}-seed{plan.seed}-{len(plan.actions)}x{len(plan.users)}.json"
    summary = generated_session.summary(world.app.target.name)
    (SUMMARIES / name).write_text(json.dumps(summary, indent=2, ensure_ascii=False) + "\n")
    text = generated_session.report()
    report.attach_text("generated session result", text)
    print(text)
    if generated_session.difference is not None:
        raise AssertionError(text)
