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

import codecs
import hashlib
import re
import secrets
import subprocess
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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
    Reply,
    UserSession,
    attached_as,
    catalogue_of,
    faults_of,
    start_in_folder,
    started_on_model_server,
)
from harness.services.databases import create_database, dsn_with_dbname, scalar
from harness.vocabulary.polling import wait_until
from harness.vocabulary.turn import Turn
from model_server import embeddings
from model_server.client import start_model_server

EMBEDDER = "text-embedding-3-small"  # the search model's bi-encoder: the model server's, under OpenAI's name
CHAT_MODEL_NAME = "gpt-4o-mini"  # the chat model row tools/khoj_seed.py makes: the model server, under OpenAI's name
HTTP_TIMEOUT = 120.0
SEND_TIMEOUT = 300.0
PREPARE_TIMEOUT = 600.0  # the migrations, the offline rows and the static files, once per database server
SETTLE_SECONDS = 60.0
TEMPLATE_LOCK = 0x6B686F6A  # "khoj": one worker builds the template while the others wait for it
SEED = ROOT / "tools" / "khoj_seed.py"
PINS = ROOT / "targets" / "khoj.pins.txt"
TAIL_KEPT = 4096  # more than the start of a line of a turn saved, up to its user
# Khoj's own line once a turn is saved and its memories updated (processor/conversation/utils.py,
# save_to_conversation_log): "Saved Conversation Turn (<conversation>):\nYou (<username>): ..."
SAVED_TURN = re.compile(r"Saved Conversation Turn \((?P<conversation>[^)]*)\):\nYou \((?P<user>[^)]*)\):")

# Khoj as a team could ship it wrongly (the kill matrix's faults): a setting each, made by the driver before the
# start; targets/khoj.toml names the scenarios that must catch each.
MISCONFIGURATIONS: dict[str, dict[str, str]] = {
    "anonymous-mode": {
        "bug_class": "Khoj started with --anonymous-mode behind a team's own sign-in, as its docs offer for a single "
                     "user",
        "user_sees": "every signed-in user is Khoj's one default user: each sees and recalls the others' memories "
                     "and conversations"},
    "memory-off-by-default": {
        "bug_class": "the server's memory mode set to 'enabled, default off' (ServerChatSettings.memory_mode)",
        "user_sees": "nothing told in one conversation is known in the next, until a user finds the switch"},
    "secret-key-per-start": {
        "bug_class": "KHOJ_DJANGO_SECRET_KEY made anew at every start (a container entrypoint's random value), not "
                     "kept as a deployment secret",
        "user_sees": "every deploy or restart signs every user out"},
    "small-context-window": {
        "bug_class": "the chat model's context window set to 1,500 tokens (ChatModel.max_prompt_size)",
        "user_sees": "a long message is cut before the model reads it: what it states is neither acknowledged nor "
                     "remembered"},
}


def _check(resp: httpx.Response, what: str) -> Any:
    if resp.status_code >= 400:
        raise DriverError(f"{what}: HTTP {resp.status_code} {resp.text[:300]}")
    return resp.json() if resp.content else None


def postgres_env(dsn: str) -> dict[str, str]:
    """Khoj's POSTGRES_* settings for a DSN; a Unix socket's folder is its host (Django hands it to libpq), with an
    empty port."""
    parts = conninfo_to_dict(dsn)
    return {"POSTGRES_HOST": str(parts.get("host") or "localhost"), "POSTGRES_PORT": str(parts.get("port") or ""),
            "POSTGRES_USER": str(parts.get("user") or "postgres"),
            "POSTGRES_PASSWORD": str(parts.get("password") or ""), "POSTGRES_DB": str(parts.get("dbname") or "")}


def session_cookie(state: dict) -> str | None:
    """The `session` cookie of a Playwright storage_state or of an API session's credentials."""
    cookies = state.get("cookies")
    if isinstance(cookies, dict):
        return cookies.get("session")
    if isinstance(cookies, list):
        return next((c.get("value") for c in cookies if isinstance(c, dict) and c.get("name") == "session"), None)
    raise DriverError(f"Khoj credentials are a session cookie ({{'cookies': ...}}), not {sorted(state)}")


