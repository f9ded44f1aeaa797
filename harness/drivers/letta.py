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
  in Letta's own environment, before the first start on a fresh database.
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

import base64
import json
import subprocess
import tempfile
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

import httpx
import numpy as np
import psycopg
from pgvector.psycopg import register_vector
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict

from harness.app.app_launcher import ROOT, AppLaunchError, RunningApp, free_port
from harness.app.target import Target
from harness.drivers.base import (
    Account,
    ApiAnswer,
    AppDriver,
    Capability,
    DriverError,
    Hit,
    Memory,
    OwnTextQuery,
    OwnTextResult,
    Reply,
    UserSession,
    attached_as,
    catalogue_of,
    faults_of,
    start_in_folder,
    started_on_model_server,
)
from harness.services.databases import IndexScans, scalar, vector_index_scans
from harness.services.http_clients import tls
from harness.vocabulary.turn import Turn
from model_server import embeddings
from model_server.agent import found_memories, is_app_event
from model_server.client import start_model_server
from model_server.server import CHAT_MODEL

EMBEDDER = "text-embedding-3-small"  # the model server's embedding model under OpenAI's name, 1536 dimensions
STORED_DIMS = 4096  # Letta pads every vector to its column's size (letta.constants.MAX_EMBEDDING_DIM)
ARCHIVAL_TOOLS = ("archival_memory_insert", "archival_memory_search")
SEARCH_TOOL = "archival_memory_search"
MAX_STEPS = 200  # one tool call per fact: a message of 60 facts takes 61 steps (Letta's default is 50)
PAGE = 100  # Letta's default page of messages and memories
CONVERSATION_PAGE = 50  # Letta's default page of conversations
LISTING = 1000  # one big page, where a read only has to show whether another user's data is in it
SCHEMA_TIMEOUT = 300.0
SEND_TIMEOUT = 900.0  # a turn of 60 facts is 61 model calls and 60 embeddings; minutes on a loaded machine
HTTP_TIMEOUT = 120.0
READERS = 8
BROAD_QUERY = "my"  # Letta's vector search has no threshold: any query returns the nearest memories, all of them
SHARED_ORGANIZATION = "memtest-everyone"  # under the fault one-organization

# Letta as a team could ship it wrongly: how its documented defaults and a deployment's shortcuts fail users. Each
# switched on by the setting `faults` (the kill matrix's); targets/letta.toml names the scenarios that must catch it.
MISCONFIGURATIONS: dict[str, dict[str, str]] = {
    "default-actor-on": {
        "bug_class": "run as Letta ships, without LETTA_NO_DEFAULT_ACTOR=true",
        "user_sees": "requests as a deleted account or a made-up user id are served, as Letta's default user"},
    "one-organization": {
        "bug_class": "every user put in one organization (Letta's tenant), as its default organization does, and a "
                     "deleted account's user removed from it",
        "user_sees": "a deleted account's agent, conversations and memories stay in the store, the organization's to "
                     "read (each agent still recalls only its own archive)"},
    "agent-without-archival-tools": {
        "bug_class": "agents created as Letta's default agent, whose tools do not include the archival memory",
        "user_sees": "nothing told in one conversation is known in the next"},
}


def letta_pg_uri(dsn: str) -> str:
    """The DSN in a form that survives Letta's rebuild of LETTA_PG_URI: user and password in the authority, a
    socket folder as the `host` query parameter behind a placeholder host (see the module's docstring)."""
    parts = conninfo_to_dict(dsn)
    user = quote(str(parts.get("user") or "postgres"), safe="")
    password = str(parts.get("password") or "")
    auth = user + (f":{quote(password, safe='')}" if password else "")
    host, port = str(parts.get("host") or "localhost"), parts.get("port")
    database = quote(str(parts.get("dbname") or "postgres"), safe="")
    at_port = f":{port}" if port else ""
    if host.startswith("/"):
        return f"postgresql://{auth}@localhost{at_port}/{database}?host={quote(host, safe='/')}"
    return f"postgresql://{auth}@{f'[{host}]' if ':' in host else host}{at_port}/{database}"


def _done(resp: httpx.Response, what: str) -> None:
    """A request Letta must have served (its body, if any, not read: a deletion answers null, a message or nothing)."""
    if resp.status_code >= 400:
        raise DriverError(f"{what}: HTTP {resp.status_code} {resp.text[:300]}")


def _check(resp: httpx.Response, what: str) -> Any:
    _done(resp, what)
    return resp.json()


