"""Bench of the acceptance suite: how long it takes, and what the framework costs over a bare Playwright script.

1. The whole suite, serial and with `-n 2`: the wall time of the pytest process (its own databases and app included).
2. One full cross-session scenario, "Everything is still there after closing and reopening the browser", run through
   the suite against an app and databases this bench started once (`--base-url`, admin token in the environment),
   repeated in one pytest session (tools.suite_runs' MEMTEST_REPEAT); only the item's runtest protocol is timed
   (setup + call + teardown, as the plugin measures it). The first repetition also pays the session fixtures
   (Playwright, browser) and is reported apart as "cold"; the median of the others is compared with the same flow
   written as a bare Playwright script (below), timed the same way with the first run as warm-up. The bare script
   records the evidence the suite records (its trace, and the screenshots taken as a browser closes), so that the
   ratio is the suite's own cost, and runs without it too: framework overhead = suite scenario median / traced bare
   script median ("bare_ratio"); against the script without evidence "bare_untraced_ratio", and the evidence's own
   cost "trace_cost_ratio" (traced / untraced bare). Both are timed
   per phase (the scenario's steps, tools/bench_phases.py), in reports/bench/details.json and the console.
3. A signed-in context from a storage_state (cookies from the API login) against logging in through the form: median
   ms of creating the context and loading the first signed-in page.

4. The migration replay at 1k, 10k, 100k and 1M memories, each a fresh run on fresh databases
   (tools/bench_migration.py): generate, load, migrate, verify, total and peak PSS, and the machine's floor for
   each size beside them.

Writes reports/bench.json (keys "suite", "migration" and "machine": cores and versions; other top-level keys kept)
and reports/bench/details.json; prints the tables.

    python tools/bench_suite.py [--repeats 5] [--login-repeats 9] [--suite-runs 1] [--skip-suite] [--skip-migration]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import cast

from playwright.sync_api import BrowserContext, Locator, Page, Playwright, StorageState, expect, sync_playwright

from harness.app.app_handle import AppHandle
from harness.app.target import load_target
from harness.browser.chromium import chromium_version, find_chromium, playwright_chromium
from harness.drivers import load_driver
from harness.drivers.base import Account
from harness.services.databases import create_database, drop_database, provide_databases, redis_url_for_db
from pages.base import locate
from tools.bench_migration import bench_migration
from tools.bench_phases import OUTSIDE_STEPS, Phases, phase_rows, suite_phases
from tools.suite_runs import REPEAT_ENV, SuiteRun, format_table, median, rel

ROOT = Path(__file__).resolve().parent.parent

REPORTS = ROOT / "reports"
OUT = REPORTS / "bench"
JSON_PATH = REPORTS / "bench.json"
SCENARIO = ("features/cross_session_persistence.feature::"
            "test_everything_is_still_there_after_closing_and_reopening_the_browser")
FACT, QUESTION, ANSWER = "My order number is 4417.", "What is my order number?", "Your order number is 4417."
# The suite and the bare script take turns, so that a machine that slows down meanwhile (another tenant's load, CPU
# steal) weighs on both alike: one after the other, the ratio moved between 1.04 and 1.17 in three runs here.
ROUNDS = 3


# -- pure parts --------------------------------------------------------------------------------------------------------
def merge_bench(existing: dict | None, suite: dict, migration: dict | None = None,
                machine: dict | None = None) -> dict:
    """reports/bench.json with its "suite" (and "migration" and "machine", when measured) keys replaced, every
    other kept."""
    data = dict(existing) if isinstance(existing, dict) else {}
    data["suite"] = dict(suite)
    if migration is not None:
        data["migration"] = dict(migration)
    if machine is not None:
        data["machine"] = dict(machine)
    return data


def machine_facts(app: AppHandle, databases: str) -> dict:
    """What the figures were measured on: cores, and the versions of what ran."""
    from importlib.metadata import version

    choice = find_chromium(None, playwright_chromium())
    return {"cpus": os.cpu_count(), "python": platform.python_version(), "playwright": version("playwright"),
            "pytest": version("pytest"), "chromium": f"{chromium_version(choice.executable)} ({choice.source})",
            "app": app.driver.describe(app.running).get("app", app.name),
            "databases": databases}


def repetition_times(protocol_s: dict[str, float], nodeid: str) -> list[float]:
    """The runtest protocol times of `nodeid`'s repetitions ([rep0], [rep1], ...), in repetition order."""
    reps = []
    for node, seconds in protocol_s.items():
        m = re.fullmatch(re.escape(nodeid) + r"\[rep(\d+)\]", node)
        if m:
            reps.append((int(m.group(1)), seconds))
        elif node == nodeid:
            reps.append((0, seconds))
    return [s for _, s in sorted(reps)]