@dataclass(frozen=True)
class SavedTurn:
    conversation: str
    user: str  # the username Khoj logs: the address, lower case


class SavedTurnLog:
    """Khoj's lines of turns saved, read from its log as it grows: each read decodes only what was written since the
    last (a run's log reaches megabytes, and a turn's wait reads it ten times a second)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._offset = 0
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")  # a character split across reads
        self._tail = ""  # what follows the last line read: the start of one not written whole yet
        self._turns: list[SavedTurn] = []
        self._lock = threading.Lock()

    def read(self) -> list[SavedTurn]:
        with self._lock:
            if self.path.exists():
                with self.path.open("rb") as log:
                    log.seek(self._offset)
                    data = log.read()
                self._offset += len(data)
                text, end = self._tail + self._decoder.decode(data), 0
                for match in SAVED_TURN.finditer(text):
                    self._turns.append(SavedTurn(match["conversation"], match["user"].lower()))
                    end = match.end()
                self._tail = text[end:][-TAIL_KEPT:]
            return list(self._turns)


class KhojSession(UserSession):
    """One user signed in with the code Khoj issued: every request carries the session cookie."""

    def __init__(self, app: RunningApp, account: Account, cookie: str, driver: KhojDriver) -> None:
        self.account = account
        self._app = app
        self._driver = driver
        self.http = httpx.Client(base_url=app.base_url, timeout=HTTP_TIMEOUT, cookies={"session": cookie})

    # -- reads -----------------------------------------------------------------------------------------------------
    def conversation_ids(self) -> list[str]:
        """As Khoj's conversation list gives them: the most recently updated first."""
        return list(self.conversation_titles())

    def conversation_titles(self) -> dict[str, str]:
        listed = _check(self.http.get("/api/chat/sessions"), f"listing {self.account.label}'s conversations")
        return {str(c["conversation_id"]): str(c.get("slug") or "") for c in listed}

    def turns(self, conversation_id: str) -> list[Turn]:
        data = _check(self.http.get("/api/chat/history", params={"conversation_id": conversation_id}),
                      f"reading {self.account.label}'s conversation {conversation_id}")
        chat = (data.get("response") or {}).get("chat") or []
        return [Turn("user" if m.get("by") == "you" else "assistant", str(m.get("message") or "")) for m in chat
                if m.get("by") in ("you", "khoj")]

    def ask_for_conversation(self, conversation_id: str) -> ApiAnswer:
        resp = self.http.get("/api/chat/history", params={"conversation_id": conversation_id})
        return ApiAnswer(resp.status_code, resp.text)

    def memories(self) -> list[Memory]:
        """`GET /api/memories` (unordered, unpaged), oldest first by creation time and then id."""
        listed = _check(self.http.get("/api/memories"), f"listing {self.account.label}'s memories")
        listed.sort(key=lambda m: (str(m.get("created_at") or ""), int(m["id"])))
        return [Memory(str(m["id"]), str(m.get("raw") or "")) for m in listed]

    def search(self, query: str, k: int) -> list[Hit]:
        raise DriverError("Khoj has no search of a user's memories in its API (its own search covers notes only)")

    def remember(self, texts: list[str]) -> None:
        self._driver.write_memories(self._app, self.account, texts)

    def seed_conversation(self, sentence: str) -> str:
        conversation = self.start_conversation()
        self.send(conversation, sentence)
        return conversation

    # -- chatting ----------------------------------------------------------------------------------------------------
    def start_conversation(self) -> str:
        created = _check(self.http.post("/api/chat/sessions"), f"starting a conversation for {self.account.label}")
        return str(created["conversation_id"])

    def send(self, conversation_id: str, text: str) -> Reply:
        """One turn; returned once Khoj has saved it and written its memories, which it does after the reply, as a
        person reading the reply gives it time to (a next message sent at once races the memory manager: see
        docs/targets.md, "Worked example: Khoj")."""
        in_it = lambda turn: turn.conversation == conversation_id  # noqa: E731
        before = self._driver.saved_turns(self._app, in_it)
        data = _check(self.http.post("/api/chat", json={"q": text, "conversation_id": conversation_id,
                                                        "stream": False}, timeout=SEND_TIMEOUT),
                      f"{self.account.label} sending a message")
        self._driver.wait_saved(self._app, in_it, before + 1,
                                f"Khoj saving {self.account.label}'s turn in conversation {conversation_id}")
        return Reply(str(data.get("response") or ""))

    def credentials(self) -> dict:
        return {"cookies": {"session": self.http.cookies.get("session")}}

    # -- what users take back ----------------------------------------------------------------------------------------
    def delete_memory(self, memory_id: str) -> None:
        resp = self.http.delete(f"/api/memories/{memory_id}")
        if resp.status_code != 204:
            raise DriverError(f"deleting {self.account.label}'s memory {memory_id}: HTTP {resp.status_code} "
                              f"{resp.text[:200]}")

    def edit_memory(self, memory_id: str, text: str) -> None:
        _check(self.http.put(f"/api/memories/{memory_id}", json={"raw": text}),
               f"editing {self.account.label}'s memory {memory_id}")

    def clear_memories(self) -> None:
        """Khoj's memories dialog deletes them one by one (it has no call for all of them)."""
        for memory in self.memories():
            self.delete_memory(memory.id)

    def delete_conversation(self, conversation_id: str) -> None:
        _check(self.http.delete("/api/chat/history", params={"conversation_id": conversation_id}),
               f"deleting {self.account.label}'s conversation {conversation_id}")

    def set_memory(self, enabled: bool) -> None:
        _check(self.http.patch("/api/user/memory", params={"enable_memory": str(enabled).lower()}),
               f"turning {self.account.label}'s memory {'on' if enabled else 'off'}")

    def request(self, method: str, path: str, *, json: object = None,
                headers: dict[str, str] | None = None) -> ApiAnswer:
        resp = self.http.request(method, path, json=json, headers=headers)
        return ApiAnswer(resp.status_code, resp.text)

    def reads_of(self, other: Account, conversation_ids: list[str], memory_ids: list[str]) -> dict[str, ApiAnswer]:
        """Every read of Khoj's API that could reach another user's data: their conversations by id (history,
        file filters), and the listings and exports that answer the asker's own."""
        gets: dict[str, tuple[str, dict[str, Any]]] = {
            "memories listing": ("/api/memories", {}),
            "conversations listing": ("/api/chat/sessions", {}),
            "conversations export": ("/api/chat/export", {}),
            "the default conversation": ("/api/chat/history", {}),
            "user": ("/api/v1/user", {}),
        }
        for cid in conversation_ids:
            gets[f"conversation {cid}"] = ("/api/chat/history", {"conversation_id": cid})
            gets[f"conversation {cid} file filters"] = (f"/api/chat/conversation/file-filters/{cid}", {})
        return {label: ApiAnswer((r := self.http.get(path, params=params)).status_code, r.text)
                for label, (path, params) in gets.items()}

    def close(self) -> None:
        self.http.close()


