"""The operations a replay is made of, each handing back what the next needs: a history put where the app holds its
memories before a change (its source store, for the app's own migration tool to move; or its own store, through the
driver's import), its owners made users of the app, and both checks of the replay made and reported with their
figures whether they pass or not."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

import allure

from harness.app.app_handle import AppHandle
from harness.drivers.base import Account, Capability
from harness.replay.checks import ReplayChecks, check_memories, check_probes, query_vectors
from harness.replay.history import ReplayHistory, import_owners, read_for_replay, stream_for_replay
from harness.suite import report
from harness.suite.options import ROOT

REPLAY_LISTINGS = ROOT / "reports" / "replay"  # one file per replay with a lost or changed memory, named by its tag


@dataclass(frozen=True)
class HeldHistory:
    """A history as the app holds it: every memory and golden question (the replay's checks compare the app with
    them), and the accounts of the owners who can sign in (those some golden question asks for)."""

    history: ReplayHistory
    accounts: Mapping[str, Account]


@dataclass(frozen=True)
class Captured:
    """A snapshot captured from a running app: its memories, and what it answered then."""

    path: Path


@dataclass(frozen=True)
class IndexKind:
    """The index the app searches every owner's memories through: one of the kinds its target declares ([index_kinds]),
    by name, and the settings that make it so; the app's own (no name, no settings) unless a scenario chose one."""

    name: str = ""
    settings: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))


def import_replayed_owners(app: AppHandle, history: ReplayHistory) -> dict[str, Account]:
    """A replayed history's owners, in bulk, with the ids the snapshot gives them; the accounts of those who can sign
    in (the owners some golden question asks for)."""
    with allure.step(f"import the history's {len(set(history.owners)):,} owners as users of the app"):
        return import_owners(app, history)


def load_into_source_store(app: AppHandle, snapshot: Path, tag: str) -> HeldHistory:
    """A snapshot of any format into the store the app's own migration reads, through its loading tool, streamed,
    with the times as the legacy store wrote them and the zone it declares for its local ones; then its owners, as
    users of the app the migration writes into."""
    app.require_stores()
    history, records = stream_for_replay(snapshot, tag, legacy_times=True)
    app.load_legacy_store(records, history.header.legacy_embedder, f"the memories of {snapshot.name}",
                          timezone=history.header.legacy_timezone)
    return HeldHistory(history, MappingProxyType(import_replayed_owners(app, history)))


def import_into_app(app: AppHandle, snapshot: Path, workdir: Path, tag: str) -> HeldHistory:
    """A snapshot of any format into the app's own store, through the driver's import, its owners first."""
    app.require(Capability.HISTORY_IMPORT)
    records = workdir / "history.records.jsonl"
    history = read_for_replay(snapshot, tag, records)
    accounts = import_replayed_owners(app, history)
    history.keep_app_ids(app.import_history(records, history.header.legacy_embedder, history.app_user_ids))
    return HeldHistory(history, MappingProxyType(accounts))


def replay_checks(app: AppHandle, held: HeldHistory) -> ReplayChecks:
    """Memory by memory through the store's similarity query, probe by probe through the search API, with the
    embedding model the app runs now; reported with their figures (and every lost or changed memory listed) whether
    they pass or not."""
    history, embedder = held.history, app.embedder
    with allure.step(f"check {history.size:,} memories and {len(history.probes):,} probes"):
        vectors = query_vectors(app, history, embedder)
        checks = ReplayChecks(check_memories(app, history, vectors),
                              check_probes(app, history, dict(held.accounts), embedder, app.recall_k))
        report.attach_text("replay figures", checks.figures())
        if checks.memories.lost or checks.memories.changed:
            checks.write_listing(REPLAY_LISTINGS / f"{history.tag}.txt")
        if checks.memories.lost:
            report.attach_text(f"lost memories ({len(checks.memories.lost)}, every one)",
                               "\n".join(checks.memories.lost))
        if checks.memories.changed:
            report.attach_text(f"memories with a field changed ({len(checks.memories.changed)}, every one)",
                               "\n".join(checks.memories.changed))
        if checks.probes.failing:
            report.attach_table(f"worst probes ({len(checks.probes.failing)} of {len(checks.probes.outcomes)} "
                                "differ)", checks.probes.worst_as_csv())
        print(checks.figures())
    return checks