def _content(message: dict) -> str:
    """A Letta message's text: a string, or its text parts."""
    content = message.get("content")
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text")
    return content if isinstance(content, str) else ""


def _is_turn(message: dict) -> bool:
    """A user's or the assistant's turn, not Letta's own heartbeat, login or alert (stored as user messages)."""
    if message.get("message_type") == "user_message":
        return not is_app_event({"content": _content(message)})
    return message.get("message_type") == "assistant_message"


def _floats(vector: Any) -> np.ndarray:
    """A pgvector value as float32 (pgvector's psycopg loader gives a Vector, older ones an array)."""
    return np.asarray(vector.to_numpy() if hasattr(vector, "to_numpy") else vector, dtype="<f4")


class LettaSession(UserSession):
    """What one user does through Letta's API: every request carries the user's id, and nothing else."""

    def __init__(self, app: RunningApp, account: Account, agent_id: str,
                 peer: Callable[[Account], LettaSession]) -> None:
        self.account = account
        self.agent_id = agent_id
        self._peer = peer  # another user's own session, to learn the ids of their data as they would see them
        self.http = httpx.Client(verify=tls(), base_url=app.base_url, timeout=HTTP_TIMEOUT,
                                 headers={"user_id": account.id})

    # -- lists, every page ---------------------------------------------------------------------------------------
    def _pages(self, path: str, params: dict[str, Any], page: int, what: str) -> Iterator[dict]:
        """Every item of a list Letta pages with an `after` cursor (the last id of the page before), until a page
        brings nothing new: a page may hold fewer items than asked for and still not be the last (Letta applies a
        filter by message type after the limit)."""
        after: str | None = None
        seen: set[tuple] = set()
        while True:
            query = {**params, "limit": page, **({"after": after} if after else {})}
            batch = _check(self.http.get(path, params=query), what)
            # A memgpt step's reasoning and its reply share an id: an item is its id and its type.
            fresh = [item for item in batch if (item.get("id"), item.get("message_type")) not in seen]
            yield from fresh
            if not fresh:
                return
            seen.update((item.get("id"), item.get("message_type")) for item in batch)
            after = batch[-1]["id"]

    def conversation_ids(self) -> list[str]:
        """The agent's conversations, the most recently active first (those with no message yet, newest first,
        after them)."""
        listed = list(self._pages("/v1/conversations/", {"agent_id": self.agent_id, "order": "desc",
                                                         "order_by": "last_message_at"}, CONVERSATION_PAGE,
                                  f"listing {self.account.label}'s conversations"))
        return [c["id"] for c in listed]

    def _messages(self, conversation_id: str) -> list[dict]:
        """Every message of the conversation, oldest first, of every type."""
        return list(self._pages(f"/v1/conversations/{conversation_id}/messages", {"order": "asc"}, PAGE,
                                f"reading {self.account.label}'s conversation {conversation_id}"))

    def turns(self, conversation_id: str) -> list[Turn]:
        return [Turn("user" if m["message_type"] == "user_message" else "assistant", _content(m))
                for m in self._messages(conversation_id) if _is_turn(m)]

    def ask_for_conversation(self, conversation_id: str) -> ApiAnswer:
        resp = self.http.get(f"/v1/conversations/{conversation_id}")
        return ApiAnswer(resp.status_code, resp.text)

    def memories(self) -> list[Memory]:
        rows = self._pages(f"/v1/agents/{self.agent_id}/archival-memory", {"ascending": "true"}, PAGE,
                           f"listing {self.account.label}'s archival memory")
        return [Memory(p["id"], p.get("text") or "") for p in rows]

    def remember(self, texts: list[str]) -> None:
        for text in texts:
            _check(self.http.post(f"/v1/agents/{self.agent_id}/archival-memory", json={"text": text}),
                   f"inserting into {self.account.label}'s archival memory")

    def search(self, query: str, k: int) -> list[Hit]:
        data = _check(self.http.get(f"/v1/agents/{self.agent_id}/archival-memory/search",
                                    params={"query": query, "top_k": k}),
                      f"searching {self.account.label}'s archival memory")
        return [Hit(r["id"], 0.0, r.get("content") or "") for r in data.get("results", [])]  # Letta gives no score

    def seed_conversation(self, sentence: str) -> str:
        """A conversation in which the user told the sentence, through the agent loop: what Letta stores of it is
        what the agent stored."""
        conversation = self.start_conversation()
        self.send(conversation, sentence)
        return conversation

    # -- chatting ------------------------------------------------------------------------------------------------
    def start_conversation(self) -> str:
        created = _check(self.http.post("/v1/conversations/", params={"agent_id": self.agent_id}, json={}),
                         f"starting a conversation for {self.account.label}")
        return str(created["id"])

    def send(self, conversation_id: str, text: str) -> Reply:
        body = {"messages": [{"role": "user", "content": text}], "streaming": False, "max_steps": MAX_STEPS}
        data = _check(self.http.post(f"/v1/conversations/{conversation_id}/messages", json=body,
                                     timeout=SEND_TIMEOUT), f"{self.account.label} sending a message")
        messages = data.get("messages") or []
        reply = "\n".join(_content(m) for m in messages if m.get("message_type") == "assistant_message")
        recalled = [text for m in messages if m.get("message_type") == "tool_return_message"
                    and m.get("name") == SEARCH_TOOL and m.get("status") == "success"
                    for text in found_memories(str(m.get("tool_return") or ""))]
        return Reply(reply, tuple(recalled))

    def credentials(self) -> dict:
        return {"user_id": self.account.id}

    # -- what users take back: Letta's own routes for an agent's archival memory and its conversations ---------------
    def delete_memory(self, memory_id: str) -> None:
        """`DELETE /v1/agents/{agent}/archival-memory/{passage}`: Letta deletes the passage's row, its vector with it
        (a column of the row) and its tags."""
        _done(self.http.delete(f"/v1/agents/{self.agent_id}/archival-memory/{memory_id}"),
               f"deleting {self.account.label}'s archival memory {memory_id}")

    def clear_memories(self) -> None:
        """Letta has no call that deletes all of an agent's passages (only `DELETE /v1/archives/{id}`, which deletes
        the archive itself, detaching it from the agent): every passage listed, deleted one by one, as a client
        clears them."""
        for memory in self.memories():
            self.delete_memory(memory.id)

    def delete_conversation(self, conversation_id: str) -> None:
        """`DELETE /v1/conversations/{id}`: Letta marks the conversation and its messages deleted (it keeps their rows)
        and deletes the conversation's own memory blocks; the agent's archival memory is not touched."""
        _done(self.http.delete(f"/v1/conversations/{conversation_id}"),
               f"deleting {self.account.label}'s conversation {conversation_id}")

    # -- another user's data -------------------------------------------------------------------------------------
    def reads_of(self, other: Account, conversation_ids: list[str], memory_ids: list[str]) -> dict[str, ApiAnswer]:
        """Every read of Letta's API that could reach `other`'s data: by the ids their own API shows them (agent,
        archive, memory blocks, conversations, messages, runs, steps) and by every listing and search. Letta has no
        read of one memory by its id (`memory_ids`): memories are reached through the agent, archive and searches."""
        theirs = self._peer(other)
        agent = theirs.agent_id
        own = theirs.http
        archives = [a["id"] for a in _check(own.get("/v1/archives/", params={"agent_id": agent}),
                                            f"listing {other.label}'s archives")]
        blocks = [b["id"] for b in _check(own.get(f"/v1/agents/{agent}/core-memory/blocks"),
                                          f"listing {other.label}'s memory blocks")]
        # Runs and steps by the ids on the other's messages (Letta's step listing answers 400 to a filter by agent).
        everything = [m for cid in conversation_ids for m in theirs._messages(cid)]
        messages = sorted({str(m["id"]) for m in everything})
        runs = sorted({str(m["run_id"]) for m in everything if m.get("run_id")})
        steps = sorted({str(m["step_id"]) for m in everything if m.get("step_id")})

        gets: dict[str, tuple[str, dict[str, Any]]] = {
            "agents listing": ("/v1/agents/", {"limit": LISTING}),
            f"agent {agent}": (f"/v1/agents/{agent}", {}),
            f"agent {agent} export": (f"/v1/agents/{agent}/export", {}),
            f"agent {agent} context": (f"/v1/agents/{agent}/context", {}),
            f"agent {agent} core memory": (f"/v1/agents/{agent}/core-memory", {}),
            f"agent {agent} memory blocks": (f"/v1/agents/{agent}/core-memory/blocks", {}),
            f"agent {agent} archival memory": (f"/v1/agents/{agent}/archival-memory", {"limit": LISTING}),
            f"agent {agent} archival search": (f"/v1/agents/{agent}/archival-memory/search",
                                               {"query": BROAD_QUERY, "top_k": LISTING}),
            f"agent {agent} messages": (f"/v1/agents/{agent}/messages", {"limit": LISTING}),
            f"agent {agent} default conversation": ("/v1/conversations/default/messages",
                                                    {"agent_id": agent, "limit": LISTING}),
            "conversations listing": ("/v1/conversations/", {"limit": LISTING}),
            f"conversations of agent {agent}": ("/v1/conversations/", {"agent_id": agent, "limit": LISTING}),
            "messages listing": ("/v1/messages/", {"limit": LISTING}),
            "archives listing": ("/v1/archives/", {"limit": LISTING}),
            "blocks listing": ("/v1/blocks/", {"limit": LISTING}),
            "runs listing": ("/v1/runs/", {"limit": LISTING}),
            "steps listing": ("/v1/steps/", {"limit": LISTING}),
        }
        for cid in conversation_ids:
            gets[f"conversation {cid}"] = (f"/v1/conversations/{cid}", {})
            gets[f"conversation {cid} messages"] = (f"/v1/conversations/{cid}/messages", {"limit": LISTING})
            gets[f"messages listing of conversation {cid}"] = ("/v1/messages/", {"conversation_id": cid,
                                                                                 "limit": LISTING})
        for ident in archives:
            gets[f"archive {ident}"] = (f"/v1/archives/{ident}", {})
            gets[f"agents of archive {ident}"] = (f"/v1/archives/{ident}/agents", {})
        for ident in blocks:
            gets[f"block {ident}"] = (f"/v1/blocks/{ident}", {})
        for ident in runs:
            gets[f"run {ident} messages"] = (f"/v1/runs/{ident}/messages", {"limit": LISTING})
        for ident in steps:
            gets[f"step {ident} messages"] = (f"/v1/steps/{ident}/messages", {"limit": LISTING})
        for ident in messages:
            gets[f"message {ident}"] = (f"/v1/messages/{ident}", {})
        with ThreadPoolExecutor(READERS) as pool:  # hundreds of reads by id; Letta serves them side by side
            answers = dict(zip(gets, pool.map(lambda read: self._answer(self.http.get(read[0], params=read[1])),
                                              gets.values()), strict=True))

        searches: dict[str, dict[str, Any]] = {
            f"passages search of agent {agent}": {"query": BROAD_QUERY, "agent_id": agent, "limit": 100},
            "passages search": {"query": BROAD_QUERY, "limit": 100},
            "passages listing": {"limit": 100},
            **{f"passages search of archive {a}": {"query": BROAD_QUERY, "archive_id": a, "limit": 100}
               for a in archives},
        }
        for label, body in searches.items():
            answers[label] = self._answer(self.http.post("/v1/passages/search", json=body))
        return answers

    @staticmethod
    def _answer(resp: httpx.Response) -> ApiAnswer:
        return ApiAnswer(resp.status_code, resp.text)

    def close(self) -> None:
        self.http.close()


