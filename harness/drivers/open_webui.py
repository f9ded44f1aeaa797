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
  written as rows of its `memory` table (open_webui_store) with their ids and creation times, then embedded by its
  own re-index; the replay reads them back through that table and the owner's own memory search;
- an upgrade is the target's release started on the data (folder and database) of an older one, which migrates
  its schema on start.
"""

from __future__ import annotations

import json
import math
import secrets
import shlex
import shutil
import tempfile
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import numpy as np

from harness.app.app_launcher import RunningApp, attach_app, free_port, start_process
from harness.app.changes import RELEASE_COMMAND
from harness.app.target import Target, fill
from harness.drivers.base import (
    Account,
    ApiAnswer,
    AppDriver,
    Capability,
    DriverError,
    Hit,
    Memory,
    NewUser,
    OwnTextQuery,
    OwnTextResult,
    RestartApp,
    UserSession,
    catalogue_of,
    faults_of,
)
from harness.drivers.open_webui_store import (
    MemoryRow,
    OwnTextScore,
    count_by_owner,
    epoch,
    insert_memories,
    iso,
    memory_rows_left,
    own_text_in_pgvector,
    read_memories,
    vectors_left_in_chroma,
    vectors_left_in_pgvector,
)
from harness.services.http_clients import tls
from harness.vocabulary.polling import wait_until
from harness.vocabulary.recall import SCORE_TOLERANCE
from harness.vocabulary.turn import Turn
from model_server.client import ModelServer, start_model_server

ADMIN_FILE = "memtest-admin.json"  # beside the app's data: the admin's credentials and the secret key
SETTLE_SECONDS = 10.0  # a review lands 0.1-0.5 s after the reply here

# The misconfigurations the kill matrix switches on: each is what an operator really gets wrong, applied the way
# Open WebUI really takes it (its environment, or its admin procedure).
MISCONFIGURATIONS: dict[str, dict[str, str]] = {
    "memories-off": {
        "bug_class": "memories left switched off (ENABLE_MEMORIES=false)",
        "user_sees": "nothing told in one conversation is known in the next",
        "env": "ENABLE_MEMORIES=false"},
    "review-interval-default": {
        "bug_class": "background memory review left at its default interval of 10 turns",
        "user_sees": "facts told in the last few turns are not remembered",
        "env": "MEMORIES_REVIEW_INTERVAL_TURNS=10"},
    "memory-permission-off": {
        "bug_class": "users not granted the memories feature (USER_PERMISSIONS_FEATURES_MEMORIES=false)",
        "user_sees": "a user's memories are never written or recalled",
        "env": "USER_PERMISSIONS_FEATURES_MEMORIES=false"},
    "embedding-change-without-reindex": {
        "bug_class": "embedding model changed in the admin settings without re-indexing the memories",
        "user_sees": "memories written under the old model are no longer found by search",
        "env": ""},
    "no-redis": {
        "bug_class": "run without Redis, so sign-out cannot revoke a token",
        "user_sees": "a signed-out session (a stolen token) still works",
        "env": "REDIS_URL="},
    "upgrade-leaves-vector-store-behind": {
        "bug_class": "the new release started on the old one's database but not on its vector store (the data "
                     "folder copied without vector_db; on PostgreSQL, VECTOR_DB left out of the new environment)",
        "user_sees": "after the upgrade every memory is still listed, and none is found by search or recalled",
        "env": ""},
}
LEFT_BEHIND = "vector_store_left_behind"  # a setting of the upgraded app under that fault (PostgreSQL: no VECTOR_DB)


def _check(resp: httpx.Response, what: str) -> Any:  # the JSON the app answered, of the shape the caller expects
    if resp.status_code >= 400:
        raise DriverError(f"{what}: HTTP {resp.status_code} {resp.text[:300]}")
    return resp.json()


def shown_branch(history: dict) -> list[Turn]:
    """The turns on screen, oldest first: from the current message back to the first through parentId (a chat's
    history is a tree, since a reply can be regenerated or a message edited)."""
    messages, current = history.get("messages") or {}, history.get("currentId")
    chain, seen = [], set()
    while current and current not in seen:
        seen.add(current)
        message = messages[current]
        chain.append(Turn(message["role"], message.get("content", "")))
        current = message.get("parentId")
    return list(reversed(chain))


def hits_of(result: dict | None) -> list[Hit]:
    """Hits from a memory query's Chroma-shaped nested lists, scored by cosine: its "distances" are (1 + cosine) / 2
    in both vector stores (1.0 = identical). Open WebUI answers null when the store cannot be searched (no
    collection for the user, or a change of vector size without re-index)."""
    result = result or {}
    ids, docs, scores = ((result.get(key) or [[]])[0] or [] for key in ("ids", "documents", "distances"))
    # pgvector scores an all-zero vector (a text without a word) NaN, which Open WebUI answers as null: still a hit
    return [Hit(i, 2 * float(s) - 1 if s is not None else math.nan, d)
            for i, d, s in zip(ids, docs, scores, strict=True)]


def search_memories(http: httpx.Client, query: str, k: int) -> list[Hit]:
    """The user's memory search (the client carries the user's token), best first."""
    resp = http.post("/api/v1/memories/query", json={"content": query, "k": k})
    if resp.status_code == 404:  # Open WebUI's answer for a user who has no memories at all
        return []
    return hits_of(_check(resp, f"searching memory for {query[:60]!r}"))


def tokens_in(browser_state: dict, origin: str) -> list[str]:
    """The tokens a browser holds for the app: in local storage, where the front end reads it, and the cookie."""
    tokens = [item["value"] for entry in browser_state.get("origins", []) if entry.get("origin") == origin
              for item in entry.get("localStorage", []) if item.get("name") == "token"]
    return tokens + [c["value"] for c in browser_state.get("cookies", []) if c.get("name") == "token"]


def sign_in(app: RunningApp, account: Account) -> str:
    resp = httpx.post(app.base_url + "/api/v1/auths/signin", verify=tls(), timeout=30,
                      json={"email": account.email, "password": account.password})
    return str(_check(resp, f"signing in {account.email}")["token"])


class AdminClient(httpx.Client):
    """The suite's own admin session. When the app ends it (a restart with a new secret, an expired token), the
    admin signs in again and the request is sent once more: the suite's session never decides a verdict."""

    def __init__(self, app: RunningApp) -> None:
        super().__init__(base_url=app.base_url, timeout=60, headers={"Authorization": f"Bearer {app.admin_token}"})
        self.app = app

    def send(self, request: httpx.Request, **kwargs) -> httpx.Response:  # noqa: ANN003 - httpx's own options
        response = super().send(request, **kwargs)
        if response.status_code != 401 or self.app.data_dir is None:
            return response
        admin = json.loads((self.app.data_dir / ADMIN_FILE).read_text(encoding="utf-8"))
        self.app.admin_token = OpenWebUIDriver._sign_in_admin(self.app, admin)
        request.headers["Authorization"] = self.headers["Authorization"] = f"Bearer {self.app.admin_token}"
        return super().send(request, **kwargs)


