"""Acting a generated session out and comparing the app with the model after every action: the answer after each
turn; after every other action, the acting user's memories, their conversation list and every turn of every
conversation through the API, the history shown when a conversation is reopened, the list shown after signing in
again; after what a user takes back, the memories shown to them, searches by the old and the new text, and a deleted
conversation refused at its address; after a clear-all, every few actions and at the end, every user's state, and
that nobody's API opens another's conversation.

The runner acts through `Actor`s (harness.users.actor: a user in a browser, or through the app's API) that the
scenario's world gives it, and asks the app itself through its handle. Each action is acted out by its move
(harness/sessions/moves/: `perform`); the runner holds the session's accounts and what the moves read with (a user's
state, everyone's, a sign-in, a conversation shown). After a turn it goes straight on, as users do: an app that
still has to persist what the turn said must do it before the page is closed or the next question is asked, not
while a test waits."""

from __future__ import annotations

import re
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from playwright.sync_api import Error as PlaywrightError

from harness.app.app_handle import AppHandle
from harness.app.target import KnownDefect
from harness.drivers.base import Account, Capability, HeldSessions, Hit, Memory, UserSession
from harness.sessions.actions import Action, script
from harness.sessions.generator import FULL_CHECK_EVERY, Plan
from harness.sessions.model import NotApplicable, SessionModel
from harness.sessions.moves import rule_of
from harness.sessions.pairs import PairTracker, read_after
from harness.sessions.rules import Difference
from harness.sessions.shrink import shrink
from harness.suite import report
from harness.users.actor import Actor
from harness.vocabulary.answers import AnswerCheck
from harness.vocabulary.order import Span, out_of_order
from harness.vocabulary.polling import Timeout, wait_until
from harness.vocabulary.turn import Turn

MEMORY_WAIT_S = 10  # how long the app may take to list a memory once the turn that told it is answered
# The read whose app side a declared difference hands to the model: a user's memories, as listed.
ADOPTABLE = "memories"
SEARCH = "search for "  # a read of the user's search, for one memory's text: its app side is what it found
PAGE_WAIT_S = 10  # how long a page may take to show a conversation it opened
SEARCHES_PER_CHECK = 6  # memories searched by their own text at each check of a user, newest first, then in turn


# Opens an actor, signed in: (the app as the runner has it now, name, e-mail local part, tag that makes the address
# unique to one run, domain). The app is given at each call: after a restart the session acted out, the old handle's
# admin token is refused (a shrinking replay's new accounts after a restart were refused so, hiding the difference).
Join = Callable[[AppHandle, str, str, str, str], Actor]


@dataclass
class Member:
    """One of the session's users as the app knows them: the actor and their conversations' ids."""

    actor: Actor
    ids: list[str] = field(default_factory=list)  # the app's id of the model's n-th conversation


