"""One running app of one driver, bound together: everything steps and the support package ask of the app under test
(users, sessions, memories, the app's tools and its store), so that nothing passes a driver and an app side by side.

A handle also knows where its app came from (the worker's `AppFactory`), so it can give the same app with other
settings, on fresh data, or restarted after a change; a handle for an app the suite did not start (--base-url) skips
those scenarios with one line.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TypeVar, cast

import allure
import pytest

from harness.app.app_factory import AppFactory
from harness.app.app_launcher import RunningApp
from harness.app.app_tools import ToolRun
from harness.app.changes import RELEASE_COMMAND, Change, Edge, Mistake
from harness.app.legacy_store import MigrationCounts
from harness.app.store_upgrade import dump_and_restore
from harness.app.target import Target
from harness.drivers.base import (
    Account,
    AccountTools,
    ApiEdges,
    AppDriver,
    AppUpgrade,
    Capability,
    EdgeAnswer,
    EmbeddingModelChange,
    HistoryImport,
    MigrationTools,
    NewUser,
    OwnDatabases,
    RefusedStart,
    StartRefusals,
    StoppedApp,
    UserSession,
)
from harness.drivers.base.parts import PARTS
from harness.services.busy_store import BusyTable, table_busy
from harness.services.databases import HeldDatabase, every_table_held
from harness.suite import report
from harness.suite.options import ROOT

P = TypeVar("P")


def why_memories_cannot_be_busy(target: Target, offers: Callable[[Capability], bool],
                                why_not: Callable[[Capability], str], has_database: bool) -> str | None:
    """Why the suite cannot hold an app's memories busy (the generated sessions' "tell while the store is busy"), in
    one line; None when it can: the target names their table, and the suite reaches the app's PostgreSQL."""
    if not target.app.get("memory_table"):
        return f"{target.path.name} names no table of the app's memories ([app] memory_table)"
    if not offers(Capability.DATABASE_ACCESS):
        return why_not(Capability.DATABASE_ACCESS)
    if not has_database:
        return "needs the app's PostgreSQL database: let the suite start the app, or give --pg-dsn"
    return None