# -- the whole suite ---------------------------------------------------------------------------------------------------
def time_suite(label: str, extra: Sequence[str]) -> tuple[float, int, int]:
    """Wall time of `pytest features EXTRA`; with the numbers of passed and failed scenarios."""
    run = SuiteRun(label, ["features", *extra, "-q", "--alluredir", str(OUT / "allure" / label), "--clean-alluredir",
                           "--output", str(OUT / "playwright" / label)],
                   results_file=OUT / "results" / f"{label}.jsonl", log_file=OUT / "logs" / f"{label}.log").run()
    res = run.results
    return run.wall_s, len(res.passed), len(res.failed_or_errored)


# -- the scenario through the suite ------------------------------------------------------------------------------------
def scenario_through_suite(app: AppHandle, repeats: int, label: str = "scenario") -> list[float]:
    """Protocol seconds of each repetition of SCENARIO, run by the suite against `app` (which it did not start); its
    Allure results in reports/bench/allure/LABEL.

    Only --base-url and the admin token are passed: given --pg-dsn and --redis-url as well, the suite starts an
    app of its own on those databases and runs the scenario against that one instead (see the report)."""
    run = SuiteRun(label, [SCENARIO, "-q", "--base-url", app.base_url, "--alluredir",
                           str(OUT / "allure" / label), "--clean-alluredir",
                           "--output", str(OUT / "playwright" / label)],
                   results_file=OUT / "results" / f"{label}.jsonl", log_file=OUT / "logs" / f"{label}.log",
                   env={REPEAT_ENV: str(repeats), "MEMTEST_ADMIN_TOKEN": app.running.admin_token or ""}).run()
    res = run.results
    if res.failed_or_errored or not run.finished_normally:
        raise RuntimeError(f"the scenario failed through the suite (exit {run.returncode}); see {rel(run.log_file)}")
    times = repetition_times(res.protocol_s, SCENARIO)
    if len(times) != repeats:
        raise RuntimeError(f"expected {repeats} repetitions of the scenario, got {len(times)}; see {rel(run.log_file)}")
    return times


# -- the same flow as a bare Playwright script -------------------------------------------------------------------------
# Its phases carry the names of the scenario's steps, so that each is compared with the same step through the suite.
STEPS = ("Given Ana signs in through the login form in her own browser profile", "And Ana starts a new conversation",
         f'When Ana tells the assistant "{FACT}"', "And Ana closes the browser",
         "And Ana opens the browser again with the same profile", "Then Ana is still signed in",
         "And her conversation is listed", "When Ana opens the conversation from the conversation list",
         "Then the history shows every turn of the conversation in order", "When Ana starts a new conversation",
         f'And Ana asks "{QUESTION}"', f'Then the assistant answers "{ANSWER}"')