class SessionRunner:
    def __init__(self, app: AppHandle, plan: Plan, join: Join, answers: AnswerCheck,
                 new_tag: Callable[[], str], use_app: Callable[[AppHandle], AppHandle] | None = None,
                 declared: KnownDefect | None = None) -> None:
        self.app = app
        # Where the scenario goes on with the app once the runner has restarted it (the world's `use_app`), so that the
        # users' actors act on the app as it runs now; None: the runner's own handle only.
        self.use_app = use_app
        self.plan = plan
        self.join = join
        self.answers = answers
        self.new_tag = new_tag
        self.retention_days = app.target.limits.retention_days
        self.session_days = app.target.limits.session_days
        self.memory_listing = app.target.recall.memory_listing
        self.members: dict[str, Member] = {}
        self.model = self.new_model()
        self.tag = ""  # makes this run's addresses unique (a shrinking replay opens new accounts)
        self._accounts: list[Account] = []  # every account a run opened, deleted before the next run
        self.previous: Action | None = None
        self._searched: dict[str, int] = {}  # user -> how many of their memories were searched so far (a cursor)
        # The app's timestamps of its memories have this resolution: memories it made within it may be listed
        # either way. When each was made is known as a span of the suite's clock: from the start of the action that
        # told it to the first check that saw it listed (an app that writes memories after the turn says no more).
        self.resolution_s = app.target.limits.clock_resolution_s
        self._action_started: dict[int, float] = {}  # the model's action number -> when the suite began acting it
        self._first_listed: dict[int, float] = {}  # the action number of a memory's newest statement -> first seen
        self.failed: dict[str, int] = {}  # user -> the number of the failure her next action goes on from
        self.acted: set[str] = set()  # users who acted since their state was last checked
        # Users whose page asked them to sign in after time passed: each signs in at her next action (one who does
        # not act again before the end or the next days signs in for nothing; the form is shown either way).
        self.to_sign_in: set[str] = set()
        # The difference the target declares a known defect of the app (a read and a pattern), if any: where it shows,
        # it is recorded, the app's side of that read becomes the model's, and the session goes on to its end.
        self.declared = declared
        self.shown: list[Difference] = []  # the declared differences that showed, in order
        # user -> the ids of memories no longer listed that her search may find: a declared difference's (the app's
        # side of the search taken as the model's), which would otherwise show again at every check after it
        self.found_unlisted: dict[str, set[str]] = {}
        # Each check the session could not make, with why (the report and the session's JSON list them).
        self.not_checked: dict[str, str] = {}
        self.pairs = PairTracker(plan.users)  # the pairs of actions this run covered, so far

    def new_model(self) -> SessionModel:
        return SessionModel(self.plan.users, self.retention_days, self.memory_listing, self.session_days,
                            self.app.target.forgetting)

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
        for member in self.members.values():
            member.actor.leave()
        for account in self._accounts:  # a replay must not find an earlier run's users (nor recall their memories)
            self.app.delete_user(account)
        self._accounts = []
        self.model = self.new_model()
        self.previous = None
        self._action_started, self._first_listed, self.failed, self.acted = {}, {}, {}, set()
        self.to_sign_in = set()
        self.shown, self.found_unlisted = [], {}
        self.pairs = PairTracker(self.plan.users)
        self.tag = self.new_tag()
        self.members = {name: self.new_member(name) for name in self.plan.users}
        for number, action in enumerate(actions, 1):
            try:
                difference = self._step(number, action)
            except (AssertionError, PlaywrightError) as e:
                lines = [line.strip() for line in str(e).splitlines() if line.strip()]
                waited = [line for line in lines if line.startswith("- waiting for")][:1]  # which element
                what_failed = " | ".join(lines[:3] + waited) or type(e).__name__
                difference = Difference(number, action, f"{action.user or 'the app'}'s app behaviour",
                                        "the action to complete", what_failed)
            difference = self._unless_declared(difference)
            if difference:
                return difference
            self.pairs.acted(number, action, read_after(action, number, self.plan.read_after, FULL_CHECK_EVERY))
            self.previous = action
        return self._unless_declared(self.check_everyone(len(actions), actions[-1] if actions else None))

    def _unless_declared(self, difference: Difference | None) -> Difference | None:
        """The difference, unless it is the one the target declares: that one is recorded, the app's side of its read
        taken as the model's from then on (a user's memories; an answer or a refusal leaves the model as it is), and
        everyone checked again for any other difference."""
        for _ in range(len(self.plan.users) * 2 + 1):  # each user's memories taken over at most once a check
            if difference is None or not self._declared_shows(difference):
                return difference
            self.shown.append(difference)
            difference = self.check_everyone(difference.number, difference.action)
        return difference

    def _declared_shows(self, difference: Difference) -> bool:
        declared = self.declared
        if (declared is None or not re.fullmatch(declared.read, difference.category)
                or not declared.matches(difference.describe())):
            return False
        name = difference.what.partition("'s ")[0]
        if difference.category == ADOPTABLE:  # only memories the user told can be taken over
            return self.model.adopt_memories(name, list(difference.actual))
        if difference.category.startswith(SEARCH) and difference.ids:  # what it found, found again from now on
            self.found_unlisted.setdefault(name, set()).update(difference.ids)
        return True

    def note_not_checked(self, check: str, why: str) -> None:
        """A check the session cannot make on the target, with why: reported once."""
        if check not in self.not_checked:
            self.not_checked[check] = why
            report.attach_text("not checked", f"{check}: {why}")

    def new_member(self, name: str) -> Member:
        """The user joined with a new account of this run's (at the start, and when her account is opened again)."""
        actor = self.join(self.app, name, self.plan.email_locals[name], self.tag,
                          self.plan.email_domains.get(name, "x.test"))
        self._accounts.append(actor.account)
        return Member(actor)

    def _step(self, number: int, action: Action) -> Difference | None:
        if action.user in self.to_sign_in:
            difference = self._sign_in_asked(number, action, action.user)
            if difference:
                return difference
        if action.user:
            self.acted.add(action.user)
        rule = rule_of(action)
        if not rule.failure and action.user in self.failed:  # her next action after a failure
            self.failed.pop(action.user)
            return self._step(number, action) or self._after_going_on(number, action)
        return rule.perform(self, number, action)

    def applied(self, action: Action) -> str | None:
        """The action applied to the model, each action number it takes dated by when the suite began acting it out;
        the reply it must get, for a turn."""
        numbered_from, started = self.model.seq + 1, time.monotonic()
        expected = self.model.apply(action)
        for seq in range(numbered_from, self.model.seq + 1):  # several for an action of many conversations
            self._action_started[seq] = started
        return expected

    def check_after(self, number: int, action: Action, everyone: bool = False) -> Difference | None:
        """The read after an action: everyone's state after one that touched everyone, and every FULL_CHECK_EVERY
        actions; else the acting user's."""
        if everyone or self.full_check_due(number):
            return self.check_everyone(number, action)
        return self.check_user(number, action, action.user)

    @staticmethod
    def full_check_due(number: int) -> bool:
        """Whether everyone's state is read after this action, whatever it was."""
        return number % FULL_CHECK_EVERY == 0

    def _sign_in_asked(self, number: int, action: Action, name: str) -> Difference | None:
        """The user signs in on the form her page showed when time had passed, before her next action."""
        self.to_sign_in.discard(name)
        actor = self.members[name].actor
        actor.sign_in_again()
        if not actor.is_signed_in():
            return Difference(number, action, f"{name}'s sign-in", "signed in", "asked to sign in")
        self.model.signed_in_again(name)
        return None

    @staticmethod
    def marked_open(number: int, action: Action, actor: Actor, conversation_id: str) -> Difference | None:
        """The page's list marks the conversation open as the current one, and only it (where the target declares
        how it marks it): what a screen reader announces as the page the user is on."""
        marked = actor.conversations_marked_open()
        if marked is None or marked == [conversation_id]:
            return None
        return Difference(number, action, f"{action.user}'s conversation marked open in the list", [conversation_id],
                          marked)

    @staticmethod
    def history_shown(actor: Actor, expected: list[Turn]) -> list[Turn]:
        """The conversation as the page shows it once it has loaded what the model says it holds (a page that opens
        a conversation in place fills it in after its address changes), or as it shows it at the deadline."""
        try:
            return wait_until(actor.history, lambda shown: shown == expected, timeout=PAGE_WAIT_S,
                              what="the conversation's history on the page")
        except Timeout:
            return actor.history()

    def signed_in(self, number: int, action: Action, member: Member) -> Difference | None:
        actor = member.actor
        if not actor.is_signed_in():
            return Difference(number, action, f"{action.user}'s sign-in", "signed in", "asked to sign in")
        shown, expected = actor.identity_shown(), self.app.shown_identity(actor.account)
        if shown != expected:
            return Difference(number, action, f"{action.user}'s identity on the page", expected, shown)
        expected_list = [member.ids[i] for i in self.model.listed(action.user)]
        listed = actor.conversations_listed(len(expected_list))
        if listed != expected_list:
            return Difference(number, action, f"{action.user}'s conversation list on the page", expected_list, listed)
        return (self._titles(number, action, action.user, actor.conversation_titles_shown(), "on the page")
                or self._previews(number, action, action.user, actor.conversation_previews_shown, "on the page"))

    def open_entry(self, number: int, action: Action, member: Member) -> Difference | None:
        """The entry of the conversation the user just talked in, as her screen shows it once the reply is there (a
        page updates it in place): its title and preview, where the target declares them."""
        name, limits = action.user, self.app.target.limits
        index = self.model.current(name)
        if index is None or (limits.title_length is None and limits.preview_length is None):
            return None
        cid, actor = member.ids[index], member.actor
        expected: dict[str, str] = {}
        shown: dict[str, str | None] = {}
        if limits.title_length is not None:
            expected["title"] = self.model.title(name, index, limits.title_length)
            shown["title"] = actor.conversation_titles_shown().get(cid)
        if limits.preview_length is not None:
            expected["preview"] = self.model.preview(name, index, limits.preview_length)
            shown["preview"] = actor.conversation_previews_shown().get(cid)
        if shown != expected:
            return Difference(number, action, f"{name}'s entry of conversation {index + 1} in her list", expected,
                              shown)
        return None

    def _titles(self, number: int, action: Action | None, name: str, shown: dict[str, str],
                where: str) -> Difference | None:
        """What each entry of the user's conversation list shows as its title, where the target declares them."""
        length = self.app.target.limits.title_length
        if length is None:
            return None
        return self._entries(number, action, name, "titles", where, shown,
                             lambda i: self.model.title(name, i, length))

    def _previews(self, number: int, action: Action | None, name: str, read: Callable[[], dict[str, str]],
                  where: str) -> Difference | None:
        """Each entry's preview (the conversation's last message, cut), where the target declares previews."""
        length = self.app.target.limits.preview_length
        if length is None:
            if self.app.target.limits.title_length is None:  # the entries are not read at all: said once, as such
                return None
            self.note_not_checked("what each list entry previews",
                                  f"{self.app.target.path.name} declares no conversation previews "
                                  "([limits] preview_length)")
            return None
        return self._entries(number, action, name, "previews", where, read(),
                             lambda i: self.model.preview(name, i, length))

    def _entries(self, number: int, action: Action | None, name: str, what: str, where: str,
                 shown: dict[str, str], expect: Callable[[int], str]) -> Difference | None:
        ids = self.members[name].ids
        expected = {ids[i]: expect(i) for i in self.model.listed(name)}
        wrong = [cid for cid in {**expected, **shown} if expected.get(cid) != shown.get(cid)]
        if wrong:  # only the entries that differ, each on both sides
            return Difference(number, action, f"{name}'s conversation {what} {where}",
                              {cid: expected.get(cid) for cid in wrong}, {cid: shown.get(cid) for cid in wrong})
        return None

    def old_session_refused(self, number: int, action: Action, held: dict, after: str) -> Difference | None:
        # An app whose API the suite speaks can be asked about any held session; else it must sign out on its server.
        if not (self.app.offers(Capability.SERVER_SIGN_OUT) or self.app.offers(Capability.CHAT_API)):
            self.note_not_checked(f"the old session after {after}", self.app.why_not(Capability.SERVER_SIGN_OUT))
            return None
        if self.app.part(HeldSessions).accepts(self.app.running, held):
            return Difference(number, action, f"{action.user}'s old session after {after}", "refused", "accepted")
        return None

    # -- failures on the way, and going on after them in the same page ---------------------------------------------
    def _after_going_on(self, number: int, action: Action) -> Difference | None:
        """After the user's next action: her memories, list and every turn through the API; after a turn in the
        same page, also the conversation as her page shows it loaded again."""
        difference = self.check_user(number, action, action.user)
        index = self.model.current(action.user)
        if difference or not rule_of(action).turn or index is None:
            return difference
        actor = self.members[action.user].actor
        status = actor.open_by_address(self.members[action.user].ids[index])
        expected = list(self.model.conversations(action.user)[index])
        shown = self.history_shown(actor, expected)
        if status != 200 or shown != expected:
            return Difference(number, action, f"{action.user}'s history on the page loaded again after the failure",
                              expected, f"HTTP {status}: {shown}")
        return self.marked_open(number, action, actor, self.members[action.user].ids[index])

    # -- comparing with the model ----------------------------------------------------------------------------------
    def check_user(self, number: int, action: Action | None, name: str) -> Difference | None:
        """The user's memories, conversation list and every turn of every conversation, through the API."""
        self.acted.discard(name)
        if not self.model.alive(name):
            return None
        member = self.members[name]
        session = member.actor.session
        expected_memories = self.model.memories(name)
        member.actor.settle()
        try:
            memories = wait_until(session.memories, lambda found: self.listed_as_modelled(name, found),
                                  timeout=MEMORY_WAIT_S, what=f"{name}'s memories matching the model")
        except Timeout:
            return Difference(number, action, f"{name}'s memories", expected_memories,
                              [m.text for m in session.memories()])
        seen = time.monotonic()
        for _, newest in self.model.memory_actions(name):
            self._first_listed.setdefault(newest, seen)
        difference = self._search(number, action, name, session, memories)
        if difference:
            return difference
        difference = self._memory_setting(number, action, name, session)
        if difference:
            return difference
        expected_ids = [member.ids[i] for i in self.model.listed(name)]
        titles = session.conversation_titles() if self.app.target.limits.title_length is not None else None
        listed = list(titles) if titles is not None else session.conversation_ids()
        if listed != expected_ids:
            return Difference(number, action, f"{name}'s conversations", expected_ids, listed)
        difference = (self._titles(number, action, name, titles or {}, "through the API")
                      or self._previews(number, action, name, session.conversation_previews, "through the API"))
        if difference:
            return difference
        for index in sorted(self.model.listed(name)):
            turns = self.model.conversations(name)[index]
            stored = session.turns(member.ids[index])
            if stored != turns:
                return Difference(number, action, f"{name}'s turns of conversation {index + 1}", turns, stored)
        return None

    def _memory_setting(self, number: int, action: Action | None, name: str,
                        session: UserSession) -> Difference | None:
        """The user's memory switch as the app's API reads it back: as she last set it."""
        if not self.app.offers(Capability.MEMORY_SWITCH):
            self.note_not_checked("the memory setting read back",
                                  f"the {self.app.name} app offers its users no memory switch")
            return None
        setting = session.memory_setting()
        if setting is None:
            self.note_not_checked("the memory setting read back",
                                  f"the {self.app.name} driver reads no memory setting (the suite has not built it)")
            return None
        if setting != self.model.memory_on(name):
            return Difference(number, action, f"{name}'s memory setting", self.model.memory_on(name), setting)
        return None

    def listed_as_modelled(self, name: str, found: list[Memory]) -> bool:
        """Every memory of the model's, exactly as told, nothing else, in its order: where the app's clock cannot
        tell two apart (made within its resolution of each other, for all the suite knows), in either order."""
        listed, expected = [m.text for m in found], self.model.memories(name)
        if listed == expected:
            return True
        if not self.resolution_s or Counter(listed) != Counter(expected):
            return False
        now, made_at = time.monotonic(), dict[str, Span]()
        for text, (first, newest) in zip(expected, self.model.memory_actions(name), strict=True):
            span: Span = (self._action_started[first], self._first_listed.get(newest, now))
            known = made_at.get(text, span)  # one text told twice: the span of both
            made_at[text] = (min(known[0], span[0]), max(known[1], span[1]))
        return not out_of_order(listed, made_at, newest_first=False, resolution_s=self.resolution_s)

    def _search(self, number: int, action: Action | None, name: str, session: UserSession,
                memories: list[Memory]) -> Difference | None:
        """The app's search, for some of the user's memories by their own text: each comes first (or tied with one of
        identical text), and every hit is one of the user's memories listed now (nothing of another user, nothing
        forgotten or deleted)."""
        if not self.app.offers(Capability.MEMORY_SEARCH):
            self.note_not_checked("the memory search",
                                  f"the {self.app.name} app offers its users no search of their memories")
            return None
        if not memories:
            return None
        listed = {m.id for m in memories} | self.found_unlisted.get(name, set())
        start = self._searched.get(name, 0)
        turn = [memories[(start + i) % len(memories)] for i in range(min(SEARCHES_PER_CHECK - 1, len(memories)))]
        self._searched[name] = start + len(turn)
        for memory in dict.fromkeys([memories[-1], *turn]):
            hits = self._searched_for(name, session, memory, listed)
            strangers = [h for h in hits if h.id not in listed]
            if strangers:  # whose they are tells an isolation breach from a memory of hers that came back
                texts = [h.text for h in strangers]
                whose = ", not ones they took back" if self.model.taken_back(name, texts) else ""
                return Difference(number, action, f"{name}'s {SEARCH}{memory.text!r}",
                                  "only memories of theirs that are kept" + whose, texts,
                                  ids=tuple(h.id for h in strangers))
            if not hits or (hits[0].id != memory.id and hits[0].text != memory.text):
                return Difference(number, action, f"{name}'s {SEARCH}{memory.text!r}", f"{memory.text!r} first",
                                  [h.text for h in hits])
        return None

    def _searched_for(self, name: str, session: UserSession, memory: Memory, listed: set[str]) -> list[Hit]:
        """The search for a memory's own text, once it finds that memory first and only the user's listed ones, or as
        it stands after as long as the list was given: an app may write a memory's vector after the row its list
        reads (Open WebUI's memory review embeds what it changed, then upserts it), and its search is part of the
        same write."""
        seen: list[list[Hit]] = []

        def search() -> list[Hit]:
            seen.append(session.search(memory.text, k=self.app.recall_k))
            return seen[-1]

        def found(hits: list[Hit]) -> bool:
            return (bool(hits) and all(h.id in listed for h in hits)
                    and (hits[0].id == memory.id or hits[0].text == memory.text))
        try:
            return wait_until(search, found, timeout=MEMORY_WAIT_S, interval=0.5,
                              what=f"{name}'s search finding {memory.text!r} first")
        except Timeout:
            return seen[-1]

    def check_everyone(self, number: int, action: Action | None) -> Difference | None:
        """Every user's state, and that nobody's API opens any of another user's conversations (the isolation
        scenarios try every other read an API offers: UserSession.reads_of)."""
        alive = [n for n in self.plan.users if self.model.alive(n)]
        for name in alive:
            difference = self.check_user(number, action, name)
            if difference:
                return difference
        for name, other in zip(alive, alive[1:] + alive[:1], strict=True):
            if other == name:
                continue
            for conversation in self.members[other].ids:
                answer = self.members[name].actor.session.ask_for_conversation(conversation)
                if not answer.refused:
                    return Difference(number, action, f"{name}'s request for {other}'s conversation", "refused",
                                      f"HTTP {answer.status}")
        return None


