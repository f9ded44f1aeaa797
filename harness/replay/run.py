"""What a migration scenario seeds, runs and compares, and the operations its steps are made of: a history loaded
into the app's legacy store, its owners created, the app's migration run, and both checks of the replay made once
and reported with their figures whether they pass or not."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import allure

from harness import report
from harness.app_factory import AppFactory
from harness.app_handle import AppHandle
from harness.drivers.base import Account, Capability
from harness.legacy_store import LegacyMemory, MigrationCounts
from harness.replay.checks import ReplayChecks, check_memories, check_probes, query_vectors
from harness.replay.history import ReplayHistory, import_owners, read_for_replay, stream_for_replay
from harness.snapshots import Snapshot, is_format2, load_snapshot
from harness.suite_options import ROOT

REPLAY_LISTINGS = ROOT / "reports" / "replay"  # one file per replay with a lost or changed memory, named by its tag


@dataclass
class MigrationRun:
    legacy: list[LegacyMemory] = field(default_factory=list)  # what the legacy store was given, when generated here
    owners: dict[str, str] = field(default_factory=dict)  # owner name -> user id, created when migrating
    snapshot: Snapshot | None = None  # a format-1 golden snapshot, whole (the pgvector-upgrade scenario reads it)
    replay: ReplayHistory | None = None  # a snapshot of any format, as the replay checks read it
    accounts: dict[str, Account] = field(default_factory=dict)  # replayed owners who can sign in (probes' owners)
    checks: ReplayChecks | None = None
    captured: Path | None = None  # a snapshot the scenario captured from the running app
    removed: str = ""  # the snapshot id of a memory whose vector a step removed by hand
    questions: list[str] = field(default_factory=list)
    counts: list[MigrationCounts] = field(default_factory=list)  # one per migration run, in order
    embedder: str = ""
    owners_created: bool = False
    newer_store: AppFactory | None = None  # the server a store upgrade moves the app's database onto

    @property
    def total(self) -> int:
        """How many memories the legacy store was given."""
        return self.replay.size if self.replay is not None else len(self.legacy)

    @property
    def last_counts(self) -> MigrationCounts:
        assert self.counts, "no migration ran"
        return self.counts[-1]

    # -- loading the legacy store ----------------------------------------------------------------------------------
    def load_history(self, app: AppHandle, snapshot: Path, tag: str) -> None:
        """A snapshot of any format into the app's legacy store, through its loading tool; the owners are created
        when migrating (a migration may start the app anew on other settings)."""
        app.require_stores()
        history, records = stream_for_replay(snapshot, tag)
        app.load_legacy_store(records, history.header.legacy_embedder, f"the memories of {snapshot.name}")
        self.replay = history
        self.owners = {o: history.user_id(o) for o in sorted(set(history.owners))}
        if not is_format2(snapshot):
            self.snapshot = load_snapshot(snapshot)

    def import_history(self, app: AppHandle, snapshot: Path, workdir: Path, tag: str) -> None:
        """A snapshot of any format into the app's own store, through the driver's import, its owners first."""
        app.require(Capability.HISTORY_IMPORT)
        records = workdir / "history.records.jsonl"
        history = read_for_replay(snapshot, tag, records)
        self.replay = history
        self.import_replayed_owners(app)
        history.keep_app_ids(app.import_history(records, history.header.legacy_embedder, history.app_user_ids))
        self.embedder = history.header.legacy_embedder

    def load_memories(self, app: AppHandle, memories: list[LegacyMemory], owners: dict[str, str],
                      embedder: str) -> None:
        app.require_stores()
        app.load_legacy_store([m.as_record(embedder) for m in memories], embedder, f"{len(memories)} memories")
        self.legacy = memories
        self.owners = owners

    # -- migrating -------------------------------------------------------------------------------------------------
    def import_replayed_owners(self, app: AppHandle) -> None:
        """A replayed history's owners, in bulk, with the ids the snapshot gives them."""
        assert self.replay is not None, "no history was loaded"
        with allure.step(f"import the history's {len(set(self.replay.owners)):,} owners as users of the app"):
            self.accounts = import_owners(app, self.replay)
        self.owners_created = True

    def migrate(self, app: AppHandle, batch_size: int, embedder: str) -> MigrationCounts:
        counts = app.migrate(batch_size, embedder)
        self.counts.append(counts)
        self.embedder = embedder
        return counts

    # -- checking --------------------------------------------------------------------------------------------------
    def replay_checks(self, app: AppHandle) -> ReplayChecks:
        """Memory by memory through the store's similarity query, probe by probe through the search API: made once,
        reported with their figures whether they pass or not."""
        if self.checks is not None:
            return self.checks
        history = self.replay
        assert history is not None, "no snapshot or generated history was loaded"
        with allure.step(f"check {history.size:,} memories and {len(history.probes):,} probes"):
            vectors = query_vectors(app, history, self.embedder)
            self.checks = ReplayChecks(check_memories(app, history, vectors),
                                       check_probes(app, history, self.accounts, self.embedder, app.recall_k))
            report.attach_text("replay figures", self.checks.figures())
            if self.checks.memories.lost or self.checks.memories.changed:
                self.checks.write_listing(REPLAY_LISTINGS / f"{history.tag}.txt")
            if self.checks.memories.lost:
                report.attach_text(f"lost memories ({len(self.checks.memories.lost)}, every one)",
                                   "\n".join(self.checks.memories.lost))
            if self.checks.memories.changed:
                report.attach_text(f"memories with a field changed ({len(self.checks.memories.changed)}, every one)",
                                   "\n".join(self.checks.memories.changed))
            if self.checks.probes.failing:
                report.attach_table(f"worst probes ({len(self.checks.probes.failing)} of "
                                    f"{len(self.checks.probes.outcomes)} differ)", self.checks.probes.worst_as_csv())
            print(self.checks.figures())
        return self.checks