class KhojDriver(AppDriver):
    name = "khoj"
    # Khoj chooses its users' ids, has no movable clock and no importer; its store is read for what users took back
    # and what a deleted account leaves (ACCOUNT_REMAINS, MEMORY_REMAINS), not for the replay's reads.
    capabilities = frozenset({Capability.CHAT_API, Capability.RESTART, Capability.APP_SETTINGS,
                              Capability.MEMORY_DELETE, Capability.MEMORY_EDIT, Capability.MEMORY_CLEAR,
                              Capability.CONVERSATION_DELETE, Capability.MEMORY_SWITCH, Capability.MEMORY_REMAINS,
                              Capability.ACCOUNT_REMAINS})
    seeding_concurrency = 4

    def __init__(self, target: Target) -> None:
        super().__init__(target)
        self._logs: dict[Path, SavedTurnLog] = {}  # each app's log, read as it grows
        self._logs_lock = threading.Lock()

    # -- life cycle ------------------------------------------------------------------------------------------------
    @property
    def _python(self) -> Path:
        return ROOT / str(self.target.app.get("python", ".tools/khoj/bin/python"))

    def _env(self, folder: Path, pg_dsn: str, model_url: str) -> dict[str, str]:
        # The target's environment first: the database and the model server are the driver's to set.
        return {**self.target.env, **postgres_env(pg_dsn), "HOME": str(folder / "home"), "OPENAI_BASE_URL": model_url,
                "KHOJ_DEFAULT_CHAT_MODEL": CHAT_MODEL_NAME, "DJANGO_SETTINGS_MODULE": "khoj.app.settings"}

    def _run(self, args: list[str], env: dict[str, str], log: Path, what: str) -> None:
        try:
            done = subprocess.run([str(self._python), *args], env=env, cwd=ROOT, capture_output=True, text=True,
                                  timeout=PREPARE_TIMEOUT)
        except FileNotFoundError:
            raise AppLaunchError(f"{self._python} does not exist: install Khoj with `make khoj`") from None
        except subprocess.TimeoutExpired:
            raise AppLaunchError(f"{what} took over {PREPARE_TIMEOUT:g} s") from None
        with log.open("a", encoding="utf-8") as out:
            out.write(done.stdout + done.stderr)
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or [f"exit code {done.returncode}"])[-1]
            raise AppLaunchError(f"{what} failed: {last} (log: {log})")

    def _template_name(self) -> str:
        made_of = PINS.read_bytes() + SEED.read_bytes()
        return f"memtest_khoj_{hashlib.sha1(made_of).hexdigest()[:10]}"

    def _prepare_database(self, pg_dsn: str, env: dict[str, str], model_url: str, log: Path) -> None:
        """A fresh database becomes a copy of the template (built first if the server has none); then the rows that
        keep Khoj offline point at this start's model server."""
        with psycopg.connect(pg_dsn, connect_timeout=10, autocommit=True) as conn:
            migrated = scalar(conn, "SELECT to_regclass('public.database_khojuser') IS NOT NULL")
        if not migrated:
            admin = dsn_with_dbname(pg_dsn, "postgres")
            template = self._template_name()
            with psycopg.connect(admin, connect_timeout=10, autocommit=True) as lock:
                lock.execute("SELECT pg_advisory_lock(%s)", [TEMPLATE_LOCK])
                exists = scalar(lock, "SELECT count(*) FROM pg_database WHERE datname = %s", [template])
                if not exists:
                    self._build_template(admin, template, env, model_url, log)
                create_database(admin, str(conninfo_to_dict(pg_dsn)["dbname"]), template=template)
                lock.execute("SELECT pg_advisory_unlock(%s)", [TEMPLATE_LOCK])
        if not (self._cross_encoder / "config.json").exists():  # Khoj's environment made again since the template
            self._run([str(SEED), model_url, str(self._cross_encoder)], env, log, "seeding Khoj's offline model rows")
        with psycopg.connect(pg_dsn, connect_timeout=10, autocommit=True) as conn:
            conn.execute("UPDATE database_searchmodelconfig SET embeddings_inference_endpoint = %s", [model_url])
            conn.execute("UPDATE database_aimodelapi SET api_base_url = %s", [model_url])

    @property
    def _cross_encoder(self) -> Path:
        """The local folder Khoj's rows name as its cross-encoder and tokenizer (made by tools/khoj_seed.py)."""
        return self._python.parent.parent / "memtest-cross-encoder"

    def _build_template(self, admin: str, template: str, env: dict[str, str], model_url: str, log: Path) -> None:
        """Khoj's migrations, its offline rows and its static files, into a database built under another name and
        renamed once complete (a build that fails leaves no template)."""
        building = f"{template}_building"
        dsn = create_database(admin, building)
        env = {**env, **postgres_env(dsn)}
        self._run(["-m", "django", "migrate", "--noinput"], env, log, "Khoj's migrations")
        self._run([str(SEED), model_url, str(self._cross_encoder)], env, log, "seeding Khoj's offline model rows")
        self._run(["-m", "django", "collectstatic", "--noinput"], env, log, "collecting Khoj's static files")
        with psycopg.connect(admin, connect_timeout=10, autocommit=True) as conn:
            conn.execute(sql.SQL("ALTER DATABASE {} RENAME TO {}").format(sql.Identifier(building),
                                                                          sql.Identifier(template)))

    @staticmethod
    def _set_faults_in_rows(pg_dsn: str, faults: list[str]) -> None:
        """The faults that are a setting in the app's rows, set (anonymous-mode is a word of the command line)."""
        with psycopg.connect(pg_dsn, connect_timeout=10, autocommit=True) as conn:
            if "memory-off-by-default" in faults:
                conn.execute("INSERT INTO database_serverchatsettings (created_at, updated_at, memory_mode) "
                             "VALUES (now(), now(), 'enabled_default_off')")
            if "small-context-window" in faults:
                conn.execute("UPDATE database_chatmodel SET max_prompt_size = 1500")

    def start(self, *, pg_dsn: str, redis_url: str, settings: dict[str, str], log_path: Path,
              data_dir: Path | None = None, port: int | None = None) -> RunningApp:
        unknown = sorted(k for k, v in settings.items() if v and k != "faults")
        if unknown:
            raise DriverError(f"the khoj driver takes no settings but faults, not {', '.join(unknown)}")
        faults = faults_of(settings)
        self.check_faults(faults)
        folder = data_dir or Path(tempfile.mkdtemp(prefix="memtest-khoj-", dir="/tmp"))
        (folder / "home").mkdir(parents=True, exist_ok=True)
        log_path.parent.mkdir(parents=True, exist_ok=True)
        model = start_model_server(log_path.with_suffix(".model.log"), chat_models=(CHAT_MODEL_NAME,))
        try:
            env = self._env(folder, pg_dsn, model.base_url)
            if "secret-key-per-start" in faults:
                env["KHOJ_DJANGO_SECRET_KEY"] = secrets.token_urlsafe(32)
            self._prepare_database(pg_dsn, env, model.base_url, log_path.with_suffix(".prepare.log"))
            if data_dir is None:  # a fresh start; a restart keeps what its data already holds
                self._set_faults_in_rows(pg_dsn, faults)
            extra = ["--anonymous-mode"] if "anonymous-mode" in faults else []
            port = port or free_port()
            process, health = start_in_folder(self.target, port=port, env=env, log_path=log_path, cwd=folder,
                                              extra=extra, default_timeout=240,
                                              log=str(log_path.with_suffix(".khoj.log")))
        except BaseException:
            model.stop()
            raise
        return started_on_model_server(port, health, process, model, pg_dsn=pg_dsn, redis_url=redis_url,
                                       settings=settings, log_path=log_path, data_dir=folder, app="Khoj",
                                       embedder=EMBEDDER)

    def attach(self, base_url: str, admin_token: str | None) -> RunningApp:
        return attached_as(self.target, base_url, admin_token, app="Khoj", embedder=EMBEDDER)

    def describe(self, app: RunningApp) -> dict[str, str]:
        return {"app": f"Khoj {self.version}", "version": self.version, "database": "PostgreSQL + pgvector"}

    @property
    def version(self) -> str:
        return str(self.target.app.get("version", ""))

    # -- users -----------------------------------------------------------------------------------------------------
    def _store(self, app: RunningApp) -> psycopg.Connection:
        if not app.pg_dsn:
            raise DriverError("the khoj driver needs the app's database (--pg-dsn): it reads the sign-in codes there")
        return psycopg.connect(app.pg_dsn, connect_timeout=10, autocommit=True)

    def _user_row(self, app: RunningApp, email: str) -> tuple[int, str] | None:
        with self._store(app) as conn:
            row = conn.execute("SELECT id, email FROM database_khojuser WHERE lower(email) = lower(%s)",
                               [email]).fetchone()
        return (int(row[0]), str(row[1])) if row else None

    def _sign_in(self, app: RunningApp, email: str) -> str:
        """The code sign-in: the address given, the code read from where Khoj keeps it, the link followed; the
        session cookie."""
        with httpx.Client(base_url=app.base_url, timeout=HTTP_TIMEOUT) as client:
            _check(client.post("/auth/magic", json={"email": email}), f"asking Khoj for a sign-in code for {email}")
            with self._store(app) as conn:
                code = scalar(conn, "SELECT email_verification_code FROM database_khojuser WHERE lower(email) = "
                                    "lower(%s)", [email])
            if not code:
                raise DriverError(f"Khoj issued no sign-in code for {email}")
            resp = client.get("/auth/magic", params={"code": code, "email": email}, follow_redirects=False)
            cookie = resp.cookies.get("session")
            if resp.status_code not in (302, 303, 307) or not cookie:
                raise DriverError(f"Khoj refused the code it issued for {email}: HTTP {resp.status_code} "
                                  f"{resp.text[:200]}")
            return cookie

    def create_user(self, app: RunningApp, name: str, email: str, password: str,
                    user_id: str | None = None) -> Account:
        """The account Khoj creates at its first sign-in, named as the user; `password` is not used (Khoj users have
        none)."""
        if user_id is not None:
            raise DriverError("Khoj chooses its users' ids itself")
        cookie = self._sign_in(app, email)
        row = self._user_row(app, email)
        if row is None:
            raise DriverError(f"Khoj signed {email} in and keeps no account of that address")
        with httpx.Client(base_url=app.base_url, timeout=HTTP_TIMEOUT, cookies={"session": cookie}) as client:
            _check(client.patch("/api/user/name", params={"name": name.split(" ")[0]}), f"naming {email}")
        return Account(str(row[0]), row[1], "", name)

    def delete_user(self, app: RunningApp, account: Account) -> None:
        """`DELETE /api/self`, as the user's settings page does (an account already gone is fine)."""
        if self._user_row(app, account.email) is None:
            return
        with httpx.Client(base_url=app.base_url, timeout=HTTP_TIMEOUT,
                          cookies={"session": self._sign_in(app, account.email)}) as client:
            _check(client.delete("/api/self"), f"deleting {account.label}'s account")

    def session(self, app: RunningApp, account: Account) -> KhojSession:
        return KhojSession(app, account, self._sign_in(app, account.email), self)

    def try_sign_in(self, app: RunningApp, email: str, password: str) -> str:
        raise DriverError("Khoj's users have no password: they sign in with a code sent to their address")

    def browser_state(self, app: RunningApp, session: UserSession) -> dict:
        cookie = session_cookie(session.credentials())
        host = app.base_url.split("//", 1)[1].split(":", 1)[0]
        return {"cookies": [{"name": "session", "value": cookie, "domain": host, "path": "/", "expires": -1,
                             "httpOnly": True, "secure": False, "sameSite": "Lax"}], "origins": []}

    def accepts(self, app: RunningApp, browser_state: dict) -> bool:
        """Whether Khoj serves `GET /api/v1/user` with this session cookie (403 when it is not a user's)."""
        cookie = session_cookie(browser_state)
        resp = httpx.get(app.base_url + "/api/v1/user", cookies={"session": cookie or ""}, timeout=HTTP_TIMEOUT)
        if resp.status_code == 200:
            return True
        if resp.status_code in (401, 403):
            return False
        raise DriverError(f"Khoj answered HTTP {resp.status_code} to a session cookie: {resp.text[:200]}")

    def made_up_credentials(self, app: RunningApp, like: dict) -> dict:
        return {"cookies": {"session": secrets.token_urlsafe(48)}}  # never signed by the app

    def fault_catalogue(self) -> list[dict[str, str]]:
        return catalogue_of(MISCONFIGURATIONS)

    # -- memory ------------------------------------------------------------------------------------------------------
    def write_memories(self, app: RunningApp, account: Account, texts: list[str]) -> None:
        """The rows Khoj's `save_memory` writes: the text, its vector from the search model, the default search
        model, no agent."""
        with self._store(app) as conn:
            register_vector(conn)
            model = scalar(conn, "SELECT id FROM database_searchmodelconfig WHERE name = 'default'")
            for text in texts:
                vector = np.asarray(embeddings.embed(text, EMBEDDER), dtype=np.float32)
                conn.execute("INSERT INTO database_usermemory (created_at, updated_at, user_id, embeddings, raw, "
                             "search_model_id) VALUES (clock_timestamp(), clock_timestamp(), %s, %s, %s, %s)",
                             [int(account.id), vector, text, model])

    def saved_turns(self, app: RunningApp, which: Callable[[SavedTurn], bool]) -> int:
        """How many turns Khoj's log says it saved (their memories written) that `which` picks."""
        if app.log_path is None:
            return 0
        path = app.log_path.with_suffix(".khoj.log")
        with self._logs_lock:
            log = self._logs.setdefault(path, SavedTurnLog(path))
        return sum(1 for turn in log.read() if which(turn))

    def wait_saved(self, app: RunningApp, which: Callable[[SavedTurn], bool], count: int, what: str) -> None:
        """Until Khoj's log holds `count` lines of turns saved that `which` picks (an app the suite did not start
        keeps its log elsewhere: nothing to wait on)."""
        if app.log_path is not None:
            wait_until(lambda: self.saved_turns(app, which), lambda n: n >= count, timeout=SETTLE_SECONDS,
                       interval=0.1, what=what)

    def memory_remains(self, app: RunningApp, memory_ids: list[str]) -> dict[str, int]:
        """Khoj keeps a memory and its vector in one row of `database_usermemory`."""
        ids = [[int(i) for i in memory_ids]]
        with self._store(app) as conn:
            return {
                "database_usermemory rows": int(scalar(conn, "SELECT count(*) FROM database_usermemory "
                                                             "WHERE id = ANY(%s)", ids)),
                "database_usermemory.embeddings vectors": int(scalar(
                    conn, "SELECT count(*) FROM database_usermemory WHERE id = ANY(%s) AND embeddings IS NOT NULL",
                    ids)),
            }

    def remains_of(self, app: RunningApp, account: Account, conversation_ids: list[str],
                   memory_ids: list[str]) -> dict[str, int]:
        """Rows Khoj's tables still hold of the deleted user: every table with a column of the user's id (found in
        the catalogue), the user's own row, their conversations' and memories' rows."""
        counts: dict[str, int] = {}
        with self._store(app) as conn:
            tables = [r[0] for r in conn.execute(
                "SELECT table_name FROM information_schema.columns WHERE table_schema = 'public' "
                "AND column_name = 'user_id' ORDER BY 1").fetchall()]
            checks: list[tuple[str, str, str, list[Any]]] = [(t, "user_id", "the user", [int(account.id)])
                                                              for t in tables]
            checks += [("database_khojuser", "id", "the user", [int(account.id)]),
                       ("database_usermemory", "id", "the memories", [int(i) for i in memory_ids if i.isdigit()]),
                       ("database_conversation", "id::text", "the conversations", list(conversation_ids))]
            for table, column, what, values in checks:
                where = sql.SQL(column) if "::" in column else sql.Identifier(column)
                query = sql.SQL("SELECT count(*) FROM {} WHERE {} = ANY(%s)").format(sql.Identifier(table), where)
                counts[f"{table}.{column.split('::')[0]} of {what}"] = int(scalar(conn, query, [values]))
        return counts

DRIVER = KhojDriver