@dataclass(frozen=True)
class GeneratedSession:
    """A drawn plan and the runner that acts it out; acting it out gives its outcome."""

    plan: Plan
    runner: SessionRunner
    at_once: bool = False  # acted out beside the other sessions, on an app of its own

    def head(self) -> str:
        """The plan in a line: its seed, size, users, the transitions it shows, and what it leaves out (and why)."""
        plan = self.plan
        return (f"generated session, seed {plan.seed}: {len(plan.actions)} actions by {', '.join(plan.users)} "
                f"(pytest ... --seed {plan.seed}); shows {len(plan.covered)} transitions of the model; left out: "
                + (", ".join(f"{k} ({why})" for k, why in plan.left_out.items()) or "nothing"))

    def transitions(self) -> str:
        """Each transition the plan shows, with the action that first shows it; then those it does not, with why."""
        plan = self.plan
        shown = [f"{number:>4}. {transition}" for transition, number in plan.covered.items()]
        not_shown = [f"      {transition}: {why}" for transition, why in plan.uncovered.items()]
        return "\n".join(["Transitions shown (action kind -> later read), by the action that first shows each:",
                          *shown, *(["Not shown:", *not_shown] if not_shown else [])])

    def act_out(self, shrink_budget_s: float) -> SessionOutcome:
        """Every action acted out and compared; the first difference, shrunk within the budget to the actions that
        reproduce it."""
        started = time.monotonic()
        difference = self.runner.run(self.plan.actions)
        seconds = time.monotonic() - started
        # (before a shrink runs again)
        shown, not_checked, pairs = tuple(self.runner.shown), dict(self.runner.not_checked), self.runner.pairs
        if difference is None:
            return SessionOutcome(self, None, seconds, [], shown, not_checked, pairs)
        failing = self.plan.actions[:max(difference.number, 1)]
        reproduction = failing
        category = difference.category
        user = difference.action.user if difference.action else ""
        if shrink_budget_s > 0 and len(failing) > 1:
            def still_fails(actions: list[Action]) -> bool:
                found = self.runner.run(actions)
                return found is not None and found.category == category

            only_theirs = [a for a in failing if a.user in (user, "")] if user else None
            reproduction = shrink(failing, still_fails, self.runner.valid, shrink_budget_s, only_theirs)
        return SessionOutcome(self, difference, seconds, reproduction, shown, not_checked, pairs)