class Bare:
    """The cross-session flow with nothing but Playwright and the driver's API calls: no fixtures, page objects or
    report. Elements are found with the target's locators, so the same flow runs against any app. It checks what the
    scenario checks, each the plain way: signed in as the user (the name shown), the list the same as the API's
    conversations, the history turn by turn, the answer exactly, the app's own memory writes settled before asking.
    Traced (the default) it records the evidence the suite records of every browser: the trace (DOM snapshots and
    network, no screencast), saved when a browser closes mid-scenario with a screenshot of each of its pages
    (the suite takes them then, with --screenshot=only-on-failure, not knowing yet whether the scenario will fail),
    and dropped at the end, as for a passing scenario. Untraced, it records nothing."""

    def __init__(self, pw: Playwright, app: AppHandle, traced: bool = True) -> None:
        choice = find_chromium(None, playwright_chromium())  # the browser the suite finds
        self.pw = pw
        self.app = app
        self.base = app.base_url
        self.paths = app.target.api
        self.locators = app.target.locators
        self.launch = {"headless": True, **choice.launch_args()}  # the browser and flags the suite launches
        self.traced = traced
        self.phases = Phases()

    def el(self, root: Page | Locator, name: str) -> Locator:
        return locate(root, self.locators[name])

    def create_user(self) -> Account:
        email, password = f"bench+{uuid.uuid4().hex[:10]}@x.test", "pw-" + uuid.uuid4().hex
        return self.app.create_user("Bench", email, password)

    def open_profile(self, profile: str) -> tuple[BrowserContext, Page]:
        context = self.pw.chromium.launch_persistent_context(profile, **self.launch)
        if self.traced:
            context.tracing.start(title="bare", screenshots=False, snapshots=True, sources=False)
        return context, (context.pages[0] if context.pages else context.new_page())

    def close(self, context: BrowserContext, trace_to: Path | None = None) -> None:
        if self.traced:
            context.tracing.stop(path=trace_to) if trace_to else context.tracing.stop()
            if trace_to:  # the suite's evidence of a browser closed mid-scenario: its trace and its pages' screenshots
                for n, page in enumerate(context.pages):
                    page.screenshot(path=trace_to.with_suffix(f".{n}.png"), type="png")
        for page in list(context.pages):
            page.close()  # pagehide: the page flushes what it still meant to write
        context.close()

    def send(self, page: Page, text: str) -> str:
        replies = self.el(self.el(page, "messages"), "assistant_message")
        before = replies.count()
        self.el(page, "message_input").fill(text)
        self.el(page, "send").click()
        reply = replies.nth(before)
        expect(reply).to_be_visible()
        return self.el(reply, "message_text").first.inner_text()

    def sign_in(self, page: Page, account: Account) -> None:
        page.goto(self.base + self.paths["login_page"])
        self.el(page, "login_email").fill(account.email)
        self.el(page, "login_password").fill(account.password)
        self.el(page, "login_submit").click()
        expect(self.el(page, "message_input")).to_be_editable()
        expect(self.el(page, "current_user").first).to_be_visible()

    def flow(self) -> None:
        self.phases = phase = Phases()
        signs_in, starts, tells, closes, reopens, signed_in, listed, opens, history, new, asks, answers = STEPS
        profile = tempfile.mkdtemp(prefix="bench-profile-", dir="/tmp")
        conversation_url = re.compile(re.escape(self.paths["conversation_page"]).replace(
            re.escape("{conversation_id}"), "[^/?#]+") + "$")
        account, context, session = None, None, None
        try:
            with phase(signs_in):
                account = self.create_user()
                context, page = self.open_profile(profile)
                self.sign_in(page, account)
            with phase(starts):
                pass  # the sign-in lands on a new conversation
            with phase(tells):
                first = self.send(page, FACT)
                expect(page).to_have_url(conversation_url)
                conversation = page.url.rstrip("/").rsplit("/", 1)[-1]
            with phase(closes):
                self.close(context, trace_to=Path(profile + "-trace.zip"))
            with phase(reopens):
                context, page = self.open_profile(profile)
                page.goto(self.base + self.paths["home_page"])
            with phase(signed_in):
                expect(self.el(page, "message_input")).to_be_editable()
                assert not self.el(page, "login_submit").is_visible(), "signed out after reopening"
                shown = self.el(page, "current_user").first.inner_text().strip()
                assert shown == self.app.shown_identity(account), f"signed in as {shown!r}"
            with phase(listed):
                items = self.el(self.el(page, "conversation_list"), "conversation_item")
                expect(items.first).to_be_visible()
                ids = [(a.get_attribute("href") or "").rstrip("/").rsplit("/", 1)[-1] for a in items.all()]
                assert conversation in ids, f"{conversation} not listed: {ids}"
                session = self.app.session(account)
                assert ids == session.conversation_ids(), f"listed {ids}, the API's {session.conversation_ids()}"
            with phase(opens):
                items.and_(page.locator(f'[href$="/{conversation}"]')).click()
                expect(page).to_have_url(re.compile(re.escape(conversation) + "$"))
            with phase(history):
                messages = self.el(self.el(page, "messages"), "message")
                expect(messages).to_have_count(2)
                texts = [self.el(m, "message_text").first.inner_text() for m in messages.all()]
                assert texts == [FACT, first], texts
            with phase(new):
                self.el(page, "new_conversation").click()
                page.wait_for_url(self.base + self.paths["home_page"])
                expect(self.el(page, "message_input")).to_be_editable()
                if self.app.writes_memories_later:
                    self.app.settle(session, 1)
            with phase(asks):
                answer = self.send(page, QUESTION)
            with phase(answers):
                assert answer == ANSWER, f"the assistant answered {answer!r}"
        finally:
            with phase(OUTSIDE_STEPS):
                if context is not None:
                    self.close(context)
                if session is not None:
                    session.close()
                shutil.rmtree(profile, ignore_errors=True)
                for evidence in Path(profile).parent.glob(Path(profile).name + "-trace.*"):
                    evidence.unlink()
                if account is not None:
                    self.app.delete_user(account)


