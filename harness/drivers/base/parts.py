"""An app as the parts it implements (wptrunner's protocol parts): each optional capability a driver offers is a
small protocol of the calls it answers, and what a driver does not offer it declares once, with why.

A driver declares `lacks = {Capability.X: AppLacks(why, source), Capability.Y: NotBuilt(why)}`; it offers every other
capability, and must implement each one's part (checked when the driver loads: `driver_class_errors`). A scenario
that needs a capability the app lacks skips with one line naming the part and that reason (`Lack.skip_line`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

from harness.drivers.base.capabilities import Capability
from harness.drivers.base.part_protocols import (
    AccountRemains,
    AccountTools,
    ApiEdges,
    AppUpgrade,
    ConversationRemains,
    EmbeddingModelChange,
    HeldSessions,
    HistoryImport,
    IndexPromises,
    MemoryRemains,
    MigrationTools,
    MovableClock,
    OwnDatabases,
    PasswordSignIn,
    StartRefusals,
    StoreReads,
)


class Part(StrEnum):
    """The parts an app is made of, as a skip line names them."""

    LIFE_CYCLE = "life cycle"
    CHAT = "chat"
    ACCOUNTS = "accounts and sign-in"
    MEMORIES = "memories"
    CONVERSATIONS = "conversations"
    STORE_READS = "store reads"
    TOOLS = "tools and changes"
    CLOCK = "clock"
    API_EDGES = "the API's edges"


PART_OF: dict[Capability, Part] = {
    Capability.RESTART: Part.LIFE_CYCLE, Capability.APP_SETTINGS: Part.LIFE_CYCLE,
    Capability.APP_UPGRADE: Part.LIFE_CYCLE, Capability.START_REFUSALS: Part.LIFE_CYCLE,
    Capability.OWN_DATABASES: Part.LIFE_CYCLE,
    Capability.CHAT_API: Part.CHAT,
    Capability.REQUESTED_USER_IDS: Part.ACCOUNTS, Capability.PASSWORD_SIGN_IN: Part.ACCOUNTS,
    Capability.SERVER_SIGN_OUT: Part.ACCOUNTS, Capability.ACCOUNT_TOOLS: Part.ACCOUNTS,
    Capability.MEMORY_SEARCH: Part.MEMORIES, Capability.SEARCH_SCORES: Part.MEMORIES,
    Capability.MEMORY_DELETE: Part.MEMORIES, Capability.MEMORY_EDIT: Part.MEMORIES,
    Capability.MEMORY_CLEAR: Part.MEMORIES, Capability.MEMORY_SWITCH: Part.MEMORIES,
    Capability.CONVERSATION_DELETE: Part.CONVERSATIONS,
    Capability.DATABASE_ACCESS: Part.STORE_READS, Capability.MEMORY_REMAINS: Part.STORE_READS,
    Capability.CONVERSATION_REMAINS: Part.STORE_READS, Capability.ACCOUNT_REMAINS: Part.STORE_READS,
    Capability.INDEX_PROMISES: Part.STORE_READS,
    Capability.MIGRATION_TOOLS: Part.TOOLS, Capability.HISTORY_IMPORT: Part.TOOLS,
    Capability.EMBEDDING_MODEL_CHANGE: Part.TOOLS,
    Capability.MOVABLE_CLOCK: Part.CLOCK,
    Capability.API_EDGES: Part.API_EDGES,
}


@dataclass(frozen=True)
class Lack:
    """Why a driver does not offer a capability."""

    why: str

    def skip_line(self, app: str, capability: Capability) -> str:
        raise NotImplementedError


@dataclass(frozen=True)
class AppLacks(Lack):
    """The app has no such feature: `source` is where its code or documentation shows it."""

    source: str

    def skip_line(self, app: str, capability: Capability) -> str:
        return (f"needs {capability.value} ({PART_OF[capability]}), which {app} lacks: {self.why} "
                f"({self.source})")


@dataclass(frozen=True)
class NotBuilt(Lack):
    """The app has the feature, or may have it; the suite has not built its part for it yet."""

    def skip_line(self, app: str, capability: Capability) -> str:
        return (f"needs {capability.value} ({PART_OF[capability]}), which the suite has not built for {app} yet: "
                f"{self.why}")


# The part a driver implements for each capability it offers; a capability not here is the app's (its pages, its
# session's moves, its settings) and needs no driver call of its own.
PARTS: dict[Capability, tuple[type, ...]] = {
    Capability.SERVER_SIGN_OUT: (HeldSessions,),
    Capability.CHAT_API: (HeldSessions,),
    Capability.PASSWORD_SIGN_IN: (PasswordSignIn,),
    Capability.ACCOUNT_TOOLS: (AccountTools,),
    Capability.API_EDGES: (ApiEdges,),
    Capability.START_REFUSALS: (StartRefusals,),
    Capability.DATABASE_ACCESS: (StoreReads,),
    Capability.MEMORY_REMAINS: (MemoryRemains,),
    Capability.ACCOUNT_REMAINS: (AccountRemains,),
    Capability.CONVERSATION_REMAINS: (ConversationRemains,),
    Capability.INDEX_PROMISES: (IndexPromises,),
    Capability.HISTORY_IMPORT: (HistoryImport,),
    Capability.MIGRATION_TOOLS: (MigrationTools,),
    Capability.EMBEDDING_MODEL_CHANGE: (EmbeddingModelChange,),
    Capability.APP_UPGRADE: (AppUpgrade,),
    Capability.MOVABLE_CLOCK: (MovableClock,),
    Capability.OWN_DATABASES: (OwnDatabases,),
}


def calls_of(part: type) -> list[str]:
    """The calls a part's protocol names (its own and those of the parts it extends)."""
    return sorted({name for klass in part.__mro__ if klass not in (Protocol, object)
                   for name in vars(klass) if not name.startswith("_")})


def missing_calls(driver: type, capability: Capability) -> list[str]:
    """The calls of the capability's parts the driver class does not implement."""
    return sorted({call for part in PARTS.get(capability, ()) for call in calls_of(part)
                   if not callable(getattr(driver, call, None))})


def unoffered_but_implemented(driver: type, lacks: Iterable[Capability]) -> list[Capability]:
    """Capabilities a driver declares lacking while it implements every call of their parts (a stale declaration:
    the scenarios that need them would skip for nothing)."""
    return [c for c in lacks if PARTS.get(c) and not missing_calls(driver, c)
            and not _shared_with_offered(driver, c)]


def _shared_with_offered(driver: type, capability: Capability) -> bool:
    """Whether the capability's calls are all a part of something the driver offers (MEMORY_REMAINS' one call is part
    of DATABASE_ACCESS's reads, say): implementing them then says nothing about this capability."""
    lacks = getattr(driver, "lacks", {})
    offered_calls = {call for other in PARTS if other not in lacks and other != capability
                     for part in PARTS[other] for call in calls_of(part)}
    return set(calls for part in PARTS[capability] for calls in calls_of(part)) <= offered_calls