@dataclass(frozen=True)
class SessionOutcome:
    """What acting a generated session out found: nothing, or its first difference and the actions that reproduce
    it; and what a failure must print."""

    session: GeneratedSession
    difference: Difference | None
    seconds: float
    reproduction: list[Action]
    declared_shown: tuple[Difference, ...] = ()  # the differences the target declares a known defect, as they showed
    not_checked: dict[str, str] = field(default_factory=dict)  # each check the session could not make -> why
    pairs: PairTracker | None = None  # the pairs of actions its run covered (up to its first difference)

    def summary(self, target: str) -> dict:
        """The run as `reports/generated-sessions/*.json` records it."""
        plan = self.session.plan
        return {"seed": plan.seed, "actions": len(plan.actions), "users": plan.users, "target": target,
                "seconds": round(self.seconds, 1), "passed": self.difference is None, "left_out": plan.left_out,
                **plan.counts(), "transitions": plan.transitions(),
                "pairs": self.pairs.report() if self.pairs else {"covered": [], "uncovered": []},
                "not_checked": [{"check": check, "why": why} for check, why in self.not_checked.items()],
                "known_defect": [d.describe() for d in self.declared_shown],
                "difference": self.difference.describe() if self.difference else None}

    def shown_as_declared(self) -> str:
        """The declared differences that showed (the session went on after each), in a few lines."""
        return "\n".join(f"known defect shown, {d.describe()}" for d in self.declared_shown)

    def report(self) -> str:
        head = self.session.head()
        if self.not_checked:
            head += "\nnot checked: " + "; ".join(f"{check} ({why})" for check, why in self.not_checked.items())
        if self.declared_shown:
            head += "\n" + self.shown_as_declared()
        if self.difference is None:
            return f"{head}\nevery action matched the model ({self.seconds:.1f} s)" + (
                ", but for the declared differences above" if self.declared_shown else "")
        plan = self.session.plan
        users = [u for u in plan.users if any(a.user == u for a in self.reproduction)] or plan.users
        shrunk = "" if len(self.reproduction) == self.difference.number else (
            f", shrunk to {len(self.reproduction)} of its first {self.difference.number}")
        # The difference again at the end, where a log's tail (CI's) shows it below a long reproduction.
        return (f"{head}\n{self.difference.describe()}\n\nActions that reproduce it{shrunk}:\n"
                + script(users, self.reproduction) + f"\n\nThe difference, again: {self.difference.describe()}")