def timed(fn: Callable[[], object]) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


# -- storage_state against the login form ------------------------------------------------------------------------------
def login_times(pw: Playwright, app: AppHandle, repeats: int) -> tuple[list[float], list[float]]:
    """ms of (new context + first signed-in page) from a storage_state, and through the login form; alternated."""
    bare = Bare(pw, app)
    browser = pw.chromium.launch(**bare.launch)
    account = bare.create_user()
    session = app.session(account)
    state = cast(StorageState, app.browser_state(session))
    session.close()

    def from_state() -> None:
        context = browser.new_context(storage_state=state)
        page = context.new_page()
        page.goto(app.base_url + bare.paths["home_page"])
        expect(bare.el(page, "message_input")).to_be_editable()

    def through_form() -> None:
        context = browser.new_context()
        bare.sign_in(context.new_page(), account)

    state_ms: list[float] = []
    form_ms: list[float] = []
    try:
        for i in range(repeats + 1):  # the first of each is a warm-up
            for fn, sink in ((from_state, state_ms), (through_form, form_ms)):
                contexts_before = set(browser.contexts)
                ms = timed(fn) * 1000
                for context in set(browser.contexts) - contexts_before:
                    context.close()  # outside the timing
                if i:
                    sink.append(ms)
    finally:
        browser.close()
        app.delete_user(account)
    return state_ms, form_ms