class AppHandle:
    def __init__(self, driver: AppDriver, running: RunningApp, factory: AppFactory | None = None,
                 chosen: dict[str, str] | None = None) -> None:
        self.driver = driver
        self.running = running
        self._factory = factory
        self.chosen = dict(chosen or {})  # the settings this instance was asked for, over the run's own

    @classmethod
    def fresh_on(cls, driver: AppDriver, factory: AppFactory, settings: dict[str, str]) -> AppHandle:
        """A new instance on fresh data of its own from `factory` (e.g. a second PostgreSQL's)."""
        return cls(driver, factory.fresh(settings), factory, settings)

    # -- what it is ------------------------------------------------------------------------------------------------
    @property
    def name(self) -> str:
        return self.driver.name

    @property
    def target(self) -> Target:
        return self.driver.target

    @property
    def base_url(self) -> str:
        return self.running.base_url

    @property
    def health(self) -> dict:
        return self.running.health

    @property
    def settings(self) -> dict[str, str]:
        return self.running.settings

    @property
    def started_by_suite(self) -> bool:
        """Started here (so it can be restarted, with other settings, on fresh data), not given by --base-url."""
        return self._factory is not None

    @property
    def running_now(self) -> bool:
        return self.running.running

    @property
    def embedder(self) -> str:
        """The embedding model the app runs now."""
        return str(self.settings.get("embedder") or self.health.get("embedder", "hash-ngram-v1"))

    @property
    def recall_k(self) -> int:
        """How many memories the app recalls for one question (target [recall] top_k)."""
        return self.target.recall.top_k

    @property
    def threshold(self) -> float:
        """The similarity below which the app recalls nothing: what its operators set where this instance was started
        with their setting ([operator_settings] recall_threshold), else the target's [recall] threshold."""
        setting = self.target.operator_settings.get("recall_threshold")
        chosen = self.chosen.get(setting) if setting else None
        return float(chosen) if chosen is not None else self.target.recall.threshold

    def describe(self) -> dict[str, str]:
        return self.driver.describe(self.running)

    def offers(self, capability: Capability) -> bool:
        return capability in self.driver.capabilities

    def searches(self) -> bool:
        """Whether the app offers its users a search of their memories, the read the search checks run through; where
        it does not, the report says they were not checked."""
        if self.offers(Capability.MEMORY_SEARCH):
            return True
        report.attach_text("not checked", f"the {self.name} app offers its users no search of their memories")
        return False

    def require(self, capability: Capability) -> None:
        if not self.offers(capability):
            pytest.skip(self.why_not(capability))

    def why_not(self, capability: Capability) -> str:
        return self.driver.why_not(capability)

    def part(self, part: type[P]) -> P:
        """The driver as one of the parts it implements (harness/drivers/base/parts.py), called with `running`; the
        scenario skips, naming the part and why, where the app does not offer it."""
        offering = sorted((c for c, parts in PARTS.items() if any(part in p.__mro__ for p in parts)),
                          key=lambda c: part not in PARTS[c])  # the capability whose part it is exactly first
        if not any(self.offers(c) for c in offering):
            self.require(offering[0])
        return cast(P, self.driver)

    def require_stores(self) -> None:
        """The app's databases, for scenarios that load or read them directly."""
        self.require(Capability.DATABASE_ACCESS)
        if not self.running.pg_dsn or not self.running.redis_url:
            pytest.skip("needs the app's databases: let the suite start the app, or give --pg-dsn and --redis-url "
                        "with --base-url")

    def _factory_for(self, why: Capability) -> AppFactory:
        self.require(why)
        if self._factory is None:
            pytest.skip(f"needs {why.value}: an app the suite starts (not --base-url)")
        return self._factory

    # -- other instances of the app --------------------------------------------------------------------------------
    def with_settings(self, why: Capability, **settings: str) -> AppHandle:
        """The app with these settings too, on data of its own, shared by every scenario that asks for the same."""
        chosen = {**self.chosen, **settings}
        return AppHandle(self.driver, self._factory_for(why).with_settings(chosen), self._factory, chosen)

    def fresh(self, why: Capability = Capability.APP_SETTINGS, **settings: str) -> AppHandle:
        """The app with the same settings (and these), on new, empty data of its own."""
        return AppHandle.fresh_on(self.driver, self._factory_for(why), {**self.chosen, **settings})

    def restarted(self) -> AppHandle:
        """The app stopped and started again on its own data, at the same address, as a deploy does."""
        factory = self._factory_for(Capability.RESTART)
        with allure.step("restart the app on its data"):
            again = factory.restart(self.running, self.running.settings, None)
        return AppHandle(self.driver, again, factory, self.chosen)

    def new_data_folder(self) -> Path:
        """A data folder nothing has used yet, for the app's own databases."""
        return self._factory_for(Capability.OWN_DATABASES).new_data_folder()

    def on_own_databases(self, folder: Path, given_database: bool = False) -> AppHandle:
        """The app started as its operator starts it with no databases given: on its own, in `folder` (with
        `given_database`, on a new database of the suite's server, and only its other stores its own)."""
        factory = self._factory_for(Capability.OWN_DATABASES)
        with allure.step(f"start the app on its own {'stores' if given_database else 'databases'} in {folder}"):
            dsn = factory.new_database() if given_database else None
            return AppHandle(self.driver, factory.on_own_databases(folder, pg_dsn=dsn), factory)

    def stop_as_operator(self, interrupt: bool = False) -> StoppedApp:
        """The app on its own databases stopped as its operator stops it (SIGTERM, or Ctrl-C), run to its end."""
        factory = self._factory_for(Capability.OWN_DATABASES)
        with allure.step("stop the app as its operator does"):
            stopped = factory.stop_own(self.running, interrupt)
            report.attach_text("how the app ended", f"stopped {stopped.how}: exit status {stopped.returncode}; said "
                                                    f"{list(stopped.said)}; left running {list(stopped.left_running)}")
        return stopped

    def add_user_in_data_folder(self, folder: Path, name: str, email: str, password: str) -> Account:
        """An account added on the app's command line to the databases of its data folder, the app not running."""
        tool = self.part(OwnDatabases)
        with allure.step(f"add the account {email} with the app's command line, in {folder}"):
            return tool.add_user_in_data_folder(folder, name, email, password)

    def stop(self) -> None:
        """The app, started for this scenario alone, stopped for good: its connections to its databases end (and
        PostgreSQL then counts what they did at once, where an idle connection reports it up to 10 s later)."""
        self._factory_for(Capability.APP_SETTINGS).stop_scenario_app(self.running)

    def change_embedding_model(self, model: str) -> AppHandle:
        """The app moved to another embedding model with its own upgrade procedure (it may be restarted)."""
        factory = self._factory_for(Capability.EMBEDDING_MODEL_CHANGE)
        with allure.step(f"move the app to the {model} embedding model with its upgrade procedure"):
            moved = self.part(EmbeddingModelChange).change_embedding_model(self.running, model, factory.restart)
        return AppHandle(self.driver, moved, factory, {**self.chosen, "embedder": model})

    # -- users -----------------------------------------------------------------------------------------------------
    def create_user(self, name: str, email: str, password: str, user_id: str | None = None) -> Account:
        if user_id is not None:
            self.require(Capability.REQUESTED_USER_IDS)
        account = self.driver.create_user(self.running, name, email, password, user_id)
        if user_id is not None and account.id != user_id:
            raise AssertionError(f"the app gave {name} the id {account.id!r} instead of the requested {user_id!r}")
        return account

    def delete_user(self, account: Account) -> None:
        self.driver.delete_user(self.running, account)

    def add_user_by_tool(self, name: str, email: str, password: str) -> Account:
        """An account added on the app's command line, as its operators add one."""
        tools = self.part(AccountTools)
        with allure.step(f"add the account {email} with the app's command line"):
            return tools.add_user_by_tool(self.running, name, email, password)

    def delete_user_by_tool(self, account: Account) -> None:
        """The account deleted on the app's command line, as its operators delete one."""
        tools = self.part(AccountTools)
        with allure.step(f"delete the account {account.email} with the app's command line"):
            tools.delete_user_by_tool(self.running, account)

    def try_add_user_by_tool(self, email: str, password: str) -> ToolRun:
        """The app's command line asked to add an account for this address, however it ends."""
        tools = self.part(AccountTools)
        with allure.step(f"add an account {email} with the app's command line"):
            run = tools.try_add_user_by_tool(self.running, email, password)
            report.attach_text("what the tool said", f"exit status {run.returncode}\n--- stderr\n{run.stderr}\n"
                                                     f"--- stdout\n{run.stdout}")
        return run

    def try_delete_user_by_tool(self, email: str) -> ToolRun:
        """The app's command line asked to delete the account of this address, however it ends."""
        tools = self.part(AccountTools)
        with allure.step(f"delete the account of {email} with the app's command line"):
            run = tools.try_delete_user_by_tool(self.running, email)
            report.attach_text("what the tool said", f"exit status {run.returncode}\n--- stderr\n{run.stderr}\n"
                                                     f"--- stdout\n{run.stdout}")
        return run

    def edge_answers(self, session: UserSession) -> list[EdgeAnswer]:
        """The answers of the app's API at each edge it documents (its size limits, its malformed requests)."""
        edges = self.part(ApiEdges)
        with allure.step("send the app's API a request at each edge it documents"):
            answers = edges.edge_answers(self.running, session)
            report.attach_text("the answers at the edges", "\n".join(
                f"{a.what}: promised {a.promised}, answered {a.status} {a.body[:120]}" for a in answers))
        return answers

    def refused_starts(self) -> list[RefusedStart]:
        """The app started beside this one with each mistake its operators are warned of, each run to its end."""
        starts = self.part(StartRefusals)
        self.require_stores()
        with allure.step("start the app with each mistake its operators are warned of"):
            refused = starts.refused_starts(self.running)
            report.attach_text("how each start ended", "\n".join(
                f"{r.what}: exit status {r.returncode}; said {list(r.said)}" for r in refused))
        return refused

    def import_users(self, users: list[NewUser]) -> dict[str, str]:
        """Many users at once; the app's own id of each whose requested id it did not keep (an app that chooses its
        users' ids imports them only for a history, whose owners it then maps)."""
        if not self.offers(Capability.HISTORY_IMPORT):
            self.require(Capability.REQUESTED_USER_IDS)
        given = self.driver.import_users(self.running, users)
        if self.offers(Capability.REQUESTED_USER_IDS) and given:
            raise AssertionError(f"the app gave {len(given)} imported users other ids than requested, e.g. "
                                 f"{next(iter(given.items()))}")
        return given

    def session(self, account: Account) -> UserSession:
        return self.driver.session(self.running, account)

    def browser_state(self, session: UserSession) -> dict:
        return self.driver.browser_state(self.running, session)

    def shown_identity(self, account: Account) -> str:
        return self.driver.shown_identity(account)

    @property
    def writes_memories_later(self) -> bool:
        return self.driver.writes_memories_later

    def settle(self, session: UserSession, turns_sent: int) -> None:
        self.driver.settle(self.running, session, turns_sent)

    # -- its store ---------------------------------------------------------------------------------------------
    def _database(self) -> str:
        self.require(Capability.DATABASE_ACCESS)
        if not self.running.pg_dsn:
            pytest.skip("needs the app's PostgreSQL database: let the suite start the app, or give --pg-dsn with "
                        "--base-url")
        return str(self.running.pg_dsn)

    @contextlib.contextmanager
    def database_held(self) -> Iterator[HeldDatabase]:
        """Every table of the app's database locked, as an operator's maintenance locks them, until the block ends:
        the app's reads and writes wait meanwhile; what it yields tells how many connections the app holds there."""
        with allure.step("hold every table of the app's database, as an operator's maintenance does"), \
                every_table_held(self._database()) as held:
            yield held

    @property
    def memory_table(self) -> str | None:
        """The table of the app's database its memories are written to ([app] memory_table), where the target names
        it."""
        table = self.target.app.get("memory_table")
        return str(table) if table else None

    def why_store_cannot_be_busy(self) -> str | None:
        """Why the suite cannot hold the app's memories busy, in one line; None when it can."""
        return why_memories_cannot_be_busy(self.target, self.offers, self.why_not, bool(self.running.pg_dsn))

    @contextlib.contextmanager
    def memories_busy(self, seconds: float) -> Iterator[BusyTable]:
        """The table of the app's memories held as an index build holds it (reads go on, writes wait) while the block
        acts, and until a write has waited `seconds` on it; free again when the block ends."""
        why_not, table = self.why_store_cannot_be_busy(), self.memory_table
        if why_not or table is None:
            raise ValueError(f"the app's memories cannot be held busy: {why_not}")
        with allure.step(f"hold the app's table {table} as an index build does, until a write has waited "
                         f"{seconds:g} s on it"), table_busy(self._database(), table, seconds) as busy:
            yield busy

    # -- its own tools ---------------------------------------------------------------------------------------------
    def load_legacy_store(self, records: Iterable[str], embedder: str, what: str = "the records",
                          timezone: str | None = None) -> None:
        """Records (JSON Lines) into the app's legacy store, each given to its loading tool as it comes; `timezone`:
        the zone the store declares for its naive local times."""
        tools = self.part(MigrationTools)
        self.require_stores()
        with allure.step(f"load {what} into the app's legacy store" + (f" (local times: {timezone})" if timezone
                                                                       else "")):
            tools.load_legacy_store(self.running, records, embedder, timezone)

    def try_load_legacy_store(self, records: str, embedder: str, extra: Sequence[str] = ()) -> ToolRun:
        """Records (JSON Lines) given to the app's legacy store's loading tool on its standard input, with `extra` words
        after its command, however it ends."""
        tools = self.part(MigrationTools)
        self.require_stores()
        with allure.step(f"give the app's legacy store loader {records.count(chr(10))} records"
                         + (f" and {' '.join(extra)}" if extra else "")):
            run = tools.try_load_legacy_store(self.running, records, embedder, extra)
            report.attach_text("what the tool said", f"exit status {run.returncode}\n--- stderr\n{run.stderr}\n"
                                                     f"--- stdout\n{run.stdout}")
        return run

    def legacy_memory_ids(self) -> set[str]:
        """The id of every memory the app's legacy store holds (read through the databases the suite was given)."""
        tools = self.part(MigrationTools)
        self.require_stores()
        return tools.legacy_memory_ids(self.running)

    def migrate(self, batch_size: int, embedder: str, extra: Sequence[str] = ()) -> MigrationCounts:
        tools = self.part(MigrationTools)
        self.require_stores()
        with allure.step(f"run the app's migration (batch size {batch_size}, {embedder})"
                         + (f" with {' '.join(extra)}" if extra else "")):
            counts = tools.migrate(self.running, batch_size, embedder, extra)
            report.attach_text("migration output", counts.output)
        return counts

    def try_change(self, change: Change, mistake: Mistake) -> ToolRun:
        """The change's tool run with an operator's mistake (a migration's: the only kind declared with them)."""
        tools = self.part(MigrationTools)
        self.require_stores()
        with allure.step(f"run the change {change.name!r} with {mistake.name}: {mistake.given}"):
            if mistake.feed or mistake.load:
                records = (ROOT / mistake.feed).read_text(encoding="utf-8") if mistake.feed else ""
                run = tools.try_load_legacy_store(self.running, records, change.options["embedder"],
                                                        mistake.load)
            else:
                run = tools.try_migrate(self.running, int(change.options["batch_size"]),
                                              change.options["embedder"], mistake.give)
            report.attach_text("what the tool said", f"exit status {run.returncode}\n"
                                                     f"--- stderr\n{run.stderr}\n--- stdout\n{run.stdout}")
        return run

    def try_change_at_edge(self, change: Change, edge: Edge) -> ToolRun:
        """The change's tool run with a setting at the edge of what it takes (a migration's: the only kind declared
        with them)."""
        tools = self.part(MigrationTools)
        self.require_stores()
        with allure.step(f"run the change {change.name!r} with {edge.name}: {' '.join(edge.give)}"):
            run = tools.try_migrate(self.running, int(change.options["batch_size"]), change.options["embedder"],
                                          edge.give)
            report.attach_text("what the tool said", f"exit status {run.returncode}\n"
                                                     f"--- stderr\n{run.stderr}\n--- stdout\n{run.stdout}")
        return run

    def import_history(self, records: Path, embedder: str, user_ids: dict[str, str]) -> dict[str, str]:
        history = self.part(HistoryImport)
        if self.offers(Capability.DATABASE_ACCESS):  # loaded through the databases the suite was given
            self.require_stores()
        with allure.step(f"load the history {records.name} into the app's store"):
            return history.import_history(self.running, records, embedder, user_ids)

    def upgraded(self) -> AppHandle:
        """The app, running an older release, upgraded to the target's own on the same data by its procedure."""
        factory = self._factory_for(Capability.APP_UPGRADE)
        settings = {k: v for k, v in self.running.settings.items() if k != RELEASE_COMMAND}
        chosen = {k: v for k, v in self.chosen.items() if k != RELEASE_COMMAND}
        with allure.step(f"start {self.target.name}'s own release ({self.target.start_command[0]}) on the data of "
                         "the older one"):
            upgraded = self.part(AppUpgrade).upgrade(self.running, settings, factory.restart)
        return AppHandle(self.driver, upgraded, factory, chosen)

    def on_upgraded_store(self, newer: AppFactory) -> AppHandle:
        """The app stopped, its database dumped and restored onto `newer`'s server (a newer pgvector), and the app
        started on it with the same settings."""
        self.require(Capability.DATABASE_ACCESS)
        factory = self._factory_for(Capability.APP_SETTINGS)
        factory.stop(self.running)
        with allure.step("dump the app's database and restore it onto the server with the newer pgvector"):
            target = newer.new_database()
            report.attach_text("dump and restore", dump_and_restore(str(self.running.pg_dsn), target))
        with allure.step("start the app on the restored database"):
            moved = AppHandle(self.driver, newer.fresh(self.running.settings, pg_dsn=target), newer, self.chosen)
        before, after = self.health.get("pgvector"), moved.health.get("pgvector")
        if before is not None and before == after:
            raise AssertionError(f"the app still runs pgvector {before} after the store upgrade")
        return moved

    def go_through(self, change: Change, newer_store: AppFactory | None = None,
                   extra: Sequence[str] = ()) -> tuple[AppHandle, MigrationCounts | None]:
        """The app after one of its declared changes, done the way the driver does it; a migration's counts. `extra`:
        words an operator adds to a migration's command."""
        with allure.step(f"the change {change.name!r} ({change.kind}): {change.description or change.options}"):
            if change.kind == "migration":
                return self, self.migrate(int(change.options["batch_size"]), change.options["embedder"], extra)
            if change.kind == "upgrade":
                return self.upgraded(), None
            if change.kind == "store-upgrade":
                assert newer_store is not None, "a store upgrade needs the server it upgrades onto"
                return self.on_upgraded_store(newer_store), None
            return self.change_embedding_model(change.options["to"]), None

    def embed(self, texts: list[str], embedder: str | None = None) -> list[bytes | None]:
        """The texts as the app's own embedder embeds them (its current model unless named), for expectations."""
        return self.driver.embed(texts, embedder or self.embedder)
