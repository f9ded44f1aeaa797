"""The driver of the reference app (memchat), as the parts it implements: its JSON API, a cookie session, an admin token
handed to it at start, and every optional capability (requested ids, a settable clock, its migration and re-embedding
tools)."""

from __future__ import annotations

from harness.drivers.base import MEMORY_FIELDS, AppLacks, Capability
from harness.drivers.memchat.accounts import MemchatAccounts
from harness.drivers.memchat.edges import MemchatEdges
from harness.drivers.memchat.lifecycle import MemchatLifecycle
from harness.drivers.memchat.own_databases import MemchatOwnDatabases
from harness.drivers.memchat.session import MemchatSession
from harness.drivers.memchat.store_reads import MemchatStoreReads
from harness.drivers.memchat.tools import MemchatTools

__all__ = ["DRIVER", "MemchatDriver", "MemchatSession"]


class MemchatDriver(MemchatLifecycle, MemchatAccounts, MemchatEdges, MemchatStoreReads, MemchatTools,
                    MemchatOwnDatabases):
    name = "memchat"
    lacks = {Capability.APP_UPGRADE: AppLacks("one release: there is no older one to upgrade from",
                                              "memchat/__init__.py, __version__")}
    kept_fields = MEMORY_FIELDS


DRIVER = MemchatDriver
