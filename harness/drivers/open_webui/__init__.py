"""The driver of Open WebUI (https://github.com/open-webui/open-webui), a popular self-hosted chat app with per-user
long-term memories, run offline against the suite's deterministic model server.

What differs from a simple app, and how the driver deals with it:
- the first sign-up of a fresh data folder becomes the admin; its token is the admin token (kept beside the data,
  with the secret key, so that a restart on the same data keeps every session valid);
- settings given by environment are stored on the first start of a data folder, so every start is on a fresh
  folder unless it is a restart (and `ENABLE_PERSISTENT_CONFIG=false` makes a restart read them again);
- the web front end reads its token from `localStorage.token`, so a signed-in browser needs local storage too;
- memories are written by the server after each turn (the background memory review: one more model call), not by
  the page: `settle` waits for those reviews through the model server's log, then for what they told the app to
  store; it never decides what should have been stored. A user who turned memory off (Settings > Personalization >
  Memory) has no turn reviewed until it is on again: `settle` waits for no review of the turns sent meanwhile;
- what users take back goes through the routes the page's memory manager, chat menu and memory switch call: a
  memory deleted (DELETE /api/v1/memories/{id}), edited (POST /api/v1/memories/{id}/update), all cleared (DELETE
  /api/v1/memories/delete/user), a chat deleted (DELETE /api/v1/chats/{id}), memory turned off and on (the user's
  `ui.memory` setting, which the page reads when it loads and then sends with every message);
- an embedding-model change is the admin setting plus the admin's memory re-index;
- its memory search scores (1 + cosine) / 2 in both its vector stores (Chroma and pgvector): the driver gives the
  cosine back, the similarity the suite's expectations are computed in;
- it chooses its users' ids: a history's owners are created through the admin API and mapped, and its memories are
  written as rows of its `memory` table (store.py) with their ids and creation times, then embedded by its own
  re-index; the replay reads them back through that table and the owner's own memory search;
- an upgrade is the target's release started on the data (folder and database) of an older one, which migrates
  its schema on start.
"""

from __future__ import annotations

from harness.drivers.base import Capability
from harness.drivers.open_webui.accounts import OpenWebUIAccounts, tokens_in
from harness.drivers.open_webui.api import Reviews, hits_of
from harness.drivers.open_webui.lifecycle import MISCONFIGURATIONS, OpenWebUILifecycle
from harness.drivers.open_webui.memory_writes import OpenWebUIMemoryWrites
from harness.drivers.open_webui.session import OpenWebUISession, shown_branch
from harness.drivers.open_webui.store_reads import OpenWebUIStoreReads

__all__ = ["DRIVER", "MISCONFIGURATIONS", "OpenWebUIDriver", "OpenWebUISession", "Reviews", "hits_of", "shown_branch",
           "tokens_in"]


class OpenWebUIDriver(OpenWebUILifecycle, OpenWebUIAccounts, OpenWebUIMemoryWrites, OpenWebUIStoreReads):
    name = "open-webui"
    capabilities = frozenset({Capability.APP_SETTINGS, Capability.EMBEDDING_MODEL_CHANGE, Capability.MEMORY_SEARCH,
                              Capability.SERVER_SIGN_OUT, Capability.RESTART, Capability.HISTORY_IMPORT,
                              Capability.APP_UPGRADE, Capability.MEMORY_DELETE, Capability.MEMORY_EDIT,
                              Capability.MEMORY_CLEAR, Capability.CONVERSATION_DELETE, Capability.MEMORY_SWITCH,
                              Capability.MEMORY_REMAINS})
    kept_fields = ("created_at",)  # a memory has no conversation and no expiry in Open WebUI
    writes_memories_later = True  # its background memory review, after each turn


DRIVER = OpenWebUIDriver
