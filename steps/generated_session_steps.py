"""Steps of generated_sessions.feature: seeded runs of many users' actions, compared with the model after each.
The drawn sessions are handed on as `generated_sessions`, what acting them out found as `session_outcomes`
(harness.sessions.runner); the seeds are listed in harness/sessions/seeds.toml."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

import pytest
from pytest_bdd import given, parsers, then, when

from harness.app.app_handle import AppHandle
from harness.app.target import KnownDefect
from harness.drivers.base import Capability
from harness.sessions.actions import script
from harness.sessions.generator import generate
from harness.sessions.moves import NEEDS_A_PAGE
from harness.sessions.reads import unread as unread_reads
from harness.sessions.runner import GeneratedSession, SessionOutcome, SessionRunner
from harness.sessions.seeds import load_seeds
from harness.suite import report
from harness.suite.known_defects import DeclaredDifferences, declared_for
from harness.suite.options import ROOT
from harness.users.actor import Actor
from harness.users.hostile import cannot_tamper
from harness.vocabulary.answers import AnswerCheck
from harness.vocabulary.test_data import DEFAULT_SEED
from steps.world import World

SUMMARIES = ROOT / "reports" / "generated-sessions"
# A fresh app that starts within this many seconds is worth one per seed, so that the seeds' API users act at once.
FRESH_APP_S = 2.0
# What users take back, by the driver capability each needs.
TAKING_BACK = {Capability.MEMORY_DELETE: ("delete a memory",), Capability.MEMORY_EDIT: ("edit a memory",),
               Capability.MEMORY_CLEAR: ("clear all memories",),
               Capability.CONVERSATION_DELETE: ("delete a conversation",),
               Capability.MEMORY_SWITCH: ("turn memory off", "turn memory on")}


def left_out_kinds(world: World, through_api: bool = False) -> dict[str, str]:
    """Action kinds the app (or its API, for users who speak through it) cannot have acted out, with the one-line
    reason printed for each."""
    left_out = {}
    if not world.app.offers(Capability.MOVABLE_CLOCK):
        left_out["let time pass"] = world.app.why_not(Capability.MOVABLE_CLOCK)
    elif not world.app.started_by_suite:
        left_out["let time pass"] = "needs an app the suite starts (not --base-url)"
    if not world.app.target.has_pages or through_api:
        why = "these users speak through the app's API" if through_api else \
            f"the {world.app.target.name} target has none"
        for kind in NEEDS_A_PAGE:
            left_out[kind] = f"needs a web page, and {why}"
    elif world.app.target.cannot_fail_sends:
        for kind in ("send refused by the app", "connection dropped mid-reply", "send while the browser is offline"):
            left_out[kind] = world.app.target.cannot_fail_sends
    if "messages" not in world.app.target.api:  # (where the kind needs no page, left out above)
        left_out.setdefault("say something, clicking Send twice", (
            f"two clicks of Send need the {world.app.target.name} target's [api] messages (the address the page "
            "sends a turn to, whose request the second click meets on its way)"))
        left_out.setdefault("tell, then start a new conversation before the answer shows", (
            f"holding an answer back needs the {world.app.target.name} target's [api] messages (the address the page "
            "sends a turn to)"))
    if world.app.target.limits.sign_in_failures is None:
        left_out["type wrong passwords at another's address"] = (
            f"{world.app.target.path.name} declares no sign-in throttling ([limits] sign_in_failures)")
    elif not world.app.offers(Capability.PASSWORD_SIGN_IN):
        left_out["type wrong passwords at another's address"] = world.app.why_not(Capability.PASSWORD_SIGN_IN)
    if "type wrong passwords at another's address" in left_out:  # (and where time cannot pass: the generator's)
        left_out["lock another out with wrong passwords"] = left_out["type wrong passwords at another's address"]
    why_not = cannot_tamper(world.app.target)
    if why_not:
        left_out["tamper with another user's data"] = why_not
    if through_api:
        left_out["restart the app"] = "acted out in the first seed's session, in browsers (a restart takes seconds)"
    elif not world.app.started_by_suite or not world.app.offers(Capability.RESTART):
        left_out["restart the app"] = (world.app.why_not(Capability.RESTART) if world.app.started_by_suite else
                                       "needs an app the suite starts (not --base-url)")
    busy_why_not = world.app.why_store_cannot_be_busy()
    if busy_why_not:
        left_out["tell while the store is busy"] = busy_why_not
    for capability, kinds in TAKING_BACK.items():
        if not world.app.offers(capability):
            for kind in kinds:
                left_out[kind] = world.app.why_not(capability)
    return left_out


def at_once(world: World, through_api: bool, seeds: list[str]) -> bool:
    """Whether the seeds' sessions act at once, each on an app of its own (days pass on each one's own clock): users
    of the API only (a browser's page belongs to one thread), on an app whose clock moves, where a fresh app starts
    within FRESH_APP_S (so that an app per seed costs less than the seeds' turns it overlaps)."""
    started_in = world.app.running.started_in_s
    return (through_api and len(seeds) > 1 and world.app.started_by_suite and started_in is not None
            and started_in < FRESH_APP_S and world.app.offers(Capability.MOVABLE_CLOCK))


def seeds_of(world: World, which: str) -> list[str]:
    """The run's own seed (--seed), else the regression seeds found on this target and then the first listed; or
    the other listed seeds (none when --seed names another: only that seed's session runs)."""
    listed = load_seeds()
    own = world.data.seed
    if which == "first seed's session":
        return [str(own)] if own != DEFAULT_SEED else listed.in_browsers(world.app.target.name)
    if own != DEFAULT_SEED:
        pytest.skip(f"--seed {own} given: only that seed's session runs")
    return listed.through_api


@given(parsers.re(r"^the first seed's session of (?P<count>\d+) actions by (?P<users>\d+) users, each in their own "
                  r"browser$"), converters={"count": int, "users": int}, target_fixture="generated_sessions")
def first_seeds_session(world: World, answers: AnswerCheck, request: pytest.FixtureRequest, count: int,
                        users: int) -> list[GeneratedSession]:
    """The run's seed (--seed), else the regression seeds found on this target and the first listed, acted out in
    browsers where the app has a page."""
    return listed_sessions(world, answers, "first seed's session", count, users, through_api=False,
                           declared=declared_for(request.node))


@given(parsers.re(r"^the other seeds' sessions of (?P<count>\d+) actions by (?P<users>\d+) users, each through the "
                  r"app's API$"), converters={"count": int, "users": int}, target_fixture="generated_sessions")
def other_seeds_sessions(world: World, answers: AnswerCheck, request: pytest.FixtureRequest, count: int,
                         users: int) -> list[GeneratedSession]:
    """The other listed seeds, each acted out through the app's API."""
    return listed_sessions(world, answers, "other seeds' sessions", count, users, through_api=True,
                           declared=declared_for(request.node))


def listed_sessions(world: World, answers: AnswerCheck, which: str, count: int, users: int,
                    through_api: bool, declared: KnownDefect | None = None) -> list[GeneratedSession]:
    """Drawn from each seed alone, within the target's [limits], as its [recall] memory_listing and [forgetting]
    choices say; what the app (or the API) cannot act out, or the target does not say, is left out with one line
    each. Each plan shows every transition of the model it can, and prints them."""
    if through_api and not world.app.offers(Capability.CHAT_API):
        pytest.skip(f"the {world.app.name} driver does not chat through the app's API (Capability.CHAT_API)")
    left_out = left_out_kinds(world, through_api)
    if "restart the app" not in left_out:  # an app of the scenario's own: the others' go on unrestarted
        clock = {} if "let time pass" in left_out else {"clock": "settable"}
        world.use_app(world.app.fresh(Capability.RESTART, **clock))
    elif "let time pass" not in left_out:
        world.use_app(world.app.with_settings(Capability.MOVABLE_CLOCK, clock="settable"))
    target = world.app.target
    unread = unread_reads(target)

    def join(app: AppHandle, name: str, email_local: str, tag: str, domain: str) -> Actor:
        """A user's account on the app as the session's runner has it now (after a restart, the restarted one)."""
        actor = world.create_user(name, email_local, domain=domain, tag=tag, app=app, through_api=through_api)
        actor.sign_in_to_stay()
        return actor

    seeds = seeds_of(world, which)
    own_apps = at_once(world, through_api, seeds)
    sessions = []
    for i, seed in enumerate(seeds):
        plan = generate(seed, count, users, left_out, limits=target.limits, forgetting=target.forgetting,
                        memory_listing=target.recall.memory_listing, unread=unread)
        app = world.app.fresh(Capability.MOVABLE_CLOCK, clock="settable") if own_apps and i else world.app
        # (a restart the session acts out: the scenario goes on with the app restarted)
        runner = SessionRunner(app, plan, join, answers, world.data.unique_tag,
                               use_app=world.use_app if app is world.app else None,
                               declared=declared if declared and declared.read else None)
        runner.not_checked.update(unread)  # the reads the target gives the runner nothing to compare with
        session = GeneratedSession(plan, runner, at_once=own_apps)
        print(session.head())
        report.attach_text(f"generated actions, seed {seed}", script(plan.users, plan.actions))
        report.attach_text(f"transitions shown, seed {seed}", session.transitions())
        sessions.append(session)
    return sessions


@when("the users act them out", target_fixture="session_outcomes")
def act_out(generated_sessions: list[GeneratedSession], pytestconfig: pytest.Config,
            request: pytest.FixtureRequest) -> list[SessionOutcome]:
    """Each session acted out in turn (the target's regression seeds first), or all at once where each has an app of
    its own; each action compared with the model after it; a difference is shrunk (--shrink-seconds)."""
    # A target's known defect is already described with its reproduction: no minutes spent shrinking it on each run.
    budget = 0.0 if declared_for(request.node) else pytestconfig.getoption("--shrink-seconds")
    if len(generated_sessions) > 1 and all(session.at_once for session in generated_sessions):
        with ThreadPoolExecutor(max_workers=len(generated_sessions)) as pool:
            return list(pool.map(lambda session: session.act_out(shrink_budget_s=budget), generated_sessions))
    return [session.act_out(shrink_budget_s=budget) for session in generated_sessions]


@then("everything each user was told is remembered exactly as the model says")
def remembered_as_modelled(world: World, session_outcomes: list[SessionOutcome]) -> None:
    """No difference in any session: else each failing seed, its first difference and the actions that reproduce
    it."""
    SUMMARIES.mkdir(parents=True, exist_ok=True)
    failed = []
    for outcome in session_outcomes:
        plan = outcome.session.plan
        name = f"{world.app.target.name}-seed{plan.seed}-{len(plan.actions)}x{len(plan.users)}.json"
        (SUMMARIES / name).write_text(json.dumps(outcome.summary(world.app.target.name), indent=2,
                                                 ensure_ascii=False) + "\n")
        text = outcome.report()
        report.attach_text(f"generated session result, seed {plan.seed}", text)
        if outcome.pairs:
            report.attach_text(f"pairs of actions covered, seed {plan.seed}", outcome.pairs.text())
        print(text)
        if outcome.difference is not None:
            failed.append(text)
    if failed:
        raise AssertionError("\n\n".join(failed))
    shown = [outcome.shown_as_declared() for outcome in session_outcomes if outcome.declared_shown]
    if shown:  # only what the target declares of its app, and the sessions went on to their ends
        raise DeclaredDifferences("\n".join(shown))