@dataclass
class Reviews:
    """What `settle` knows of one user's memory reviews: the turns the user's actor had sent at the last settle, how
    many of them were sent with memory off (Open WebUI reviews none of those), and how many reviews it had seen by
    then (a later settle waits for the memories only of reviews that came since). A restarted app has a model server
    of its own, whose log starts empty: the turns reviewed on the earlier one, as of the last settle there, are
    counted apart."""

    memory_on: bool = True
    turns_seen: int = 0
    unreviewed: int = 0
    reviews_seen: int = 0
    model_url: str = ""  # the model server whose log reviews_seen counts
    reviewed_before: int = 0  # turns reviewed on the model servers of earlier instances of the app


class OpenWebUISession(UserSession):
    def __init__(self, app: RunningApp, account: Account, token: str, model: ModelServer | None,
                 reviews: Reviews | None = None) -> None:
        self.account = account
        self.reviews = reviews or Reviews()
        self.model = model
        self.base_url = app.base_url
        self.token = token
        self.http = httpx.Client(verify=tls(), base_url=app.base_url, timeout=60,
                                 headers={"Authorization": f"Bearer {self.token}"})

    def conversation_ids(self) -> list[str]:
        return [c["id"] for c in _check(self.http.get("/api/v1/chats/"), "listing chats")]

    def ask_for_conversation(self, conversation_id: str) -> ApiAnswer:
        resp = self.http.get(f"/api/v1/chats/{conversation_id}")
        return ApiAnswer(resp.status_code, resp.text)

    def turns(self, conversation_id: str) -> list[Turn]:
        chat = _check(self.http.get(f"/api/v1/chats/{conversation_id}"), "reading a chat")["chat"]
        return shown_branch(chat.get("history") or {})

    def memories(self) -> list[Memory]:
        rows = _check(self.http.get("/api/v1/memories/"), "listing memories")
        rows = sorted(rows, key=lambda m: (m.get("created_at") or 0))
        return [Memory(m["id"], m["content"]) for m in rows]

    def remember(self, texts: list[str]) -> None:
        for text in texts:
            _check(self.http.post("/api/v1/memories/add", json={"content": text}), "adding a memory")

    def search(self, query: str, k: int) -> list[Hit]:
        return search_memories(self.http, query, k)

    def seed_conversation(self, sentence: str) -> str:
        """A chat with the sentence and the model's reply, and the memory the review would have stored."""
        reply = self.model.reply(sentence) if self.model else "Noted."
        user_id, reply_id = str(uuid.uuid4()), str(uuid.uuid4())
        user_msg = {"id": user_id, "role": "user", "content": sentence, "parentId": None, "childrenIds": [reply_id]}
        reply_msg = {"id": reply_id, "role": "assistant", "content": reply, "parentId": user_id, "childrenIds": []}
        chat = {"title": sentence[:60], "history": {"messages": {user_id: user_msg, reply_id: reply_msg},
                                                    "currentId": reply_id},
                "messages": [user_msg, reply_msg]}
        created = _check(self.http.post("/api/v1/chats/new", json={"chat": chat}), "creating a chat")
        self.remember([sentence])
        return str(created["id"])

    # -- what users take back: the routes the page calls (its memory manager, chat menu and memory switch) ---------
    def delete_memory(self, memory_id: str) -> None:
        """The memory manager's delete (routers/memories.py delete_memory_by_id: the row, then its vector); it
        answers false for a memory that is not the user's."""
        if _check(self.http.delete(f"/api/v1/memories/{memory_id}"), "deleting a memory") is not True:
            raise DriverError(f"Open WebUI deleted no memory {memory_id} of {self.account.label}: it is not theirs")

    def edit_memory(self, memory_id: str, text: str) -> None:
        """The memory manager's edit (update_memory_by_id: the row's content, then its vector embedded again)."""
        updated = _check(self.http.post(f"/api/v1/memories/{memory_id}/update", json={"content": text}),
                         "editing a memory")
        if not updated or updated.get("content") != text:
            raise DriverError(f"Open WebUI stored {updated!r} for the edit of memory {memory_id} to {text!r}")

    def clear_memories(self) -> None:
        """The memory manager's "Clear memory", confirmed (delete_memory_by_user_id: every row of the user's, then
        the user's vector collection); it answers false for a user who had none."""
        _check(self.http.delete("/api/v1/memories/delete/user"), "clearing memories")

    def delete_conversation(self, conversation_id: str) -> None:
        """The chat menu's delete, confirmed (routers/chats.py delete_chat_by_id)."""
        if _check(self.http.delete(f"/api/v1/chats/{conversation_id}"), "deleting a chat") is not True:
            raise DriverError(f"Open WebUI did not delete chat {conversation_id} of {self.account.label}")

    def set_memory(self, enabled: bool) -> None:
        """The Personalization tab's Memory switch: it saves `ui.memory` (a field-level patch of the user's settings);
        the page sends `features.memory` with each message from it, and without it the server neither puts
        memories into the prompt nor reviews the turn."""
        saved = _check(self.http.post("/api/v1/users/user/settings/update", json={"ui": {"memory": enabled}}),
                       "saving the memory switch")
        if (saved.get("ui") or {}).get("memory") is not enabled:
            raise DriverError(f"Open WebUI saved {saved.get('ui')!r} for {self.account.label}'s memory switch")
        self.reviews.memory_on = enabled

    def close(self) -> None:
        self.http.close()


