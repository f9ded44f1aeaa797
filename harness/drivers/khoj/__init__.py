"""The driver of Khoj (https://github.com/khoj-ai/khoj) 2.0, a self-hosted assistant with accounts, a web page and
long-term memories written by the server, run offline against the suite's deterministic model server.

What differs from the other apps, and why (Khoj 2.0.0b28, its server's code under .tools/khoj; the measured facts in
docs/targets.md, "Worked example: Khoj"):
- Users have no password. `POST /auth/magic {email}` creates the account on first use and issues a six-digit code
  (mailed by a configured mail service; without one only logged); `GET /auth/magic?code=&email=` answers 307 with the
  session, a signed cookie. The driver reads the code from the app's store (`database_khojuser`), as an inbox would
  give it to the user. Khoj refuses addresses at reserved domains (RFC 2606's .test), so the target gives the suite's
  addresses a real-looking domain ([accounts] email_domain).
- Khoj's session is that cookie alone (Starlette's signed session): signing out forgets it in the browser, and
  nothing on the server. A deleted account's cookie is refused, as its user is looked up on every request.
- Memories are written by a second model call after the reply (the memory manager, answered by the model server from
  what the turn said and the memories it is shown), in the background, after the turn itself is saved (also in the
  background). A turn sent through the driver returns once Khoj's own line "Saved Conversation Turn" of it is in
  its log, which Khoj writes once both are done (it decides nothing about what was written): nothing is left for
  `settle` to wait for, so the driver does not declare `writes_memories_later`. A page's turns would need the same
  wait.
- Khoj has no call that adds a memory (only the memory manager does): `remember` writes the row Khoj's own
  `save_memory` writes (the text, its vector from the same embedding model, the default search model), in its store.
- Editing a memory (`PUT /api/memories/{id}`) deletes it and creates a new one, with a new id.
- A fresh database takes Khoj's 113 migrations (30-60 s): they run once per database server into a template
  database, with the rows Khoj needs to run offline (tools/khoj_seed.py), and each app's database is a copy of it.
  The model server's address, which changes with every start, is written into those rows before each start.
- Every start runs Django's `collectstatic` into Khoj's own environment; it copies nothing once the template step
  has run it, so starts side by side do not race.
"""

from __future__ import annotations

from harness.drivers.base import AppLacks, Capability, NotBuilt
from harness.drivers.khoj.accounts import KhojAccounts
from harness.drivers.khoj.api import postgres_env, session_cookie
from harness.drivers.khoj.lifecycle import KhojLifecycle
from harness.drivers.khoj.session import KhojSession
from harness.drivers.khoj.store_reads import KhojStoreReads

__all__ = ["DRIVER", "KhojDriver", "KhojSession", "postgres_env", "session_cookie"]


class KhojDriver(KhojLifecycle, KhojAccounts, KhojStoreReads):
    name = "khoj"
    # Its store is read for what users took back and what a deleted account leaves, not for the replay's reads.
    lacks = {
        Capability.REQUESTED_USER_IDS: AppLacks("it makes an account, and its id, at an address's first sign-in",
                                                "khoj/routers/auth.py, login_magic_link"),
        Capability.PASSWORD_SIGN_IN: AppLacks("its users have no password: they sign in with a code sent to "
                                              "their address", "khoj/routers/auth.py, login_magic_link"),
        Capability.SERVER_SIGN_OUT: AppLacks("its session is a signed cookie, and signing out forgets it in the "
                                             "browser only", "khoj/routers/auth.py, logout"),
        Capability.MEMORY_SEARCH: AppLacks("its users have no search of their memories (the settings page lists "
                                           "them)", "khoj/routers/api_memories.py: get, put, delete"),
        Capability.SEARCH_SCORES: AppLacks("no search of memories, so no scores", "khoj/routers/api_memories.py"),
        Capability.MIGRATION_TOOLS: AppLacks("no legacy store to migrate from", "Khoj's documentation: one "
                                             "PostgreSQL store"),
        Capability.MOVABLE_CLOCK: NotBuilt("libfaketime preloaded into Khoj's process (issue 47)"),
        Capability.EMBEDDING_MODEL_CHANGE: NotBuilt("Khoj's search model change and its re-index"),
        Capability.APP_UPGRADE: NotBuilt("an older Khoj release installed beside the pinned one"),
        Capability.HISTORY_IMPORT: NotBuilt("a history's memories written as Khoj's save_memory writes them"),
        Capability.DATABASE_ACCESS: NotBuilt("the replay's reads of Khoj's usermemory table and its vectors"),
        Capability.CONVERSATION_REMAINS: NotBuilt("the rows of a deleted conversation in Khoj's store"),
        Capability.INDEX_PROMISES: NotBuilt("the vector indexes Khoj's migrations make"),
        Capability.API_EDGES: NotBuilt("the edges of Khoj's API, which its documentation does not state"),
        Capability.ACCOUNT_TOOLS: NotBuilt("accounts made with Django's admin commands"),
        Capability.OWN_DATABASES: NotBuilt("Khoj started on an embedded PostgreSQL of its own (its USE_EMBEDDED_DB)"),
        Capability.START_REFUSALS: NotBuilt("the mistakes Khoj's operators are warned of"),
    }
    seeding_concurrency = 4


DRIVER = KhojDriver
