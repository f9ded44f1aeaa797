"""The driver of Letta (https://github.com/letta-ai/letta), an agent server with long-term ("archival") memory, a
REST API and no web page of its own, run offline against the suite's deterministic model server (which acts as the
agent's model: it stores what users state with the archival tools and looks up what they ask, see
model_server/agent.py).

What differs from a chat app with a page, and why (Letta 0.16.8, docs.letta.com and its server's code):
- Letta's tenant is the organization: users of one organization see each other's agents, memories and
  conversations (every manager filters by `organization_id`, never by user). So each suite user gets an
  organization of their own, one user in it and one agent; deleting the account deletes the organization, which
  cascades to its users, agents, archives, passages, messages and conversations (deleting only the user leaves all
  of them in place, readable by the organization).
- There are no sessions: the acting user is the `user_id` header of each request (Letta documents it as the way to
  act as a user of a self-hosted server; its admin endpoints `/v1/admin/orgs/` and `/v1/admin/users/` are open
  unless the server runs `--secure`). By default a missing, deleted or made-up user id acts as Letta's default user;
  the driver starts Letta with LETTA_NO_DEFAULT_ACTOR=true, under which such a request is refused (404 "User not
  found" / "Non-default Actor ID is required"). `credentials` is that header, `accepts` asks Letta whether it serves
  it, and there is nothing to sign out of.
- Memory is the agent's archival memory, written and searched by the model through its tools. Letta's default agent
  (letta_v1_agent) has no archival tools unless they are listed when it is created, so the driver lists them.
  Archival search gives no similarity scores (`/archival-memory/search` returns none, `/v1/passages/search` says
  0.0), so the driver does not offer SEARCH_SCORES; its hits carry 0.0 and their order is Letta's vector ranking.
- Conversations are Letta's conversations of the user's agent (`/v1/conversations/`), each turn one agent loop
  (`streaming: false`, with room for one tool call per fact of a long message); the archival memory is shared by
  all of them, as a user's long-term memory is.
- Its store is PostgreSQL + pgvector: archival passages with vectors zero-padded to 4096 dimensions, ranked by cosine
  distance over the owner's organization and no vector index. The driver reads it as Letta ranks it (`nearest`,
  `recall_by_own_text`, with pgvector's similarity as the score) and counts what a deleted account leaves in it.
- What users take back, through Letta's own routes: deleting an archival passage deletes its row, and with it its
  vector (a column of the row) and its tags; clearing deletes the passages one by one (Letta has no call for all of
  an agent's, only one that deletes the archive itself); deleting a conversation marks it and its messages deleted
  (their rows stay, hidden from every read) and leaves the agent's archival memory as it was. Letta has no route that
  edits a passage and no switch that turns an agent's memory off.
- Letta's wheel ships no migrations and creates no tables: tools/letta_schema.py creates them with Letta's own ORM,
  in Letta's own environment, once per database server into a template database (`memtest_letta_<hash of the pins
  and the script>`); a fresh database is a copy of it.
- Letta rebuilds LETTA_PG_URI from its parsed parts (letta/database_utils.py): a Unix-socket DSN such as the
  embedded provider's (`postgresql://postgres:@/db?host=/dir`) would lose its user (parsed as the host, and asyncpg
  connects as the OS user). The driver hands Letta `postgresql://postgres@localhost/db?host=/dir`, which survives
  the rebuild: SQLAlchemy's asyncpg dialect lets the `host` query parameter win over the placeholder host.
- Letta keeps its files in $HOME/.letta and LETTA_DIR: a fresh folder per start, kept by a restart; it also writes
  its OpenAPI file into its working directory, which is that folder. Each agent keeps the model server's address in
  its model settings, so a restart starts the model server on its earlier port.
- Its fault catalogue (MISCONFIGURATIONS, for the kill matrix): the three choices above made as Letta's defaults make
  them (the default actor on, one organization for everyone, the default agent's tools), each a way a team could
  ship Letta and fail its users.
"""

from __future__ import annotations

from harness.drivers.base import AppLacks, Capability, NotBuilt
from harness.drivers.letta.accounts import LettaAccounts
from harness.drivers.letta.lifecycle import LettaLifecycle
from harness.drivers.letta.session import LettaSession
from harness.drivers.letta.store_reads import LettaStoreReads

__all__ = ["DRIVER", "LettaDriver", "LettaSession"]


class LettaDriver(LettaLifecycle, LettaAccounts, LettaStoreReads):
    seeding_concurrency = 8  # each seeded conversation is a turn of the agent loop; Letta serves them side by side

    name = "letta"
    lacks = {
        Capability.MEMORY_EDIT: AppLacks("no route edits a passage (its passage manager can, and no endpoint calls "
                                         "it)", "letta/services/passage_manager.py, update_agent_passage_by_id_async"),
        Capability.MEMORY_SWITCH: AppLacks("an agent has no switch that turns its memory off",
                                           "letta/schemas/agent.py: no such setting"),
        Capability.REQUESTED_USER_IDS: AppLacks("it chooses its users' ids (user-<uuid4>)",
                                                "letta/schemas/user.py, generate_id_field"),
        Capability.PASSWORD_SIGN_IN: AppLacks("it has no sign-in: the acting user is each request's user_id header",
                                              "docs.letta.com, self-hosting"),
        Capability.SERVER_SIGN_OUT: AppLacks("it has no sessions to sign out of", "docs.letta.com, self-hosting"),
        Capability.SEARCH_SCORES: AppLacks("its archival search answers no scores (/v1/passages/search says 0.0)",
                                           "letta/server/rest_api/routers/v1/passages.py, search_passages"),
        Capability.MIGRATION_TOOLS: AppLacks("no legacy store to migrate from", "docs.letta.com"),
        Capability.MOVABLE_CLOCK: NotBuilt("libfaketime preloaded into Letta's process; its created_at is the "
                                           "database's now() (issue 47)"),
        Capability.EMBEDDING_MODEL_CHANGE: NotBuilt("an agent's embedding configuration changed and its passages "
                                                    "embedded again"),
        Capability.APP_UPGRADE: NotBuilt("an older Letta release installed beside the pinned one"),
        Capability.HISTORY_IMPORT: NotBuilt("a history's passages loaded into each owner's archive"),
        Capability.CONVERSATION_REMAINS: NotBuilt("the rows of a deleted conversation (Letta marks them deleted)"),
        Capability.INDEX_PROMISES: NotBuilt("the vector indexes Letta's documentation promises (0.16.8 builds none)"),
        Capability.API_EDGES: NotBuilt("the edges of Letta's API"),
        Capability.ACCOUNT_TOOLS: NotBuilt("Letta's own command line for users"),
        Capability.OWN_DATABASES: NotBuilt("Letta started on its own SQLite store, with no PostgreSQL given"),
        Capability.START_REFUSALS: NotBuilt("the mistakes Letta's operators are warned of"),
    }


DRIVER = LettaDriver