# -- main --------------------------------------------------------------------------------------------------------------
def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=9, help="timed runs of the scenario and of the bare script, in "
                                                           f"{ROUNDS} rounds (after one warm-up each; default 9)")
    ap.add_argument("--login-repeats", type=int, default=9, help="timed logins of each kind (default 9)")
    ap.add_argument("--suite-runs", type=int, default=1, help="runs of the whole suite per mode (default 1; median)")
    ap.add_argument("--skip-suite", action="store_true", help="skip the whole-suite timings (keeps earlier ones)")
    ap.add_argument("--skip-migration", action="store_true", help="skip the migration replay (keeps earlier figures)")
    args = ap.parse_args(argv)
    if min(args.repeats, args.login_repeats, args.suite_runs) < 1:
        ap.error("repeats must be at least 1")

    started = time.perf_counter()

    def say(text: str) -> None:
        print(f"[{time.perf_counter() - started:6.1f}s] {text}", flush=True)

    shutil.rmtree(OUT, ignore_errors=True)
    OUT.mkdir(parents=True)
    existing = json.loads(JSON_PATH.read_text(encoding="utf-8")) if JSON_PATH.exists() else {}
    details: dict = {}
    figures: dict = {}
    if args.skip_suite:
        for key in ("serial_s", "n2_s"):
            if key in existing.get("suite", {}):
                figures[key] = existing["suite"][key]
    else:
        for key, extra in (("serial_s", []), ("n2_s", ["-n", "2"])):
            walls = []
            for i in range(args.suite_runs):
                say(f"whole suite, {key.removesuffix('_s')} ({i + 1}/{args.suite_runs})")
                wall, passed, failed = time_suite(f"{key.removesuffix('_s')}-{i + 1}", extra)
                say(f"  {wall:.1f} s: {passed} passed, {failed} failed")
                if failed:
                    say("  WARNING: failures in a timed run; the time is kept, look at the log in reports/bench/logs")
                walls.append(wall)
            figures[key] = round(median(walls), 1)
            details[key] = [round(w, 2) for w in walls]

    driver = load_driver(load_target())
    with provide_databases() as servers:
        db = f"memtest_bench_{uuid.uuid4().hex[:8]}"
        dsn = create_database(servers.pg_admin_dsn, db)
        servers_described = servers.describe()
        say(f"{servers_described}; starting the app once")
        app = AppHandle(driver, driver.start(pg_dsn=dsn, redis_url=redis_url_for_db(servers.redis_url, 1),
                                             settings={}, log_path=OUT / "app.log"))
        try:
            rounds, per_round = ROUNDS, -(-args.repeats // ROUNDS)
            say(f"app at {app.base_url}: the scenario through the suite and the same flow as a bare Playwright "
                f"script (with the suite's evidence and without), taking turns: {rounds} rounds of {per_round} + 1 "
                "warm-up each")
            suite_reps, suite_steps, bare_reps, untraced_reps, bare_steps = [], [], [], [], []
            with sync_playwright() as pw:
                traced, untraced = Bare(pw, app), Bare(pw, app, traced=False)
                for n in range(1, rounds + 1):
                    reps = scenario_through_suite(app, per_round + 1, f"scenario-{n}")
                    steps = suite_phases(OUT / "allure" / f"scenario-{n}", reps)
                    # The first of every round is a warm-up (the suite's pays its session fixtures): only the first
                    # round's is kept, first in each list, where the medians leave it out.
                    suite_reps += reps if n == 1 else reps[1:]
                    suite_steps += steps if n == 1 else steps[1:]
                    for i in range(per_round + 1):
                        seconds, untraced_seconds = timed(traced.flow), timed(untraced.flow)
                        if n == 1 or i:
                            bare_reps.append(seconds)
                            bare_steps.append(traced.phases.seconds)
                            untraced_reps.append(untraced_seconds)
                    say(f"  round {n}: suite " + ", ".join(f"{s:.2f}" for s in reps) + " s; bare "
                        + ", ".join(f"{s:.2f}" for s in bare_reps[-per_round:]) + " s; without evidence "
                        + ", ".join(f"{s:.2f}" for s in untraced_reps[-per_round:]) + " s")
                say(f"storage_state against the login form, {args.login_repeats} + 1 warm-up each")
                state_ms, form_ms = login_times(pw, app, args.login_repeats)
        finally:
            app.running.stop()
            drop_database(servers.pg_admin_dsn, db)

    migration = None if args.skip_migration else bench_migration(say=say)
    suite_s, bare_s, untraced_s = median(suite_reps[1:]), median(bare_reps[1:]), median(untraced_reps[1:])
    figures.update({"bare_ratio": round(suite_s / bare_s, 2), "bare_untraced_ratio": round(suite_s / untraced_s, 2),
                    "trace_cost_ratio": round(bare_s / untraced_s, 2),
                    "storage_state_ms": round(median(state_ms), 1), "form_login_ms": round(median(form_ms), 1)})
    suite = {k: figures[k] for k in ("serial_s", "n2_s", "bare_ratio", "bare_untraced_ratio", "trace_cost_ratio",
                                     "storage_state_ms", "form_login_ms") if k in figures}
    machine = machine_facts(app, servers_described)
    JSON_PATH.write_text(json.dumps(merge_bench(existing, suite, migration, machine), indent=2) + "\n",
                         encoding="utf-8")
    phases = phase_rows(suite_steps, bare_steps)
    details.update({"scenario": SCENARIO, "suite_scenario_s": [round(s, 3) for s in suite_reps],
                    "bare_script_s": [round(s, 3) for s in bare_reps],
                    "bare_untraced_s": [round(s, 3) for s in untraced_reps], "phases": phases,
                    "storage_state_ms": [round(m, 1) for m in state_ms],
                    "form_login_ms": [round(m, 1) for m in form_ms], "machine": machine})
    (OUT / "details.json").write_text(json.dumps(details, indent=2) + "\n", encoding="utf-8")

    rows = []
    if "serial_s" in figures:
        rows += [["whole suite, serial (pytest wall)", f"{figures['serial_s']:.1f} s", ""],
                 ["whole suite, -n 2 (pytest wall)", f"{figures['n2_s']:.1f} s",
                  f"speed-up {figures['serial_s'] / figures['n2_s']:.2f}x"]]
    rows += [["cross-session scenario through the suite", f"{suite_s:.2f} s",
              f"median of {len(suite_reps) - 1}; cold first run {suite_reps[0]:.2f} s"],
             ["same flow, bare Playwright script", f"{bare_s:.2f} s",
              f"median of {len(bare_reps) - 1}; first run {bare_reps[0]:.2f} s"],
             ["same flow, bare script without the trace", f"{untraced_s:.2f} s",
              f"median of {len(untraced_reps) - 1}; first run {untraced_reps[0]:.2f} s"],
             ["framework overhead (suite / traced bare)", f"{figures['bare_ratio']:.2f}x", "bare_ratio"],
             ["suite / untraced bare", f"{figures['bare_untraced_ratio']:.2f}x", "bare_untraced_ratio"],
             ["what the trace costs (traced / untraced bare)", f"{figures['trace_cost_ratio']:.2f}x", ""],
             ["signed-in context from storage_state", f"{figures['storage_state_ms']:.0f} ms",
              f"median of {len(state_ms)}"],
             ["signed-in context through the login form", f"{figures['form_login_ms']:.0f} ms",
              f"median of {len(form_ms)}"]]
    for size, m in (migration or {}).items():
        rows.append([f"migration replay, {int(size):,} memories", f"{m['total_s']:.1f} s",
                     f"generate {m['generate_s']}, load {m['load_s']}, migrate {m['migrate_s']}, verify "
                     f"{m['verify_s']} s; peak PSS {m['peak_rss_mb']:.0f} MB; floor {m['floor_s']} s "
                     f"(x{m['total_over_floor']})"])
    if migration and {"100000", "1000000"} <= set(migration):
        growth = migration["1000000"]["total_s"] / migration["100000"]["total_s"]
        rows.append(["migration replay, 1,000,000 against 100,000", f"{growth:.1f}x", "total_s, this run"])
    print()
    print("measured on " + "; ".join(f"{key} {value}" for key, value in machine.items()))
    print(format_table(["measure", "value", "note"], rows))
    print(f"\nper phase of the scenario, median ms ({machine['cpus']} cores; {machine['chromium']}):")
    print(format_table(["phase", "suite", "bare", "extra"],
                       [[p["phase"], p["suite_ms"], p["bare_ms"], p["extra_ms"]] for p in phases]))
    print(f"\nwrote {rel(JSON_PATH)} (keys \"suite\", \"migration\", \"machine\") and {rel(OUT / 'details.json')}; "
          f"total wall time {time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