class LettaDriver(AppDriver):
    seeding_concurrency = 8  # each seeded conversation is a turn of the agent loop; Letta serves them side by side

    name = "letta"
    # What users take back: deleting a memory, clearing them (one by one) and deleting a conversation. Letta has no
    # route that edits a passage (its passage manager can, but no endpoint calls it) and no switch that turns an
    # agent's memory off: MEMORY_EDIT and MEMORY_SWITCH are not offered.
    capabilities = frozenset({Capability.CHAT_API, Capability.RESTART, Capability.DATABASE_ACCESS,
                              Capability.MEMORY_SEARCH, Capability.APP_SETTINGS, Capability.MEMORY_DELETE,
                              Capability.MEMORY_CLEAR, Capability.CONVERSATION_DELETE})

    def __init__(self, target: Target) -> None:
        super().__init__(target)
        # Per user id: the organization and agent the driver made for them (ids are uuids: unique across apps).
        self._orgs: dict[str, str] = {}
        self._agents: dict[str, str] = {}

    # -- life cycle ------------------------------------------------------------------------------------------------
    @property
    def model(self) -> str:
        return str(self.target.app.get("agent_model") or f"openai-proxy/{CHAT_MODEL}")

    @property
    def embedding(self) -> str:
        return str(self.target.app.get("agent_embedding") or f"openai/{EMBEDDER}")

    def _env(self, folder: Path, pg_dsn: str, model_url: str, faults: list[str]) -> dict[str, str]:
        # The target's environment first: what isolation and offline running rest on is the driver's to set.
        env = {**self.target.env, "OPENAI_BASE_URL": model_url, "LETTA_PG_URI": letta_pg_uri(pg_dsn),
               "HOME": str(folder / "home"), "LETTA_DIR": str(folder / "letta"), "ORT_DISABLE_TELEMETRY": "1",
               "LETTA_NO_DEFAULT_ACTOR": "true"}
        if "default-actor-on" in faults:
            del env["LETTA_NO_DEFAULT_ACTOR"]
        return env

    def _prepare_schema(self, pg_dsn: str, env: dict[str, str], log_path: Path) -> None:
        """Letta's tables, created with Letta's own ORM when the database has none yet."""
        with psycopg.connect(pg_dsn, connect_timeout=10) as conn:
            if scalar(conn, "SELECT to_regclass('public.organizations') IS NOT NULL"):
                return
        python = ROOT / str(self.target.app.get("python", ".tools/letta/bin/python"))
        log = log_path.with_suffix(".schema.log")
        try:
            done = subprocess.run([str(python), str(ROOT / "tools" / "letta_schema.py")], env=env, cwd=ROOT,
                                  capture_output=True, text=True, timeout=SCHEMA_TIMEOUT)
        except FileNotFoundError:
            raise AppLaunchError(f"{python} does not exist: install Letta with `make letta`") from None
        except subprocess.TimeoutExpired:
            raise AppLaunchError(f"creating Letta's tables took over {SCHEMA_TIMEOUT:g} s") from None
        log.write_text(done.stdout + done.stderr, encoding="utf-8")
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or [f"exit code {done.returncode}"])[-1]
            raise AppLaunchError(f"Letta's tables could not be created: {last} (log: {log})")

    def start(self, *, pg_dsn: str, redis_url: str, settings: dict[str, str], log_path: Path,
              data_dir: Path | None = None, port: int | None = None) -> RunningApp:
        unknown = sorted(k for k, v in settings.items() if v and k != "faults")
        if unknown:
            raise DriverError(f"the letta driver takes no settings but faults, not {', '.join(unknown)}")
        faults = faults_of(settings)
        self.check_faults(faults)
        folder = data_dir or Path(tempfile.mkdtemp(prefix="memtest-letta-", dir="/tmp"))
        (folder / "home").mkdir(parents=True, exist_ok=True)
        (folder / "letta").mkdir(exist_ok=True)
        # Letta stores the model server's address in every agent's model settings: a restart keeps the port.
        model_port = folder / "model-port"
        # The model server answers the chat model the agents are configured with (a handle: provider/name).
        model = start_model_server(log_path.with_suffix(".model.log"),
                                   int(model_port.read_text()) if model_port.exists() else None,
                                   chat_models=(self.model.partition("/")[2] or self.model,))
        model_port.write_text(str(urlsplit(model.base_url).port))
        try:
            env = self._env(folder, pg_dsn, model.base_url, faults)
            self._prepare_schema(pg_dsn, env, log_path)
            port = port or free_port()
            process, health = start_in_folder(self.target, port=port, env=env, log_path=log_path, cwd=folder,
                                              healthy=lambda h: h.get("status") == "ok")
        except BaseException:
            model.stop()
            raise
        return started_on_model_server(port, health, process, model, pg_dsn=pg_dsn, redis_url=redis_url,
                                       settings=settings, log_path=log_path, data_dir=folder, app="Letta",
                                       embedder=EMBEDDER)

    def attach(self, base_url: str, admin_token: str | None) -> RunningApp:
        return attached_as(self.target, base_url, admin_token, app="Letta", embedder=EMBEDDER)

    def describe(self, app: RunningApp) -> dict[str, str]:
        return {"app": f"Letta {app.health.get('version', '')}".strip(), "version": str(app.health.get("version", "")),
                "database": "PostgreSQL + pgvector"}

    # -- users -----------------------------------------------------------------------------------------------------
    def create_user(self, app: RunningApp, name: str, email: str, password: str,
                    user_id: str | None = None) -> Account:
        """An organization of the user's own, the user in it (named by the address: Letta keeps no e-mail), and
        their agent with the archival tools. `password` is not used: Letta users have none."""
        if user_id is not None:
            raise DriverError("Letta chooses its users' ids itself (user-<uuid4>)")
        faults = faults_of(app.settings)
        admin = httpx.Client(verify=tls(), base_url=app.base_url, timeout=HTTP_TIMEOUT)
        with admin:
            org = (self._shared_organization(admin) if "one-organization" in faults else
                   _check(admin.post("/v1/admin/orgs/", json={"name": email}), f"creating {email}'s organization"))
            user = _check(admin.post("/v1/admin/users/", json={"name": email, "organization_id": org["id"]}),
                          f"creating user {email}")
            acting = {"user_id": user["id"]}
            # Letta's base tools exist per organization; an agent cannot name one its organization lacks.
            _check(admin.post("/v1/tools/add-base-tools", headers=acting), f"adding the base tools for {email}")
            tools = {} if "agent-without-archival-tools" in faults else {"tools": list(ARCHIVAL_TOOLS)}
            agent = _check(admin.post("/v1/agents/", headers=acting, json={
                "name": "assistant", "model": self.model, "embedding": self.embedding, **tools,
                "memory_blocks": [{"label": "human", "value": f"The user's name is {name}."},
                                  {"label": "persona", "value": "I am a helpful assistant with a long memory."}]}),
                f"creating {email}'s agent")
        self._orgs[user["id"]], self._agents[user["id"]] = org["id"], agent["id"]
        return Account(str(user["id"]), email, "", name)

    @staticmethod
    def _shared_organization(admin: httpx.Client) -> dict:
        """The one organization every user is put in under the fault one-organization (made by its first user)."""
        orgs = _check(admin.get("/v1/admin/orgs/", params={"limit": 1000}), "listing organizations")
        found = next((o for o in orgs if o.get("name") == SHARED_ORGANIZATION), None)
        return found or _check(admin.post("/v1/admin/orgs/", json={"name": SHARED_ORGANIZATION}),
                               "creating the organization of every user")

    def _org_of(self, app: RunningApp, account: Account) -> str | None:
        if account.id in self._orgs:
            return self._orgs[account.id]
        after = None
        with httpx.Client(verify=tls(), base_url=app.base_url, timeout=HTTP_TIMEOUT) as admin:
            while True:
                users = _check(admin.get("/v1/admin/users/", params={"limit": 100, **({"after": after} if after
                                                                                    else {})}), "listing users")
                found = next((u for u in users if u["id"] == account.id), None)
                if found or len(users) < 100:
                    return found["organization_id"] if found else None
                after = users[-1]["id"]

    def delete_user(self, app: RunningApp, account: Account) -> None:
        """Delete the user's organization, and with it everything of theirs (a user already gone is fine)."""
        org = self._org_of(app, account)
        if org is None:
            return
        if "one-organization" in faults_of(app.settings):  # the organization is everyone's: only the user goes
            resp = httpx.delete(app.base_url + "/v1/admin/users/", params={"user_id": account.id}, timeout=HTTP_TIMEOUT)
        else:
            resp = httpx.delete(app.base_url + "/v1/admin/orgs/", params={"org_id": org}, timeout=HTTP_TIMEOUT)
        if resp.status_code not in (200, 404):
            raise DriverError(f"deleting {account.label}'s organization: HTTP {resp.status_code} {resp.text[:200]}")

    def _agent_of(self, app: RunningApp, account: Account) -> str:
        if account.id not in self._agents:
            agents = _check(httpx.get(app.base_url + "/v1/agents/", verify=tls(), headers={"user_id": account.id},
                                      timeout=HTTP_TIMEOUT), f"finding {account.label}'s agent")
            if not agents:
                raise DriverError(f"{account.label} has no agent in Letta")
            self._agents[account.id] = agents[0]["id"]
        return self._agents[account.id]

    def session(self, app: RunningApp, account: Account) -> LettaSession:
        return LettaSession(app, account, self._agent_of(app, account), lambda other: self.session(app, other))

    def browser_state(self, app: RunningApp, session: UserSession) -> dict:
        raise DriverError("Letta has no web page to sign a browser into: its users act through its API only")

    def accepts(self, app: RunningApp, browser_state: dict) -> bool:
        """Whether Letta serves requests with these credentials ({"user_id": ...}): 200 on the user's agent list,
        refused with 404 (unknown or deleted user, or none under LETTA_NO_DEFAULT_ACTOR) or 400 (malformed id)."""
        user_id = browser_state.get("user_id")
        if not isinstance(user_id, str):
            raise DriverError(f"Letta credentials are {{'user_id': ...}}, not {sorted(browser_state)}")
        resp = httpx.get(app.base_url + "/v1/agents/", verify=tls(), params={"limit": 1}, headers={"user_id": user_id},
                         timeout=HTTP_TIMEOUT)
        if resp.status_code == 200:
            return True
        if resp.status_code in (400, 401, 403, 404):
            return False
        raise DriverError(f"Letta answered HTTP {resp.status_code} for user {user_id}: {resp.text[:200]}")

    def fault_catalogue(self) -> list[dict[str, str]]:
        return catalogue_of(MISCONFIGURATIONS)

    def made_up_credentials(self, app: RunningApp, like: dict) -> dict:
        return {"user_id": f"user-{uuid.uuid4()}"}  # the shape of Letta's own ids, never issued

    # -- the store ---------------------------------------------------------------------------------------------------
    def remains_of(self, app: RunningApp, account: Account, conversation_ids: list[str],
                   memory_ids: list[str]) -> dict[str, int]:
        """Rows Letta's tables still hold of the deleted user, by table and what ties them to the user: every table
        with a column of the user's id, organization, agent or conversations (found in the catalogue, so tables a
        newer Letta adds are counted too), and the user's and memories' own rows."""
        if not app.pg_dsn:
            raise DriverError("the Letta driver needs the app's database (--pg-dsn) to read what it keeps")
        ties = {"user_id": ("the user", [account.id]), "created_by_id": ("the user", [account.id]),
                "organization_id": ("the organization", [self._orgs.get(account.id, "")]),
                "agent_id": ("the agent", [self._agents.get(account.id, "")]),
                "conversation_id": ("the conversations", conversation_ids)}
        counts: dict[str, int] = {}
        with psycopg.connect(app.pg_dsn, connect_timeout=10) as conn:
            columns = conn.execute("SELECT table_name, column_name FROM information_schema.columns "
                                   "WHERE table_schema = 'public' AND column_name = ANY(%s) ORDER BY 1, 2",
                                   [list(ties)]).fetchall()
            checks = [(table, column, *ties[column]) for table, column in columns]
            checks += [("organizations", "id", *ties["organization_id"]), ("users", "id", *ties["user_id"]),
                       ("agents", "id", *ties["agent_id"]), ("archival_passages", "id", "the memories", memory_ids),
                       ("conversations", "id", *ties["conversation_id"])]
            for table, column, what, values in checks:
                query = sql.SQL("SELECT count(*) FROM {} WHERE {} = ANY(%s)").format(sql.Identifier(table),
                                                                                    sql.Identifier(column))
                counts[f"{table}.{column} of {what}"] = int(scalar(conn, query, [list(values)]))
        return counts

    def memory_remains(self, app: RunningApp, memory_ids: list[str]) -> dict[str, int]:
        """Letta keeps an archival memory in one row of `archival_passages`, its vector in that row's `embedding`
        column (pgvector) and its tags in `passage_tags`: rows of each, and vectors, left of these memories. An
        archive may keep its vectors in Turbopuffer instead (`archives.vector_db_provider`), where the driver cannot
        look: it says so rather than count what it cannot see."""
        with self._store(app) as conn:
            elsewhere = scalar(conn, "SELECT count(*) FROM archives WHERE vector_db_provider::text <> 'NATIVE'")
            if elsewhere:
                raise DriverError(f"{elsewhere} of Letta's archives keep their vectors in Turbopuffer, which the "
                                  "letta driver cannot read: run Letta without LETTA_USE_TPUF")
            ids = [list(memory_ids)]
            return {
                "archival_passages rows": int(scalar(conn, "SELECT count(*) FROM archival_passages WHERE id = ANY(%s)",
                                                     ids)),
                "archival_passages.embedding vectors": int(scalar(
                    conn, "SELECT count(*) FROM archival_passages WHERE id = ANY(%s) AND embedding IS NOT NULL", ids)),
                "passage_tags rows": int(scalar(conn, "SELECT count(*) FROM passage_tags WHERE passage_id = ANY(%s)",
                                                ids)),
            }

    # The owner of an archival passage is the one user of its organization (the driver makes one per user).
    _OWNED = ("SELECT p.id, u.id AS owner, p.text, p.created_at, p.embedding_config->>'embedding_model' AS embedder,"
              " p.embedding FROM archival_passages p LEFT JOIN users u ON u.organization_id = p.organization_id")

    def _store(self, app: RunningApp) -> psycopg.Connection:
        if not app.pg_dsn:
            raise DriverError("the Letta driver needs the app's database (--pg-dsn) to read its store")
        conn = psycopg.connect(app.pg_dsn, connect_timeout=10, autocommit=True)
        register_vector(conn)
        return conn

    @staticmethod
    def _query_vector(vector: bytes) -> np.ndarray:
        """A query as Letta sends it to pgvector: the embedding zero-padded to the column's 4096 dimensions (which
        leaves every cosine distance as it is)."""
        values = np.frombuffer(vector, dtype="<f4")
        return np.pad(values, (0, STORED_DIMS - values.shape[0]))

    def embed(self, texts: list[str], embedder: str) -> list[bytes | None]:
        """As Letta's embedder (the model server's text-embedding-3-small) embeds them; None for a text with no
        feature, whose vector is all zeros and matches nothing."""
        if embedder != EMBEDDER:
            raise DriverError(f"Letta embeds with {EMBEDDER}, not {embedder!r}")
        vectors = [np.asarray(embeddings.embed(text, embedder), dtype="<f4") for text in texts]
        return [v.tobytes() if v.any() else None for v in vectors]

    def export_memories(self, app: RunningApp, path: Path) -> None:
        """Every archival passage with its owner, as stored (its vector cut back to its model's dimensions)."""
        with self._store(app) as conn, path.open("w", encoding="utf-8") as out:
            rows = conn.execute(f"SELECT DISTINCT ON (q.id) q.*, p.embedding_config->>'embedding_dim' FROM "
                                f"({self._OWNED}) q JOIN archival_passages p ON p.id = q.id ORDER BY q.id")
            for ident, owner, text, created, embedder, vector, dims in rows:
                stored = None if vector is None else _floats(vector)[:int(dims or STORED_DIMS)]
                out.write(json.dumps({
                    "id": ident, "user_id": owner, "conversation_id": None, "text": text,
                    "created_at": created.isoformat(), "expires_at": None, "embedder": embedder,
                    "embedding_f32": base64.b64encode(stored.tobytes()).decode() if stored is not None else None},
                    ensure_ascii=False) + "\n")

    def nearest(self, app: RunningApp, owner_id: str, vectors: list[bytes | None], k: int) -> list[list[Hit]]:
        """Letta's archival ranking (cosine distance over the owner's organization, nearest first), with pgvector's
        similarity as the score Letta does not give."""
        out: list[list[Hit]] = []
        with self._store(app) as conn:
            for vector in vectors:
                if vector is None:
                    out.append([])
                    continue
                query = self._query_vector(vector)
                rows = conn.execute(
                    "SELECT p.id, p.text, 1 - (p.embedding <=> %s) FROM archival_passages p JOIN users u"
                    " ON u.organization_id = p.organization_id WHERE u.id = %s AND p.embedding IS NOT NULL"
                    " ORDER BY p.embedding <=> %s, p.id LIMIT %s", (query, owner_id, query, k)).fetchall()
                out.append([Hit(r[0], float(r[2]), r[1]) for r in rows])
        return out

    def recall_by_own_text(self, app: RunningApp, queries: list[OwnTextQuery]) -> list[OwnTextResult]:
        results = []
        with self._store(app) as conn:
            for q in queries:
                row = conn.execute(f"SELECT owner, text, embedding IS NOT NULL FROM ({self._OWNED}) o WHERE id = %s",
                                   (q.memory_id,)).fetchone()
                if row is None:
                    results.append(OwnTextResult(q.memory_id, None, None, False, None, None))
                    continue
                own = other = other_id = None
                if q.vector is not None:
                    query = self._query_vector(q.vector)
                    own = scalar(conn, "SELECT 1 - (embedding <=> %s) FROM archival_passages WHERE id = %s",
                                 (query, q.memory_id))
                    best = conn.execute(
                        "SELECT p.id, 1 - (p.embedding <=> %s) FROM archival_passages p JOIN users u ON"
                        " u.organization_id = p.organization_id WHERE u.id = %s AND p.id <> %s AND p.embedding IS"
                        " NOT NULL ORDER BY p.embedding <=> %s LIMIT 1",
                        (query, q.owner_id, q.memory_id, query)).fetchone()
                    if best is not None:
                        other_id, other = best[0], float(best[1])
                own_score = float(own) if own is not None else None
                results.append(OwnTextResult(q.memory_id, row[0], row[1], bool(row[2]), own_score, other,
                                             other_id if own_score is not None and other is not None
                                             and other > own_score else None))
        return results

    def remove_vector(self, app: RunningApp, memory_id: str) -> None:
        with self._store(app) as conn:
            changed = conn.execute("UPDATE archival_passages SET embedding = NULL WHERE id = %s",
                                   (memory_id,)).rowcount
        if changed != 1:
            raise DriverError(f"no archival passage {memory_id} in Letta's store to remove the vector of")

    def vector_index_scans(self, app: RunningApp) -> dict[str, IndexScans]:
        """Of Letta's database: none, as Letta 0.16.8 creates no vector index (its archival search scans the
        organization's passages)."""
        with self._store(app) as conn:
            return vector_index_scans(conn)


DRIVER = LettaDriver
