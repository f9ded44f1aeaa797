"""What the steps need from a chat app besides the browser, whatever the app: the driver protocol.

A driver knows one kind of app (its API shapes, how it signs a browser in, how it starts on fresh data, what it can
and cannot do). Steps ask the driver and never the app's API directly, so one set of features runs against every app.
Everything a driver returns is normalised to the small records of `records.py`; this package gathers its parts.

Optional capabilities are declared by the driver (`capabilities`). A scenario that needs one the driver lacks is
skipped with one line naming it (`AppHandle.require`), never passed without testing anything.
"""

from __future__ import annotations

from harness.drivers.base.capabilities import Capability, DriverError
from harness.drivers.base.driver import AppDriver, RestartApp
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
    "Account", "ApiAnswer", "AppDriver", "Capability", "DriverError", "EdgeAnswer", "Hit", "MEMORY_FIELDS", "Memory",
    "NEAR_TIE", "NewUser", "OwnTextQuery", "OwnTextResult", "PromisedIndex", "RefusedStart", "Reply", "RestartApp",
    "StoppedApp", "UserSession", "attached_as", "catalogue_of", "faults_of", "start_in_folder",
    "started_on_model_server",
]
