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

from harness.drivers.base import AppLacks, Capability, NotBuilt
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
    lacks = {
        Capability.REQUESTED_USER_IDS: AppLacks("it chooses its users' ids (a uuid4 at sign-up)",
                                                "open_webui/models/auths.py, insert_new_auth"),
        Capability.MIGRATION_TOOLS: AppLacks("no legacy store to migrate from", "docs.openwebui.com"),
        Capability.ACCOUNT_TOOLS: AppLacks("no command line for accounts (its admin page and API make them)",
                                           "docs.openwebui.com"),
        Capability.CHAT_API: NotBuilt("its users chat on its page, whose memory review the driver waits for; its "
                                      "chat completions API is not driven"),
        Capability.PASSWORD_SIGN_IN: NotBuilt("a sign-in through POST /api/v1/auths/signin from a client without a "
                                              "session"),
        Capability.MOVABLE_CLOCK: NotBuilt("libfaketime preloaded into Open WebUI's process (issue 47)"),
        Capability.DATABASE_ACCESS: NotBuilt("the replay's reads of its vector store (Chroma or pgvector)"),
        Capability.CONVERSATION_REMAINS: NotBuilt("the rows of a deleted chat in its store"),
        Capability.ACCOUNT_REMAINS: NotBuilt("the rows a deleted account leaves in its store and vector store"),
        Capability.INDEX_PROMISES: NotBuilt("the vector indexes its pgvector store promises"),
        Capability.API_EDGES: NotBuilt("the edges of its API"),
        Capability.OWN_DATABASES: NotBuilt("Open WebUI started on its own SQLite store and Chroma, with no "
                                           "database given"),
        Capability.START_REFUSALS: NotBuilt("the mistakes its operators are warned of"),
    }
    kept_fields = ("created_at",)  # a memory has no conversation and no expiry in Open WebUI
    writes_memories_later = True  # its background memory review, after each turn


DRIVER = OpenWebUIDriver
