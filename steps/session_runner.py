"""Acting a generated session out through the browser and the driver, and comparing the app with the model after
every action: the answer on the page after each turn; after every other action, the acting user's memories, their
conversation list and every turn of every conversation through the API, the history on the page when a conversation
is reopened, the list on the page after signing in again; every few actions and at the end, every user's state.

After a turn the runner goes straight on, as users do: an app that still has to persist what the turn said must do
it before the page is closed or the next question is asked, not while a test waits."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from playwright.sync_api import Error as PlaywrightError

from harness.drivers.base import Capability
from harness.polling import Timeout, wait_until
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
    script,
)
from harness.sessions.generator import Plan
from harness.sessions.model import NotApplicable, SessionModel
from harness.sessions.shrink import shrink
from steps.common_steps import answered, speak, start_new_conversation
from steps.cross_session_steps import reopen_own_browser, sign_in_in_own_profile
from steps.world import Actor, Scenario

FULL_CHECK_EVERY = 10  # actions between two checks of every user (the acting user is checked after each)
MEMORY_WAIT_S = 10  # how long the app may take to list a memory once the turn that told it is answered


@dataclass(frozen=True)
class Difference:
    """The first place the app and the model disagree."""

    number: int  # the action's number, from 1 (0: before the first action)
    action: Action | None
    what: str  # what was compared, e.g. "Ana's answer", "Ben's memories"
    expected: Any
    actual: Any

    @property
    def category(self) -> str:
        return self.what.split(" ", 1)[-1]

    def describe(self) -> str:
        where = f"action {self.number} ({self.action.gherkin()})" if self.action else "before the first action"
        return (f"{where}: the app and the model disagree on {self.what}\n  expected: {self.expected!r}\n"
                f"  actual:   {self.actual!r}")


@dataclass
class Person:
    """One of the session's users as the app knows them: their actor and their conversations' ids."""

    actor: Actor
    ids: list[str] = field(default_factory=list)  # the app's id of the model's n-th conversation


class SessionRunner:
    def __init__(self, world: Scenario, plan: Plan) -> None:
        self.world = world
        self.plan = plan
        recall = world.target.recall
        self.retention_days = recall.get("retention_days")
        self.memory_listing = recall.get("memory_listing", "every statement")
        self.people: dict[str, Person] = {}
        self.model = self.new_model()
        self.tag = ""
        self._accounts: list = []  # every account a run opened, deleted before the next run
        self._previous: Action | None = None

    def new_model(self) -> SessionModel:
        return SessionModel(self.plan.users, self.retention_days, self.memory_listing)

    def valid(self, actions: list[Action]) -> bool:
        model = self.new_model()
        try:
            for action in actions:
                model.apply(action)
        except NotApplicable:
            return False
        return True

    # -- acting out ------------------------------------------------------------------------------------------------
    def run(self, actions: list[Action]) -> Difference | None:
        """Act the actions out with new accounts and browsers; the first difference from the model, if any."""
        self._close_browsers()
        for account in self._accounts:  # a replay must not find an earlier run's users (nor recall their memories)
            self.world.driver.delete_user(self.world.app, account)
        self._accounts = []
        self.model = self.new_model()
        self._previous: Action | None = None
        self.tag = self.world.data.unique_tag()
        self.people = {name: self._join(name) for name in self.plan.users}
        for number, action in enumerate(actions, 1):
            try:
                difference = self._step(number, action)
            except (AssertionError, PlaywrightError) as e:
                lines = [line.strip() for line in str(e).splitlines() if line.strip()]
                waited = [line for line in lines if line.startswith("- waiting for")][:1]  # which element
                what_failed = " | ".join(lines[:3] + waited) or type(e).__name__
                difference = Difference(number, action, f"{action.user or 'the app'}'s app behaviour",
                                        "the action to complete", what_failed)
            if difference:
                return difference
            self._previous = action
        return self._check_everyone(len(actions), actions[-1] if actions else None)

    def _join(self, name: str) -> Person:
        actor = self.world.create_user(name, self.plan.email_locals[name], tag=self.tag)
        self._accounts.append(actor.account)
        sign_in_in_own_profile(self.world, actor)
        return Person(actor)

    def _close_browsers(self) -> None:
        for person in self.people.values():
            if person.actor.page is not None:
                self.world.browsers.close_browser(person.actor.page.context)
                person.actor.page = None

    def _step(self, number: int, action: Action) -> Difference | None:
        model = self.model
        if isinstance(action, PassTime):
            # Days pass between one action and the next: what the app was still writing has landed by then, with
            # today's date (the model dates each memory by the action that told it).
            difference = self._check_everyone(number - 1, self._previous)
            if difference:
                return difference
            model.apply(action)
            self.world.driver.advance_clock(self.world.app, action.days)
            return self._check_everyone(number, action)
        person = self.people[action.user]
        actor = person.actor
        starts_conversation = model.current(action.user) is None
        expected = model.apply(action)
        if isinstance(action, (Tell, Ask, Chat)):
            text = action.message if isinstance(action, Tell) else (
                action.question if isinstance(action, Ask) else action.text)
            reply = speak(actor, text)
            if starts_conversation:
                person.ids.append(actor.chat.conversation_id())
            if not answered(self.world, reply, expected or ""):
                return Difference(number, action, f"{action.user}'s answer", expected, reply)
            own = set(model.memories(action.user))
            foreign = [t for t in actor.recalled if t not in own]
            if foreign:
                return Difference(number, action, f"{action.user}'s recalled memories", sorted(own), actor.recalled)
            return self._check_everyone(number, action) if number % FULL_CHECK_EVERY == 0 else None
        if isinstance(action, NewConversation):
            start_new_conversation(actor)
        elif isinstance(action, Reopen):
            difference = self._reopen(number, action, person)
            if difference:
                return difference
        elif isinstance(action, ReopenBrowser):
            reopen_own_browser(self.world, actor)
            difference = self._signed_in(number, action, person)
            if difference:
                return difference
        elif isinstance(action, SignOutAndIn):
            actor.signed_out_of = actor.page.context.storage_state()
            actor.chat.sign_out()
            actor.login.expect_shown()
            difference = self._old_session_refused(number, action, actor, "signing out")
            if difference:
                return difference
            actor.login.open().log_in(actor.account.email, actor.account.password)
            difference = self._signed_in(number, action, person)
            if difference:
                return difference
        elif isinstance(action, DeleteAccount):
            actor.signed_out_of = actor.page.context.storage_state()
            had = (actor.session.conversation_ids(), [m.id for m in actor.session.memories()])
            self.world.driver.delete_user(self.world.app, actor.account)
            self.world.browsers.close_browser(actor.page.context)
            actor.page = None
            actor.close()
            return (self._old_session_refused(number, action, actor, "the account's deletion")
                    or self._nothing_left(number, action, actor, had) or self._check_everyone(number, action))
        elif isinstance(action, Rejoin):
            self.people[action.user] = self._join(action.user)
            return self._check_everyone(number, action)
        if number % FULL_CHECK_EVERY == 0:
            return self._check_everyone(number, action)
        return self._check_user(number, action, action.user)

    def _reopen(self, number: int, action: Reopen, person: Person) -> Difference | None:
        actor = person.actor
        conversation_id = person.ids[action.conversation - 1]
        if not actor.page.url.startswith(actor.app.base_url):
            actor.chat.open_new()
        actor.sidebar.open_by_id(conversation_id)
        actor.turns = list(self.model.conversations(action.user)[action.conversation - 1])
        shown = [(t.role, t.text) for t in actor.chat.history()]
        if shown != actor.turns:
            return Difference(number, action, f"{action.user}'s history on the page", actor.turns, shown)
        return None

    def _signed_in(self, number: int, action: Action, person: Person) -> Difference | None:
        actor = person.actor
        try:
            actor.chat.expect_signed_in()
        except AssertionError:
            if actor.login.is_shown():
                return Difference(number, action, f"{action.user}'s sign-in", "signed in", "asked to sign in")
            raise
        actor.turns = []
        shown, expected = actor.chat.signed_in_as(), self.world.driver.shown_identity(actor.account)
        if shown != expected:
            return Difference(number, action, f"{action.user}'s identity on the page", expected, shown)
        expected_list = [person.ids[i] for i in self.model.listed(action.user)]
        listed = actor.sidebar.ids_once_listed(len(expected_list))
        if listed != expected_list:
            return Difference(number, action, f"{action.user}'s conversation list on the page", expected_list, listed)
        return None

    def _old_session_refused(self, number: int, action: Action, actor: Actor, after: str) -> Difference | None:
        if Capability.SERVER_SIGN_OUT not in self.world.driver.capabilities:
            return None
        if self.world.driver.accepts(self.world.app, actor.signed_out_of or {}):
            return Difference(number, action, f"{action.user}'s old session after {after}", "refused", "accepted")
        return None

    def _nothing_left(self, number: int, action: Action, actor: Actor,
                      had: tuple[list[str], list[str]]) -> Difference | None:
        """Where the driver can read the app's store: no row of the deleted account is left in it."""
        if Capability.DATABASE_ACCESS not in self.world.driver.capabilities:
            return None
        remains = self.world.driver.remains_of(self.world.app, actor.account, *had)
        left = {kind: n for kind, n in remains.items() if n}
        if left:
            return Difference(number, action, f"what the store keeps of {action.user}'s deleted account", {}, left)
        return None

    # -- comparing with the model ----------------------------------------------------------------------------------
    def _check_user(self, number: int, action: Action | None, name: str) -> Difference | None:
        """The user's memories, conversation list and every turn of every conversation, through the API."""
        if not self.model.alive(name):
            return None
        person = self.people[name]
        session = person.actor.session
        expected_memories = self.model.memories(name)
        person.actor.settle()
        try:
            wait_until(lambda: [m.text for m in session.memories()], lambda texts: texts == expected_memories,
                       timeout=MEMORY_WAIT_S, what=f"{name}'s memories matching the model")
        except Timeout:
            return Difference(number, action, f"{name}'s memories", expected_memories,
                              [m.text for m in session.memories()])
        expected_ids = [person.ids[i] for i in self.model.listed(name)]
        listed = session.conversation_ids()
        if listed != expected_ids:
            return Difference(number, action, f"{name}'s conversations", expected_ids, listed)
        for index, turns in enumerate(self.model.conversations(name)):
            stored = [(t.role, t.text) for t in session.turns(person.ids[index])]
            if stored != turns:
                return Difference(number, action, f"{name}'s turns of conversation {index + 1}", turns, stored)
        return None

    def _check_everyone(self, number: int, action: Action | None) -> Difference | None:
        """Every user's state, and that nobody's API opens another user's conversation."""
        alive = [n for n in self.plan.users if self.model.alive(n)]
        for name in alive:
            difference = self._check_user(number, action, name)
            if difference:
                return difference
        for name, other in zip(alive, alive[1:] + alive[:1], strict=True):
            theirs = self.people[other].ids
            if other != name and theirs:
                answer = self.people[name].actor.session.ask_for_conversation(theirs[0])
                if not answer.refused:
                    return Difference(number, action, f"{name}'s request for {other}'s conversation", "refused",
                                      f"HTTP {answer.status}")
        return None


