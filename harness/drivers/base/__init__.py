"""What the steps need from a chat app besides the browser, whatever the app: the driver protocol.

A driver knows one kind of app (its API shapes, how it signs a browser in, how it starts on fresh data, what it can
and cannot do). Steps ask the driver and never the app's API directly, so one set of features runs against every app.
Everything a driver returns is normalised to the small records of `records.py`; this package gathers its parts.

An app is the parts it implements (`parts.py`): a driver declares once what it lacks and why (`lacks`), offers the
rest, and implements each offered capability's part. A scenario that needs one the driver lacks is skipped with one
line naming the part and the reason (`AppHandle.require`), never passed without testing anything.
"""

from __future__ import annotations

from harness.drivers.base.capabilities import Capability, DriverError
from harness.drivers.base.driver import AppDriver, RestartApp, driver_class_errors
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
    OwnTextRecall,
    PasswordSignIn,
    StartRefusals,
    StoreReads,
)
from harness.drivers.base.parts import AppLacks, Lack, NotBuilt, Part
from harness.drivers.base.records import (
    MEMORY_FIELDS,
    NEAR_TIE,
    Account,
    ApiAnswer,
    EdgeAnswer,
    Memory,
    NewUser,
    OwnTextQuery,
    OwnTextResult,
    PromisedIndex,
    RefusedStart,
    Reply,
    StoppedApp,
)
from harness.drivers.base.session import UserSession
from harness.drivers.base.starting import attached_as, catalogue_of, faults_of, start_in_folder, started_on_model_server
from harness.vocabulary.recall import Hit  # a search's ranking, as drivers return it

__all__ = [
    "Account", "AccountRemains", "AccountTools", "ApiAnswer", "ApiEdges", "AppDriver", "AppLacks", "AppUpgrade",
    "Capability", "ConversationRemains", "DriverError", "EdgeAnswer", "EmbeddingModelChange", "HeldSessions",
    "HistoryImport", "Hit", "IndexPromises", "Lack", "MEMORY_FIELDS", "Memory", "MemoryRemains", "MigrationTools",
    "MovableClock", "NEAR_TIE", "NewUser", "NotBuilt", "OwnDatabases", "OwnTextQuery", "OwnTextRecall",
    "OwnTextResult", "Part", "PasswordSignIn", "PromisedIndex", "RefusedStart", "Reply", "RestartApp",
    "StartRefusals", "StoppedApp", "StoreReads", "UserSession", "attached_as", "catalogue_of", "driver_class_errors",
    "faults_of", "start_in_folder", "started_on_model_server",
]