class OpenWebUIDriver(AppDriver):
    name = "open-webui"
    capabilities = frozenset({Capability.APP_SETTINGS, Capability.EMBEDDING_MODEL_CHANGE, Capability.MEMORY_SEARCH,
                              Capability.SERVER_SIGN_OUT, Capability.RESTART, Capability.HISTORY_IMPORT,
                              Capability.APP_UPGRADE, Capability.MEMORY_DELETE, Capability.MEMORY_EDIT,
                              Capability.MEMORY_CLEAR, Capability.CONVERSATION_DELETE, Capability.MEMORY_SWITCH,
                              Capability.MEMORY_REMAINS})
    kept_fields = ("created_at",)  # a memory has no conversation and no expiry in Open WebUI
    writes_memories_later = True  # its background memory review, after each turn

    def __init__(self, target: Target) -> None:
        super().__init__(target)
        self._tokens: dict[tuple[str, str], str] = {}  # (app, user id) -> the user's token
        self._reviews: dict[tuple[str, str], Reviews] = {}  # (app, user id) -> what settle knows of their reviews

    # -- life cycle ------------------------------------------------------------------------------------------------
    def _env(self, app_port: int, model: ModelServer, data_dir: Path, secret: str, pg_dsn: str, redis_url: str,
             settings: dict[str, str]) -> dict[str, str]:
        env = {**self.target.env, "DATA_DIR": str(data_dir), "WEBUI_SECRET_KEY": secret, "PORT": str(app_port),
               "OPENAI_API_BASE_URL": model.base_url, "RAG_OPENAI_API_BASE_URL": model.base_url,
               "REDIS_URL": redis_url}
        if self.postgresql:
            env |= {"DATABASE_URL": pg_dsn}
            if LEFT_BEHIND not in settings:
                env |= {"VECTOR_DB": "pgvector", "PGVECTOR_DB_URL": pg_dsn}
        if "embedder" in settings:
            env["RAG_EMBEDDING_MODEL"] = settings["embedder"]
        for fault in faults_of(settings):
            for assignment in filter(None, MISCONFIGURATIONS[fault]["env"].split()):
                name, _, value = assignment.partition("=")
                env[name] = value
        return env

    def start(self, *, pg_dsn: str, redis_url: str, settings: dict[str, str], log_path: Path,
              data_dir: Path | None = None, port: int | None = None) -> RunningApp:
        # Open WebUI 0.12 offers its builtin tools (add_memory, search_memories, ...) in every browser chat. The memory
        # proven here is its background reviewer's, as in the configurations the kill matrix proved; a model that
        # also wrote memories through those tools left corrections unapplied (both the reviewer's and the tools'
        # memories), a configuration of its own not yet covered.
        model = start_model_server(log_path.with_suffix(".model.log"), use_tools=False)
        try:
            fresh = data_dir is None
            data_dir = data_dir or Path(tempfile.mkdtemp(prefix="memtest-owui-", dir="/tmp"))
            admin = self._admin_record(data_dir)
            port = port or free_port()
            command = fill(self._command(settings), port=str(port))
            process, health = start_process(
                self.target.name, command, log_path=log_path, timeout=float(self.target.app.get("start_timeout", 120)),
                env=self._env(port, model, data_dir, admin["secret"], pg_dsn, redis_url, settings),
                health_url=f"http://127.0.0.1:{port}{self.target.health_path}",
                healthy=lambda h: h.get("status") is True,
                # the preload is the target's release's; an older release a change starts loads as a new process
                warm=None if RELEASE_COMMAND in settings else self.target.warm_start)
        except BaseException:
            model.stop()
            raise
        app = RunningApp(f"http://127.0.0.1:{port}", health, None, pg_dsn, redis_url, dict(settings), True, log_path,
                         process, data_dir=data_dir, companions=model.processes, model_url=model.base_url)
        try:
            app.admin_token = self._sign_up_admin(app, admin) if fresh else self._sign_in_admin(app, admin)
            app.health = {**health, **self._versions(app)}
        except BaseException:
            app.stop()
            raise
        return app

    @property
    def postgresql(self) -> bool:
        return self.target.app.get("database") == "postgresql"

    def _command(self, settings: dict[str, str]) -> list[str]:
        """The target's release, or the older release a change starts first (its command line in the settings)."""
        if RELEASE_COMMAND not in settings:
            return self.target.start_command
        command = shlex.split(settings[RELEASE_COMMAND])
        if not Path(command[0]).exists():
            raise DriverError(f"the older release's command {command[0]} does not exist: `make open-webui` "
                              "installs it")
        return command

    @staticmethod
    def _admin_record(data_dir: Path) -> dict[str, str]:
        path = data_dir / ADMIN_FILE
        if path.exists():
            return json.loads(path.read_text(encoding="utf-8"))
        record = {"email": f"admin+{secrets.token_hex(4)}@memtest.test", "password": secrets.token_urlsafe(16),
                  "secret": secrets.token_urlsafe(32)}
        path.write_text(json.dumps(record), encoding="utf-8")
        return record

    @staticmethod
    def _sign_up_admin(app: RunningApp, admin: dict[str, str]) -> str:
        resp = httpx.post(app.base_url + "/api/v1/auths/signup", verify=tls(), timeout=30,
                          json={"name": "Suite Admin", "email": admin["email"], "password": admin["password"]})
        data = _check(resp, "signing up the first user (the admin) of a fresh Open WebUI")
        if data.get("role") != "admin":
            raise DriverError(f"the first sign-up became {data.get('role')!r}, not admin: the data folder was not "
                              "fresh")
        return str(data["token"])

    @staticmethod
    def _sign_in_admin(app: RunningApp, admin: dict[str, str]) -> str:
        resp = httpx.post(app.base_url + "/api/v1/auths/signin", verify=tls(), timeout=30,
                          json={"email": admin["email"], "password": admin["password"]})
        return str(_check(resp, "signing the admin in again after a restart")["token"])

    def _versions(self, app: RunningApp) -> dict[str, str]:
        with self._admin(app) as admin:
            resp = admin.get("/api/version")
        return {"app": "Open WebUI", "version": str(resp.json().get("version", "")) if resp.status_code == 200
                else ""}

    def attach(self, base_url: str, admin_token: str | None) -> RunningApp:
        if not admin_token:
            raise DriverError("an Open WebUI given by --base-url needs an admin's token: pass --admin-token "
                              "(Settings > Account > API keys, or the token of an admin's sign-in)")
        app = attach_app(self.target.name, base_url, self.target.health_path, admin_token)
        app.health = {**app.health, **self._versions(app)}
        return app

    def describe(self, app: RunningApp) -> dict[str, str]:
        return {"app": f"Open WebUI {app.health.get('version', '')}".strip(),
                "database": "PostgreSQL + pgvector" if self.postgresql else "SQLite + Chroma"}

    # -- users -----------------------------------------------------------------------------------------------------
    def _admin(self, app: RunningApp) -> httpx.Client:
        return AdminClient(app)

    def create_user(self, app: RunningApp, name: str, email: str, password: str,
                    user_id: str | None = None) -> Account:
        with self._admin(app) as admin:
            data = _check(admin.post("/api/v1/auths/add", json={"name": name, "email": email, "password": password,
                                                                "role": "user"}), f"creating user {email}")
        account = Account(str(data["id"]), str(data["email"]), password, name)
        # The reply carries the user's token: reusing it keeps clear of the sign-in rate limit (15 per 3 minutes).
        self._tokens[(app.base_url, account.id)] = str(data["token"])
        # Plain text in and out: by default the message editor turns quotes into curly ones and user messages are
        # shown as markdown, so what is stored and shown would differ from what was typed.
        resp = httpx.post(app.base_url + "/api/v1/users/user/settings/update", verify=tls(), timeout=30,
                          headers={"Authorization": f"Bearer {data['token']}"},
                          json={"ui": {"richTextInput": False, "renderMarkdownInUserMessages": False}})
        _check(resp, f"setting {email}'s message input to plain text")
        return account

    def import_users(self, app: RunningApp, users: list[NewUser]) -> dict[str, str]:
        """Through the admin API, a few at a time (each costs a password hash); Open WebUI gives each user an id of
        its own, returned by the requested one. Each reply's token is the user's session."""
        def add(user: NewUser) -> tuple[str, str]:
            with self._admin(app) as admin:
                data = _check(admin.post("/api/v1/auths/add", json={
                    "name": user.name, "email": user.email, "password": user.password or secrets.token_urlsafe(18),
                    "role": "user"}), f"importing user {user.email}")
            self._tokens[(app.base_url, str(data["id"]))] = str(data["token"])
            return user.id, str(data["id"])

        with ThreadPoolExecutor(4) as pool:
            return dict(pool.map(add, users))

    def delete_user(self, app: RunningApp, account: Account) -> None:
        with self._admin(app) as admin:
            resp = admin.delete(f"/api/v1/users/{account.id}")
        if resp.status_code not in (200, 404):
            raise DriverError(f"deleting user {account.email}: HTTP {resp.status_code} {resp.text[:200]}")

    def session(self, app: RunningApp, account: Account) -> OpenWebUISession:
        key = (app.base_url, account.id)
        if key not in self._tokens:
            self._tokens[key] = sign_in(app, account)
        return OpenWebUISession(app, account, self._tokens[key], ModelServer.of(app),
                                self._reviews.setdefault(key, Reviews()))

    def browser_state(self, app: RunningApp, session: UserSession) -> dict:
        assert isinstance(session, OpenWebUISession)
        host = httpx.URL(app.base_url).host
        return {"cookies": [{"name": "token", "value": session.token, "domain": host, "path": "/",
                             "expires": -1, "httpOnly": True, "secure": False, "sameSite": "Lax"}],
                "origins": [{"origin": app.base_url, "localStorage": [{"name": "token", "value": session.token}]}]}

    def made_up_credentials(self, app: RunningApp, like: dict) -> dict:
        """A token of the same shape, signed by nobody: the JWT's payload kept, its signature made up."""
        def forged(token: str) -> str:
            head, _, rest = token.partition(".")
            payload = rest.rpartition(".")[0]
            return f"{head}.{payload}.{secrets.token_urlsafe(32)}" if payload else secrets.token_urlsafe(32)

        origins = [{**o, "localStorage": [{**i, "value": forged(i["value"])} for i in o.get("localStorage", [])]}
                   for o in like.get("origins", [])]
        return {"cookies": [{**c, "value": forged(c["value"])} for c in like.get("cookies", [])], "origins": origins}

    def accepts(self, app: RunningApp, browser_state: dict) -> bool:
        tokens = tokens_in(browser_state, app.base_url)
        if not tokens:
            raise DriverError("the browser held no Open WebUI token to check")
        return any(httpx.get(app.base_url + "/api/v1/auths/", verify=tls(),
                             headers={"Authorization": f"Bearer {token}"},
                             timeout=30).status_code == 200 for token in tokens)

    def shown_identity(self, account: Account) -> str:
        return account.name

    # -- memory ----------------------------------------------------------------------------------------------------
    def settle(self, app: RunningApp, session: UserSession, turns_sent: int) -> None:
        """Wait until the model server has answered a memory review for each of the user's turns sent with memory
        on, then until the app holds what the newest review told it to store (once: what the user took back since is
        not waited for again)."""
        model = ModelServer.of(app)
        if model is None or turns_sent == 0:
            return
        ledger = self._reviews.setdefault((app.base_url, session.account.id), Reviews())
        if ledger.model_url != model.base_url:  # the app restarted since the last settle, with a new model server
            if ledger.model_url:  # every turn the last settle saw reviewed was reviewed there
                ledger.reviewed_before = ledger.turns_seen - ledger.unreviewed
                ledger.reviews_seen = 0
            ledger.model_url = model.base_url
        if not ledger.memory_on:  # the turns since the last settle went unreviewed (the actor settles before a switch)
            ledger.unreviewed += max(0, turns_sent - ledger.turns_seen)
        ledger.turns_seen = turns_sent
        expected = turns_sent - ledger.unreviewed - ledger.reviewed_before
        if expected <= 0:
            return
        who = session.account.label
        reviews = wait_until(lambda: model.reviews(session.account.id), lambda r: len(r) >= expected,
                             timeout=SETTLE_SECONDS, what=f"Open WebUI asking for a memory review of each of {who}'s "
                                                          f"{expected} turns sent with memory on")
        if len(reviews) == ledger.reviews_seen:
            return
        chosen = set(reviews[-1]["memories_after"])  # what the last review left the user's memories holding
        wait_until(lambda: {m.text for m in session.memories()}, lambda held: chosen <= held,
                   timeout=SETTLE_SECONDS, what=f"Open WebUI storing the memories its review chose for {who}")
        ledger.reviews_seen = len(reviews)

    def memory_remains(self, app: RunningApp, memory_ids: list[str]) -> dict[str, int]:
        """Rows of the `memory` table (SQLite or PostgreSQL) and vectors: on pgvector, `document_chunk` rows (the
        user's collection `user-memory-<id>`); on Chroma, read in its file `vector_db/chroma.sqlite3`, the
        collection's `embeddings` rows and the vectors its write-ahead log (`embeddings_queue`) still holds."""
        rows = {"memory table rows": memory_rows_left(app, self.postgresql, memory_ids)}
        if self._vectors_in_pgvector(app):
            return rows | vectors_left_in_pgvector(app, memory_ids)
        return rows | vectors_left_in_chroma(app, memory_ids)

    # -- faults and optional capabilities --------------------------------------------------------------------------
    def fault_catalogue(self) -> list[dict[str, str]]:
        return catalogue_of(MISCONFIGURATIONS)

    def import_history(self, app: RunningApp, records: Path, embedder: str,
                       user_ids: dict[str, str]) -> dict[str, str]:
        """Rows of the `memory` table with the history's ids and creation times, then the admin's re-index, which
        embeds every memory with the app's model (the history's own vectors are not Open WebUI's to take)."""
        rows = []
        with records.open(encoding="utf-8") as lines:
            for line in lines:
                record = json.loads(line)
                owner = user_ids.get(record["user_id"], record["user_id"])
                rows.append(MemoryRow(record["id"], owner, record["text"], epoch(record["created_at"])))
        insert_memories(app, self.postgresql, rows)
        with self._admin(app) as admin:
            done = _check(admin.post("/api/v1/memories/reindex", timeout=600), "re-indexing the imported memories")
        if done.get("total_memories") != len(rows):
            raise DriverError(f"Open WebUI re-indexed {done.get('total_memories')} memories of the {len(rows)} "
                              "imported")
        return {}

    def recall_by_own_text(self, app: RunningApp, queries: list[OwnTextQuery]) -> list[OwnTextResult]:
        """Each memory's row from the `memory` table, and how its vector store scores the memory's own text: on
        pgvector, its cosine within the owner's collection (set-based, as its search computes it); on Chroma,
        which only the app reads, the owner's own memory search for the text over all of the owner's memories. A
        vector that does not give its own text the full score (a stale one, another model's) cannot reach the
        memory as itself."""
        rows = read_memories(app, self.postgresql, [q.memory_id for q in queries])
        scores = (self._own_text_in_pgvector(app, queries) if self._vectors_in_pgvector(app)
                  else self._own_text_searched(app, queries))
        results = []
        for query in queries:
            row, score = rows.get(query.memory_id), scores.get(query.memory_id)
            if row is None:
                results.append(OwnTextResult(query.memory_id, None, None, False, None, None))
                continue
            own = score.own if score is not None else None
            results.append(OwnTextResult(
                query.memory_id, row.user_id, row.content, bool(score and score.has_vector),
                own if own is not None and own >= 1 - SCORE_TOLERANCE else None,
                score.best_other if score else None, score.best_other_id if score else None,
                {"created_at": iso(row.created_at)}))
        return results

    def _vectors_in_pgvector(self, app: RunningApp) -> bool:
        """Where the driver's environment told the app to keep its vectors (VECTOR_DB=pgvector)."""
        return self.postgresql and LEFT_BEHIND not in app.settings

    @staticmethod
    def _own_text_in_pgvector(app: RunningApp, queries: list[OwnTextQuery]) -> dict[str, OwnTextScore]:
        return own_text_in_pgvector(app, [(q.memory_id, q.owner_id, None if q.vector is None else
                                           np.frombuffer(q.vector, dtype="<f4")) for q in queries])

    def _own_text_searched(self, app: RunningApp, queries: list[OwnTextQuery]) -> dict[str, OwnTextScore]:
        counts = count_by_owner(app, self.postgresql, sorted({q.owner_id for q in queries}))

        def one(query: OwnTextQuery) -> tuple[str, OwnTextScore]:
            hits = (self._search_as(app, query.owner_id, query.text, counts.get(query.owner_id, 1))
                    if query.vector is not None else [])
            own = next((h for h in hits if h.id == query.memory_id), None)
            other = next((h for h in hits if h.id != query.memory_id and not math.isnan(h.score)), None)
            return query.memory_id, OwnTextScore(own is not None, own.score if own else None,
                                                 other.score if other else None, other.id if other else None)

        with ThreadPoolExecutor(4) as pool:
            return dict(pool.map(one, queries))

    def _search_as(self, app: RunningApp, user_id: str, text: str, k: int) -> list[Hit]:
        token = self._tokens.get((app.base_url, user_id))
        if token is None:
            raise DriverError(f"no session of user {user_id} to search their memories with: import the owners first")
        with httpx.Client(verify=tls(), base_url=app.base_url, timeout=60,
                          headers={"Authorization": f"Bearer {token}"}) as http:
            return search_memories(http, text, k)

    def upgrade(self, app: RunningApp, settings: dict[str, str], restart: RestartApp) -> RunningApp:
        """As an operator upgrades: the older release stopped, the target's release started on the same data folder
        and database (it migrates the schema on start)."""
        before = app.health.get("version", "")
        between = None
        if "upgrade-leaves-vector-store-behind" in app.settings.get("faults", ""):
            if self.postgresql:
                settings = {**settings, LEFT_BEHIND: "1"}
            else:
                def between() -> None:  # the data folder carried over without its vector_db
                    assert app.data_dir is not None
                    shutil.rmtree(app.data_dir / "vector_db")
        upgraded = restart(app, settings, between)
        if upgraded.health.get("version", "") == before:
            raise DriverError(f"Open WebUI still runs {before} after the upgrade: the target's command starts the same "
                              "release as the change's")
        return upgraded

    def change_embedding_model(self, app: RunningApp, model: str, restart: RestartApp) -> RunningApp:
        """As an admin does it: the embedding model in the admin settings, then the memories re-indexed."""
        with self._admin(app) as admin:
            config = _check(admin.get("/api/v1/retrieval/embedding"), "reading the embedding settings")
            config = {**config, "RAG_EMBEDDING_MODEL": model, "RAG_EMBEDDING_ENGINE": "openai"}
            _check(admin.post("/api/v1/retrieval/embedding/update", json=config), "changing the embedding model")
            now = _check(admin.get("/api/v1/retrieval/embedding"), "reading the embedding settings")
            if now.get("RAG_EMBEDDING_MODEL") != model:
                raise DriverError(f"Open WebUI still embeds with {now.get('RAG_EMBEDDING_MODEL')!r} after the change "
                                  f"to {model!r}")
            if "embedding-change-without-reindex" not in app.settings.get("faults", ""):
                _check(admin.post("/api/v1/memories/reindex"), "re-indexing the memories")
        app.settings = {**app.settings, "embedder": model}
        return app


DRIVER = OpenWebUIDriver