@dataclass
class GeneratedSession:
    """What the generated-session steps share: the plan, its result, and what a failure must print."""

    plan: Plan
    runner: SessionRunner
    difference: Difference | None = None
    seconds: float = 0.0
    reproduction: list[Action] = field(default_factory=list)

    def act_out(self, shrink_budget_s: float) -> None:
        started = time.monotonic()
        self.difference = self.runner.run(self.plan.actions)
        self.seconds = time.monotonic() - started
        if self.difference is None:
            return
        failing = self.plan.actions[:max(self.difference.number, 1)]
        self.reproduction = failing
        category = self.difference.category
        user = self.difference.action.user if self.difference.action else ""
        if shrink_budget_s > 0 and len(failing) > 1:
            def still_fails(actions: list[Action]) -> bool:
                found = self.runner.run(actions)
                return found is not None and found.category == category

            only_theirs = [a for a in failing if a.user in (user, "")] if user else None
            self.reproduction = shrink(failing, still_fails, self.runner.valid, shrink_budget_s, only_theirs)

    def report(self) -> str:
        plan = self.plan
        head = (f"generated session, seed {plan.seed}: {len(plan.actions)} actions by {', '.join(plan.users)} "
                f"(pytest ... --seed {plan.seed}); left out: "
                + (", ".join(f"{k} ({why})" for k, why in plan.left_out.items()) or "nothing"))
        if self.difference is None:
            return f"{head}\nevery action matched the model ({self.seconds:.1f} s)"
        users = [u for u in plan.users if any(a.user == u for a in self.reproduction)] or plan.users
        shrunk = "" if len(self.reproduction) == self.difference.number else (
            f", shrunk to {len(self.reproduction)} of its first {self.difference.number}")
        return (f"{head}\n{self.difference.describe()}\n\nActions that reproduce it{shrunk}:\n"
                + script(users, self.reproduction))
