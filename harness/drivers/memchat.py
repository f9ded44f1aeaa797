"""The driver of the reference app (memchat): its JSON API, a cookie session, an admin token handed to it at start,
and every optional capability (requested ids, a settable clock, its migration and re-embedding tools)."""

from __future__ import annotations

import base64
import json
import math
import re
import secrets
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import httpx
import numpy as np
import psycopg
import redis
from pgvector.psycopg import register_vector

from harness.app.app_launcher import (
    ROOT,
    AppLaunchError,
    RunningApp,
    attach_app,
    free_port,
    start_process,
    stop_process,
)
from harness.app.app_tools import ToolRun, run_tool, run_tool_fed, try_tool
from harness.app.legacy_store import MigrationCounts
from harness.app.target import Target, fill
from harness.drivers.base import (
    MEMORY_FIELDS,
    NEAR_TIE,
    Account,
    ApiAnswer,
    AppDriver,
    Capability,
    DriverError,
    EdgeAnswer,
    Hit,
    Memory,
    NewUser,
    OwnTextQuery,
    OwnTextResult,
    PromisedIndex,
    RefusedStart,
    Reply,
    RestartApp,
    UserSession,
)
from harness.services.databases import IndexScans, VectorIndex, scalar, vector_index_scans, vector_indexes
from harness.services.http_clients import tls
from harness.suite import report
from harness.vocabulary.turn import Turn
from harness.warm_start import popen
from model_server.client import ModelServer, start_model_server


def _check(resp: httpx.Response, what: str, promised: int = 200) -> dict:
    """The answer's JSON, once it is the status memchat's API promises for the call (memchat/README.md: 201 for
    what it creates, 204 for what it deletes, 200 otherwise): a create answered 200 or 202 breaks its clients."""
    if resp.status_code >= 400:
        raise DriverError(f"{what}: HTTP {resp.status_code} {resp.text[:300]}")
    if resp.status_code != promised:
        raise DriverError(f"{what}: HTTP {resp.status_code} where memchat's API promises {promised} "
                          f"{resp.text[:300]}")
    return resp.json() if resp.content else {}  # 204: nothing to say


# Every status memchat's API answers (memchat/README.md): its successes, and its refusals, all 4xx; anything else
# (a 3xx to a refused write, a 1xx) is neither a success nor a refusal its clients can read.
ANSWERED = frozenset({200, 201, 204}) | frozenset(range(400, 500))


# Records of a legacy load compared with the store's export; the replay's larger loads are for scale, checked by count.
LEGACY_CHECKED_UP_TO = 10_000

CLOCK_SET_WITHIN = timedelta(seconds=5)  # a clock set answers the time set, a moment later at most (it keeps running)
TITLE_TAKEN = 200  # memchat/README.md, POST /api/conversations: the longest title a create takes

# memchat/README.md, migrate: the whole summary line its operators read, every count and both times in it.
MIGRATED = re.compile(r"^migrated: read (\d+), written (\d+), skipped (\d+) \((\d+) already present, (\d+) deleted by "
                      r"their owner, (\d+) with an unknown owner\), re-embedded (\d+); rows copied in (-?\d+\.\d) s, "
                      r"index built in (-?\d+\.\d) s$", re.MULTILINE)
# The fields memchat/README.md says `export` writes of each memory (its vector as base64 float32: --encoding base64).
EXPORTED_FIELDS = frozenset({"id", "user_id", "conversation_id", "text", "embedding_f32", "embedder", "created_at",
                             "expires_at"})
REFUSED = 2  # memchat/cli.py, CliError: a tool refused in one line "memchat: ..." exits 2, as argparse's own refusals
# Stores nobody answers at: a socket in a folder that does not exist.
NOWHERE_PG = "postgresql://memtest@/none?host=/nonexistent/memtest"
NOWHERE_REDIS = "unix:///nonexistent/memtest/redis.sock"


def _check_summary(output: str, took_s: float) -> None:
    """memchat migrate's summary, as memchat/README.md documents it, read as its operators read it: every memory read
    is written or skipped, every skipped one counted once under its reason, and the two times its own (neither
    negative, together no longer than the run the suite waited for, each rounded to a tenth of a second)."""
    m = MIGRATED.search(output)
    if m is None:
        raise DriverError(f"memchat migrate's summary does not read as memchat/README.md documents it: "
                          f"{output.strip()[-300:]!r}")
    read, written, skipped, present, deleted, unknown = (int(g) for g in m.groups()[:6])
    if skipped != present + deleted + unknown or read != written + skipped:
        raise DriverError(f"memchat migrate's counts do not add up (read = written + skipped, skipped = already "
                          f"present + deleted + unknown owner): {m[0]!r}")
    copy_s, index_s = float(m[8]), float(m[9])
    if copy_s < 0 or index_s < 0 or copy_s + index_s > took_s + 0.1:
        raise DriverError(f"memchat migrate says it copied the rows in {copy_s} s and built the index in {index_s} s, "
                          f"where the whole run took {took_s:.2f} s: {m[0]!r}")


def _check_refusal(name: str, run: ToolRun) -> ToolRun:
    """A tool run as it ended, once it ended as memchat's tools end: well (0), or refused with exit status 2."""
    if run.returncode not in (0, REFUSED):
        said = [line for line in run.stderr.splitlines() if line.strip()]
        raise DriverError(f"memchat {name} ended with exit status {run.returncode}, where a refusal ends with "
                          f"{REFUSED}; it said {said[-3:]}")
    return run


class MemchatSession(UserSession):
    def __init__(self, target: Target, base_url: str, account: Account) -> None:
        self.target = target
        self.account = account
        self.http = httpx.Client(verify=tls(), base_url=base_url, timeout=30)
        _check(self.http.post(target.api["login"], json={"email": account.email, "password": account.password}),
               f"signing in {account.email}")

    def cookies(self) -> list[dict]:
        """The session cookie(s), in Playwright's storage_state shape."""
        return [{"name": c.name, "value": c.value, "domain": c.domain.lstrip(".") or "127.0.0.1",
                 "path": c.path or "/", "expires": c.expires or -1, "httpOnly": True, "secure": False,
                 "sameSite": "Lax"} for c in self.http.cookies.jar]

    def conversation_ids(self) -> list[str]:
        return list(self.conversation_titles())

    def conversation_titles(self) -> dict[str, str]:
        data = _check(self.http.get(self.target.api["conversations"]), "listing conversations")
        return {c["id"]: c["title"] for c in data["conversations"]}

    def ask_for_conversation(self, conversation_id: str) -> ApiAnswer:
        resp = self.http.get(self.target.path_of("messages", conversation_id=conversation_id))
        return ApiAnswer(resp.status_code, resp.text)

    def turns(self, conversation_id: str) -> list[Turn]:
        resp = self.http.get(self.target.path_of("messages", conversation_id=conversation_id))
        return [Turn(m["role"], m["text"]) for m in _check(resp, "reading messages")["messages"]]

    def memories(self) -> list[Memory]:
        data = _check(self.http.get(self.target.api["memories"]), "listing memories")
        return [Memory(m["id"], m["text"]) for m in data["memories"]]

    def remember(self, texts: list[str], conversation_id: str | None = None) -> None:
        body = {"items": texts, **({"conversation_id": conversation_id} if conversation_id else {})}
        stored = _check(self.http.post(self.target.api["memories"], json=body), "writing memories", 201)["stored"]
        if len(set(stored)) != len(texts):  # memchat/README.md: {"stored": [id, ...]}, one per item
            raise DriverError(f"writing {len(texts)} memories: memchat answered {len(set(stored))} distinct ids "
                              f"{stored[:5]}")

    def search(self, query: str, k: int) -> list[Hit]:
        data = _check(self.http.get(self.target.api["memory_search"], params={"q": query, "k": k}),
                      f"searching memory for {query[:60]!r}")
        hits = [Hit(h["id"], float(h["score"]), h["text"]) for h in data["results"]]
        scores = [h.score for h in hits]
        if len(hits) > k or scores != sorted(scores, reverse=True):  # memchat/README.md: at most k, best first
            raise DriverError(f"searching memory for {query[:60]!r} with k={k}: memchat answered {len(hits)} results "
                              f"scored {scores}, where it promises at most {k}, best first")
        return hits

    def seed_conversation(self, sentence: str) -> str:
        """Tell the assistant through the API, and write what it says to remember, as the front end would."""
        conversation_id = self.start_conversation()
        self.send(conversation_id, sentence)
        return conversation_id

    # -- the chat as memchat's own front end speaks it (its API: the page is one client of it) ---------------------
    def start_conversation(self) -> str:
        made = _check(self.http.post(self.target.api["conversations"], json={"title": ""}),
                      "creating a conversation", 201)["conversation"]
        listed = _check(self.http.get(self.target.api["conversations"]), "listing conversations")["conversations"]
        if not listed or listed[0] != made:  # memchat/README.md: listed newest first, as the create answered it
            raise DriverError(f"creating a conversation: memchat answered {made}, and lists first "
                              f"{listed[0] if listed else 'nothing'}")
        return str(made["id"])

    def send(self, conversation_id: str, text: str) -> Reply:
        """One turn; what the assistant says to remember is written as the front end writes it (memchat's server
        leaves memory writes to its clients), in requests of at most 50."""
        turn = _check(self.http.post(self.target.path_of("messages", conversation_id=conversation_id),
                                     json={"text": text}), "sending a message")
        said = (turn["message"]["role"], turn["message"]["text"], turn["reply"]["role"])
        if said != ("user", text, "assistant"):  # memchat/README.md: the message as sent, and the reply to it
            raise DriverError(f"sending {text[:60]!r}: memchat answered the message and reply as {said}")
        for start in range(0, len(turn["remember"]), 50):
            self.remember(turn["remember"][start:start + 50], conversation_id)
        return Reply(turn["reply"]["text"], tuple(r["text"] for r in turn["recalled"]),
                     tuple(r["id"] for r in turn["recalled"]))

    def credentials(self) -> dict:
        return {"cookies": self.cookies(), "origins": []}

    def request(self, method: str, path: str, *, json: object = None,
                headers: dict[str, str] | None = None) -> ApiAnswer:
        resp = self.http.request(method, path, json=json, headers=headers)
        if resp.status_code not in ANSWERED and resp.status_code < 500:  # a 5xx is the caller's to judge
            raise DriverError(f"{method} {path}: memchat answered {resp.status_code}, which its API never answers "
                              f"(200, 201 or 204, a refusal 4xx): {resp.text[:300]}")
        return ApiAnswer(resp.status_code, resp.text)

    # -- what users take back: the calls memchat's memories page and conversation list make ------------------------
    def delete_memory(self, memory_id: str) -> None:
        _check(self.http.delete(self.target.path_of("memory", memory_id=memory_id)), "deleting a memory", 204)

    def edit_memory(self, memory_id: str, text: str) -> None:
        edited = _check(self.http.put(self.target.path_of("memory", memory_id=memory_id), json={"text": text}),
                        "editing a memory")["memory"]
        listed = _check(self.http.get(self.target.api["memories"]), "listing memories")["memories"]
        if edited not in listed or edited["id"] != memory_id:  # memchat/README.md: the memory as the list gives it
            raise DriverError(f"editing memory {memory_id}: memchat answered {edited}, which its list does not hold "
                              "as it is")

    def clear_memories(self) -> None:
        listed = len(self.memories())
        deleted = _check(self.http.delete(self.target.api["memories"]), "clearing memories")["deleted"]
        if not isinstance(deleted, int) or deleted < listed:  # memchat/README.md: N counts them all, expired ones too
            raise DriverError(f"clearing memories: memchat answered {{'deleted': {deleted!r}}} where {listed} were "
                              "listed just before")

    def delete_conversation(self, conversation_id: str) -> None:
        _check(self.http.delete(self.target.path_of("conversation", conversation_id=conversation_id)),
               "deleting a conversation", 204)

    def set_memory(self, enabled: bool) -> None:
        _check(self.http.put(self.target.api["settings"], json={"memory": enabled}), "saving the memory setting")

    def memory_setting(self) -> bool | None:
        return _check(self.http.get(self.target.api["settings"]), "reading the memory setting")["settings"]["memory"]

    def close(self) -> None:
        self.http.close()


class MemchatDriver(AppDriver):
    name = "memchat"
    capabilities = frozenset(Capability)
    kept_fields = MEMORY_FIELDS

    def _admin(self, app: RunningApp) -> httpx.Client:
        return httpx.Client(verify=tls(), base_url=app.base_url, timeout=30,
                            headers={"Authorization": f"Bearer {app.admin_token}"} if app.admin_token else {})

    def start(self, *, pg_dsn: str, redis_url: str, settings: dict[str, str], log_path: Path,
              data_dir: Path | None = None, port: int | None = None) -> RunningApp:
        port = port or free_port()
        command = fill(self.target.start_command, port=str(port), pg_dsn=pg_dsn, redis_url=redis_url)
        for name, value in settings.items():
            command += [f"--{name}", value]
        token = secrets.token_urlsafe(24)
        base_url = f"http://127.0.0.1:{port}"
        env = {**self.target.env, self.target.app["admin_token_env"]: token}
        model = self._model_server(log_path)
        if model:  # its model client (memchat/README.md: MEMCHAT_LLM_*) asks the suite's model server, with a key
            env |= {"MEMCHAT_LLM_BASE_URL": model.base_url, "MEMCHAT_LLM_MODEL": self.target.app["chat_model"],
                    "MEMCHAT_LLM_API_KEY": model.api_key or ""}
        try:
            process, health = start_process(self.target.name, command, log_path=log_path, env=env,
                                            health_url=base_url + self.target.health_path,
                                            warm=self.target.warm_start)
        except BaseException:
            if model:
                model.stop()
            raise
        # What its operator reads as it starts (memchat/cli.py, serve), first: where it serves, and which faults are
        # on (given its databases, it starts none of its own, and says nothing of them).
        banner = (f"memchat {health.get('version')}: serving on {base_url} (faults: "
                  f"{','.join(sorted(health.get('faults', []))) or 'none'})")
        said = [line for line in log_path.read_text(encoding="utf-8", errors="replace").splitlines()
                if line.startswith("memchat")]
        if said[:1] != [banner]:
            for started in (process, *(model.processes if model else [])):
                stop_process(started)
            raise DriverError(f"memchat serve, given its databases, started saying {said[:2]}, not {banner!r} first "
                              f"(log: {log_path})")
        # Given a model, its health names it and where it is asked (memchat/README.md, GET /healthz): an app that
        # answers with its built-in assistant instead (the same words) would pass every scenario untested.
        answering = f"{env['MEMCHAT_LLM_MODEL']} at {model.base_url}" if model else "built-in"
        if health.get("assistant") != answering:
            for started in (process, *(model.processes if model else [])):
                stop_process(started)
            raise AppLaunchError(f"memchat, started with {'the model ' + answering if model else 'no model'}, says "
                                 f"its assistant is {health.get('assistant')!r} (GET /healthz; log: {log_path})")
        return RunningApp(base_url, health, token, pg_dsn, redis_url, dict(settings), True, log_path, process,
                          companions=model.processes if model else [], model_url=model.base_url if model else None)

    def _model_server(self, log_path: Path) -> ModelServer | None:
        """The suite's model server for its model client, where the target names the chat model memchat is to ask
        (memchat-model.toml): started as the app's companion, answering that model only, for a fresh random key,
        and as a chat model that calls no tools (memchat offers none: the memory under test is memchat's own)."""
        name = self.target.app.get("chat_model")
        if not name:
            return None
        return start_model_server(log_path.with_suffix(".model.log"), use_tools=False, chat_models=(str(name),),
                                  api_key=secrets.token_urlsafe(24))

    def attach(self, base_url: str, admin_token: str | None) -> RunningApp:
        return attach_app(self.target.name, base_url, self.target.health_path, admin_token)

    def describe(self, app: RunningApp) -> dict[str, str]:
        h = app.health
        return {"app": f"{h.get('app', self.target.name)} {h.get('version', '')}".strip(),
                "postgres": h.get("postgres", ""), "pgvector": h.get("pgvector", ""), "redis": h.get("redis", "")}

    def create_user(self, app: RunningApp, name: str, email: str, password: str,
                    user_id: str | None = None) -> Account:
        body = {"email": email, "password": password, **({"id": user_id} if user_id else {})}
        with self._admin(app) as admin:
            data = _check(admin.post(self.target.api["admin_users"], json=body), f"creating user {email}", 201)
        return Account(data["user"]["id"], data["user"]["email"], password, name)

    def add_user_by_tool(self, app: RunningApp, name: str, email: str, password: str) -> Account:
        """`memchat users add`, which says "added EMAIL (ID)": the account it names is the one the app then has."""
        said = run_tool(self.target, "users_add", pg_dsn=str(app.pg_dsn), email=email, password=password, timeout=60)
        added = re.search(r"^added (\S+) \((\S+)\)$", said.strip())
        if added is None or added[1].lower() != email.lower():
            raise DriverError(f"memchat users add {email} said {said.strip()[-200:]!r}, not 'added {email} (<id>)'")
        return Account(added[2], added[1], password, name)

    def delete_user_by_tool(self, app: RunningApp, account: Account) -> None:
        """`memchat users delete`, which names the account it deleted."""
        said = run_tool(self.target, "users_delete", pg_dsn=str(app.pg_dsn), email=account.email, timeout=60)
        if not said.strip().startswith(f"deleted {account.email} ({account.id})"):
            raise DriverError(f"memchat users delete {account.email} said {said.strip()[-200:]!r}, not 'deleted "
                              f"{account.email} ({account.id}) ...'")

    def try_add_user_by_tool(self, app: RunningApp, email: str, password: str) -> ToolRun:
        return _check_refusal("users add", try_tool(self.target, "users_add", pg_dsn=str(app.pg_dsn), email=email,
                                                    password=password, timeout=60))

    def try_delete_user_by_tool(self, app: RunningApp, email: str) -> ToolRun:
        return _check_refusal("users delete", try_tool(self.target, "users_delete", pg_dsn=str(app.pg_dsn),
                                                       email=email, timeout=60))

    def refused_starts(self, app: RunningApp) -> list[RefusedStart]:
        """memchat serve as an operator may start it wrongly (memchat/cli.py: each a CliError, one line "memchat: ..."
        and exit status 2): on a port another program listens on (it names the address and --port), with a
        database or a Redis nobody answers at (a socket in a folder that does not exist: it names the one it cannot
        reach), with a fault it does not know (it names it)."""
        with socket.socket() as holder:
            holder.bind(("127.0.0.1", 0))
            holder.listen()
            taken = holder.getsockname()[1]
            return [self._refused_start(app, what, named, **values) for what, named, values in (
                ("a port another program listens on", f"memchat: cannot listen on 127.0.0.1:{taken}: ",
                 {"port": str(taken)}),
                ("a database nobody answers at", f"memchat: cannot connect to PostgreSQL at {NOWHERE_PG}: ",
                 {"pg_dsn": NOWHERE_PG}),
                ("a Redis nobody answers at", f"memchat: cannot connect to Redis at {NOWHERE_REDIS}: ",
                 {"redis_url": NOWHERE_REDIS}),
                ("a fault it does not know", "no-such-fault", {"faults": "no-such-fault"}))]

    def _refused_start(self, app: RunningApp, what: str, named: str, **values: str) -> RefusedStart:
        given = {"port": str(free_port()), "pg_dsn": str(app.pg_dsn), "redis_url": str(app.redis_url)}
        settings = {**app.settings, **{k: v for k, v in values.items() if k not in given}}
        command = fill(self.target.start_command, **{**given, **{k: v for k, v in values.items() if k in given}})
        for name, value in settings.items():
            command += [f"--{name}", value]
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            process = popen(self.target.warm_start, command, cwd=ROOT, stdout=out, stderr=err)
            try:
                returncode = process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
                raise DriverError(f"memchat serve with {what} did not end within 60 s: it must refuse to "
                                  "start") from None
            err.seek(0)
            said = tuple(line for line in err.read().decode(errors="replace").splitlines() if line.strip())
        if returncode not in (0, REFUSED):
            raise DriverError(f"memchat serve with {what} ended with exit status {returncode}, where a refusal ends "
                              f"with {REFUSED}; it said {list(said[-3:])}")
        return RefusedStart(what, named, returncode, said)

    def edge_answers(self, app: RunningApp, session: UserSession) -> list[EdgeAnswer]:
        """memchat/README.md, HTTP API: "Bodies over 64 KiB (the user import: 64 MiB) answer 413; malformed JSON or
        fields answer 400; nothing is changed then"; a user created answers 201, one whose e-mail exists 409. Each
        body limit is tried at its edge ([app] body_limit_bytes, import_body_limit_bytes): a valid body padded with
        spaces to exactly the limit, and one byte more."""
        assert isinstance(session, MemchatSession)
        limit, import_limit = int(self.target.app["body_limit_bytes"]), int(self.target.app["import_body_limit_bytes"])
        api, mine = self.target.api, session.account
        memory_id = next((m.id for m in session.memories()), "no-memory-of-hers")
        note = f"My padded note {secrets.token_hex(4)} is here."
        newcomer = {"id": f"edge-{secrets.token_hex(6)}", "email": f"edge-{secrets.token_hex(6)}@x.test",
                    "password": secrets.token_urlsafe(12)}
        too_long = "x" * (int(self.target.limits.longest_message or 4000) + 1)
        most = int(self.target.app["import_users"])

        def crowd(count: int) -> list[dict]:
            """`count` new users for an import, the last one's e-mail not an address."""
            tag = secrets.token_hex(4)
            users: list[dict] = [{"id": f"crowd-{tag}-{n}", "email": f"crowd-{tag}-{n}@x.test"} for n in range(count)]
            users[-1]["email"] = "not-an-address"
            return users

        def padded(body: object, size: int) -> bytes:
            raw = json.dumps(body).encode()
            if len(raw) > size:
                raise DriverError(f"a body of {len(raw)} bytes cannot be padded to {size}")
            return raw + b" " * (size - len(raw))

        def answer(http: httpx.Client, what: str, promised: int, method: str, path: str, body: object = None,
                   content: bytes | None = None, kept: str = "", says: str = "") -> EdgeAnswer:
            if content is None and body is not None:
                content = json.dumps(body).encode()
            resp = http.request(method, path, content=content, headers={"Content-Type": "application/json"},
                                timeout=300)
            return EdgeAnswer(what, promised, resp.status_code, resp.text[:300], kept if resp.status_code < 300 else "",
                              says)

        def chunked(http: httpx.Client, what: str, promised: int, path: str, content: bytes) -> EdgeAnswer:
            """A body sent in chunks, with no Content-Length: its size known only as it arrives."""
            def pieces() -> Iterator[bytes]:
                for start in range(0, len(content), 8192):
                    yield content[start:start + 8192]
            resp = http.post(path, content=pieces(), headers={"Content-Type": "application/json"}, timeout=300)
            return EdgeAnswer(what, promised, resp.status_code, resp.text[:300])

        def titled(http: httpx.Client, what: str, title: str, shown: str) -> EdgeAnswer:
            """A conversation created with `title`: the title its create answers and the one its list gives (the page
            names it by that list) are both `shown`, where the app cuts titles to [limits] title_length."""
            resp = http.post(api["conversations"], json={"title": title}, timeout=30)
            if resp.status_code != 201:
                return EdgeAnswer(what, 201, resp.status_code, resp.text[:300])
            made = resp.json()["conversation"]
            listed = session.conversation_titles().get(made["id"], "(not listed)")
            seen = (f"titled {len(made['title'])} and {len(listed)} characters: created as {made['title']!r}, listed "
                    f"as {listed!r}")
            return EdgeAnswer(what, 201, resp.status_code, seen,
                              says=f"titled {len(shown)} and {len(shown)} characters: created as {shown!r}, listed as "
                                   f"{shown!r}")

        http = session.http
        cut = int(self.target.limits.title_length or 80)
        title = "My trip plans " + "".join(chr(ord("a") + n % 26) for n in range(cut + 1))[:cut + 1 - 14]
        title_taken = (title * (TITLE_TAKEN // len(title) + 1))[:TITLE_TAKEN]
        conversation_id = next(iter(session.conversation_ids()), "c_0")
        answers = [
            # A field the documentation requires, left out, is malformed (400), never taken as empty; an optional one
            # given is kept: a title as long as the list shows whole, and one character more, cut to that length.
            answer(http, "a turn with no text", 400, "POST",
                   self.target.path_of("messages", conversation_id=conversation_id), body={}),
            answer(http, "a memory edited with no text", 400, "PUT",
                   self.target.path_of("memory", memory_id=memory_id), body={}),
            titled(http, f"a conversation created with a title of {cut} characters", title[:cut], title[:cut]),
            titled(http, f"a conversation created with a title of {cut + 1} characters", title, title[:cut]),
            # The longest title a create takes (memchat/README.md), kept cut; one character more is refused.
            titled(http, f"a conversation created with a title of {TITLE_TAKEN} characters", title_taken,
                   title_taken[:cut]),
            answer(http, f"a conversation created with a title of {TITLE_TAKEN + 1} characters", 400, "POST",
                   api["conversations"], body={"title": title_taken + "z"}),
            answer(http, f"a memory write of exactly {limit} bytes", 201, "POST", api["memories"],
                   content=padded({"items": [note]}, limit), kept=note),
            answer(http, f"a memory write of {limit + 1} bytes", 413, "POST", api["memories"],
                   content=padded({"items": ["My oversized note is here."]}, limit + 1)),
            answer(http, "a memory write whose body is a list, not an object", 400, "POST", api["memories"],
                   body=["My listed note is here."]),
            answer(http, f"a memory edited to {len(too_long)} characters", 400, "PUT",
                   self.target.path_of("memory", memory_id=memory_id), body={"text": too_long}),
            answer(http, "the memory setting given as a word", 400, "PUT", api["settings"], body={"memory": "off"}),
            answer(http, "a setting the app does not have", 400, "PUT", api["settings"],
                   body={"memory": True, "theme": "dark"}),
            answer(http, "a memory write that is not JSON", 400, "POST", api["memories"], content=b'{"items": ['),
            answer(http, "a memory write of a blank memory", 400, "POST", api["memories"], body={"items": ["  "]}),
            chunked(http, f"a memory write of {limit + 1} bytes sent in chunks, its size not declared", 413,
                    api["memories"], padded({"items": ["My streamed note is here."]}, limit + 1)),
            answer(http, "a memory write holding half of a character", 400, "POST", api["memories"],
                   content=b'{"items": ["My note \\ud800 is here."]}'),
            answer(http, "a memory write of 51 memories, one more than a write holds", 400, "POST", api["memories"],
                   body={"items": [f"My note {n} is here." for n in range(51)]}),
            answer(http, "a search of nothing", 400, "GET", f"{api['memory_search']}?q=&k=5"),
            answer(http, "a search for a number of memories that is no number", 400, "GET",
                   f"{api['memory_search']}?q=note&k=some"),
            answer(http, "a search for 0 memories", 400, "GET", f"{api['memory_search']}?q=note&k=0"),
            answer(http, "a search for 101 memories, one more than a search gives", 400, "GET",
                   f"{api['memory_search']}?q=note&k=101"),
            answer(http, "a search for 100 memories", 200, "GET", f"{api['memory_search']}?q=note&k=100"),
            # Another user's memory or conversation answers exactly as one nobody has: 404.
            answer(http, "an edit of a memory nobody has", 404, "PUT", self.target.path_of("memory", memory_id="m_0"),
                   body={"text": "My edited note is here."}),
            answer(http, "a deletion of a memory nobody has", 404, "DELETE",
                   self.target.path_of("memory", memory_id="m_0")),
            answer(http, "the turns of a conversation nobody has", 404, "GET",
                   self.target.path_of("messages", conversation_id="c_0")),
            answer(http, "a turn in a conversation nobody has", 404, "POST",
                   self.target.path_of("messages", conversation_id="c_0"), body={"text": "My turn is here."}),
            answer(http, "a deletion of a conversation nobody has", 404, "DELETE",
                   self.target.path_of("conversation", conversation_id="c_0")),
            answer(http, "the page of a conversation nobody has", 404, "GET",
                   self.target.path_of("conversation_page", conversation_id="c_0")),
            answer(http, "a memory write into a conversation nobody has", 404, "POST", api["memories"],
                   body={"items": ["My placed note is here."], "conversation_id": "c_0"}),
            # While her memory is off, a write is refused as a conflict with her choice: 409.
            answer(http, "her memory turned off", 200, "PUT", api["settings"], body={"memory": False}),
            answer(http, "a memory write while her memory is off", 409, "POST", api["memories"],
                   body={"items": ["My unwanted note is here."]}),
            answer(http, "her memory turned on again", 200, "PUT", api["settings"], body={"memory": True}),
        ]
        with httpx.Client(verify=tls(), base_url=app.base_url, timeout=30) as stranger:
            answers.append(answer(stranger, "a memory write signed in as nobody", 401, "POST", api["memories"],
                                  body={"items": ["My stray note is here."]}))
            answers.append(answer(stranger, f"a sign-in as {mine.email} with no password", 400, "POST", api["login"],
                                  body={"email": mine.email}))
        with httpx.Client(verify=tls(), base_url=app.base_url, timeout=30,
                          headers={"Authorization": "Bearer not-the-admin-token"}) as impostor:
            answers.append(answer(impostor, "a user created with a wrong admin token", 401, "POST", api["admin_users"],
                                  body={"email": newcomer["email"], "password": newcomer["password"]}))
        with self._admin(app) as admin:
            answers += [
                answer(admin, "a user whose e-mail is not an address", 400, "POST", api["admin_users"],
                       body={"email": "not-an-address", "password": newcomer["password"]}),
                answer(admin, "a user whose e-mail has an account", 409, "POST", api["admin_users"],
                       body={"email": mine.email, "password": newcomer["password"]}),
                answer(admin, "an import whose user has no e-mail", 400, "POST", api["admin_users_import"],
                       body={"users": [{"id": newcomer["id"], "password": newcomer["password"]}]}),
                answer(admin, "a user whose id is a number", 400, "POST", api["admin_users"],
                       body={"email": newcomer["email"], "password": newcomer["password"], "id": 5}),
                answer(admin, "an import whose user is a word", 400, "POST", api["admin_users_import"],
                       body={"users": ["someone"]}),
                answer(admin, "an import of nobody", 400, "POST", api["admin_users_import"], body={"users": []}),
                # An import of a user whose id, or whose e-mail, has an account: 409 naming it, nothing imported.
                answer(admin, "an import whose second user's e-mail has an account", 409, "POST",
                       api["admin_users_import"], body={"users": [newcomer, {"id": f"{newcomer['id']}-2",
                                                                              "email": mine.email.upper()}]},
                       says=f"email '{mine.email.upper()}'"),
                answer(admin, "an import whose user's id has an account", 409, "POST", api["admin_users_import"],
                       body={"users": [{"id": mine.id, "email": f"other-{newcomer['email']}"}]},
                       says=f"id '{mine.id}'"),
                # The most users an import takes, and one more ([app] import_users): the most, refused only for its
                # last user's e-mail (nothing is created), and one more, refused for its size, before any user is read.
                answer(admin, f"an import of exactly {most} users, the last one's e-mail not an address", 400, "POST",
                       api["admin_users_import"], body={"users": crowd(most)}, says=f"users[{most - 1}]"),
                answer(admin, f"an import of {most + 1} users", 400, "POST", api["admin_users_import"],
                       body={"users": crowd(most + 1)}, says=f"1 to {most} users"),
                answer(admin, "an import giving one user twice", 400, "POST", api["admin_users_import"],
                       body={"users": [newcomer, newcomer]}),
                answer(admin, f"an import of {import_limit + 1} bytes", 413, "POST", api["admin_users_import"],
                       content=padded({"users": [newcomer]}, import_limit + 1)),
                answer(admin, f"an import of exactly {import_limit} bytes", 201, "POST", api["admin_users_import"],
                       content=padded({"users": [newcomer]}, import_limit)),
            ]
            # The clock's documented refusals (memchat/README.md, the admin API), nothing moved: on a settable clock a
            # malformed time, on the wall clock any move at all (409, naming the option that allows it).
            if app.settings.get("clock") == "settable":
                answers += [
                    answer(admin, "the clock set to a time that is not ISO-8601", 400, "POST", api["admin_clock"],
                           body={"now": "next Tuesday"}, says="ISO-8601"),
                    answer(admin, "the clock moved by days given as a word", 400, "POST", api["admin_clock"],
                           body={"advance_days": "two"}, says="advance_days"),
                ]
            else:
                answers.append(answer(admin, "the wall clock moved by a day", 409, "POST", api["admin_clock"],
                                      body={"advance_days": 1}, says="--clock settable"))
            answers.append(answer(admin, "a deletion of a user nobody has", 404, "DELETE",
                                  self.target.path_of("admin_user", user_id="u_0")))
            # The account rules at their edges (memchat/accounts.py): a password of at least 8 characters, an id of
            # 1 to 64 letters, digits and _.:-
            edge_id, short_id = ("e" + secrets.token_hex(32))[:64], f"edge8-{secrets.token_hex(6)}"
            for what, promised, body in (
                    ("a user whose password is 7 characters", 400,
                     {"email": f"{short_id}@x.test", "password": "7" * 7}),
                    ("a user whose password is 8 characters", 201,
                     {"email": f"{short_id}@x.test", "password": "8" * 8, "id": short_id}),
                    ("a user whose id holds a space", 400,
                     {"email": f"spaced-{short_id}@x.test", "password": newcomer["password"], "id": "a b"}),
                    ("a user whose id is 65 characters", 400,
                     {"email": f"long-{short_id}@x.test", "password": newcomer["password"], "id": edge_id + "e"}),
                    ("a user whose id is 64 characters", 201,
                     {"email": f"long-{short_id}@x.test", "password": newcomer["password"], "id": edge_id})):
                answers.append(answer(admin, what, promised, "POST", api["admin_users"], body=body))
            answers += [answer(admin, f"a deletion of the user {uid} made above", 200, "DELETE",
                               self.target.path_of("admin_user", user_id=uid))
                        for uid in (newcomer["id"], short_id, edge_id)]
        return answers

    def delete_user(self, app: RunningApp, account: Account) -> None:
        with self._admin(app) as admin:
            resp = admin.delete(self.target.path_of("admin_user", user_id=account.id))
        if resp.status_code not in (200, 404):
            raise DriverError(f"deleting user {account.email}: HTTP {resp.status_code} {resp.text[:200]}")
        if resp.status_code == 200 and resp.json() != {"deleted": True}:  # its admin API's promise, to its own tools
            raise DriverError(f"deleting user {account.email}: the app answered 200 with {resp.text[:200]}, not "
                              '{"deleted": true}')

    def session(self, app: RunningApp, account: Account) -> MemchatSession:
        return MemchatSession(self.target, app.base_url, account)

    def try_sign_in(self, app: RunningApp, email: str, password: str) -> str:
        with httpx.Client(verify=tls(), base_url=app.base_url, timeout=30) as http:
            resp = http.post(self.target.api["login"], json={"email": email, "password": password})
        if resp.status_code == 200:
            return ""
        try:
            said = str(resp.json().get("error", resp.text))
        except ValueError:
            said = resp.text[:300]
        # memchat/README.md, POST /api/login: 401 on bad credentials, 429 while sign-in is locked (its words then:
        # "Too many wrong passwords...", memchat/sign_ins.py): a client or an operator's alerting keys on the status.
        promised = 429 if said.startswith("Too many wrong passwords") else 401
        if resp.status_code != promised:
            raise DriverError(f"signing in as {email}: memchat answered {resp.status_code} {said!r}, where it promises "
                              f"{promised} for that refusal")
        return said

    def browser_state(self, app: RunningApp, session: UserSession) -> dict:
        assert isinstance(session, MemchatSession)
        return {"cookies": session.cookies(), "origins": []}

    def fault_catalogue(self) -> list[dict[str, str]]:
        return json.loads(run_tool(self.target, "list_faults", timeout=60))

    def made_up_credentials(self, app: RunningApp, like: dict) -> dict:
        return {**like, "cookies": [{**c, "value": secrets.token_urlsafe(32)} for c in like.get("cookies", [])]}

    def accepts(self, app: RunningApp, browser_state: dict) -> bool:
        cookies = {c["name"]: c["value"] for c in browser_state.get("cookies", [])}
        with httpx.Client(verify=tls(), base_url=app.base_url, timeout=30, cookies=cookies) as http:
            return http.get(self.target.api["me"]).status_code == 200

    def remains_of(self, app: RunningApp, account: Account, conversation_ids: list[str],
                   memory_ids: list[str]) -> dict[str, int]:
        queries = {
            "memories": ("SELECT count(*) FROM memories WHERE user_id = %s OR id = ANY(%s)", (account.id, memory_ids)),
            "conversations": ("SELECT count(*) FROM conversations WHERE user_id = %s OR id = ANY(%s)",
                              (account.id, conversation_ids)),
            "messages": ("SELECT count(*) FROM messages WHERE conversation_id = ANY(%s)", (conversation_ids,)),
            "sessions": ("SELECT count(*) FROM sessions WHERE user_id = %s", (account.id,)),
            "users": ("SELECT count(*) FROM users WHERE id = %s", (account.id,)),
        }
        with psycopg.connect(str(app.pg_dsn), connect_timeout=10) as conn:
            return {kind: scalar(conn, sql, params) for kind, (sql, params) in queries.items()}

    def memory_remains(self, app: RunningApp, memory_ids: list[str]) -> dict[str, int]:
        """memchat keeps a memory's vector in its row (the `embedding` column)."""
        with psycopg.connect(str(app.pg_dsn), connect_timeout=10) as conn:
            return {"memory rows": scalar(conn, "SELECT count(*) FROM memories WHERE id = ANY(%s)", (memory_ids,)),
                    "vectors": scalar(conn, "SELECT count(*) FROM memories WHERE id = ANY(%s) AND embedding IS NOT "
                                            "NULL", (memory_ids,))}

    def conversation_remains(self, app: RunningApp, conversation_id: str) -> dict[str, int]:
        """memchat deletes a conversation's row and, with it, its messages (memchat/README.md)."""
        with psycopg.connect(str(app.pg_dsn), connect_timeout=10) as conn:
            return {"conversation rows": scalar(conn, "SELECT count(*) FROM conversations WHERE id = %s",
                                                (conversation_id,)),
                    "messages": scalar(conn, "SELECT count(*) FROM messages WHERE conversation_id = %s",
                                       (conversation_id,))}

    def import_users(self, app: RunningApp, users: list[NewUser]) -> dict[str, str]:
        with self._admin(app) as admin:
            for start in range(0, len(users), 50_000):
                body = {"users": [{"id": u.id, "email": u.email, **({"password": u.password} if u.password else {})}
                                  for u in users[start:start + 50_000]]}
                _check(admin.post(self.target.api["admin_users_import"], json=body, timeout=300),
                       f"importing {len(body['users'])} users", 201)
        return {}

    # memchat's recall, set-based, a part of the owners at a time: each memory's row and its own score (the store's
    # cosine of its stored vector with its text's), and the best score of another memory of its owner where that
    # comes within NEAR_TIE of it or above it, on the exact path (the owner's rows scored inside that owner's rows),
    # or through the vector index for owners with at least ann-min-rows memories, as the app's search does.
    _OWN_ROW = ("SELECT q.memory_id, m.user_id, m.text, m.embedding IS NOT NULL,"
                " CASE WHEN m.embedder = %(embedder)s AND (m.expires_at IS NULL OR m.expires_at > now())"
                " THEN 1 - (m.embedding <=> q.vec) END, m.conversation_id, m.created_at, m.expires_at"
                " FROM own_text q LEFT JOIN memories m ON m.id = q.memory_id")
    _ELIGIBLE = ("x.embedding IS NOT NULL AND x.embedder = %(embedder)s"
                 " AND (x.expires_at IS NULL OR x.expires_at > now())")
    # Every pair of an owner's memories is scored (one distance each), but only those that come near the memory's own
    # score leave the join: the aggregate then holds a few rows, not the millions of pairs. Both sides are sorted by
    # owner and merged: a nested loop reads the owner's heap rows again for every memory of theirs (3x slower at
    # 100,000 memories), and a hash join walks one chain of the owner's rows per memory (2x).
    _EXACT_NEAR = (f"WITH mine AS MATERIALIZED (SELECT x.id, x.user_id, x.embedding FROM memories x"
                   f" WHERE x.user_id = ANY(%(owners)s) AND {_ELIGIBLE}),"
                   f" own AS MATERIALIZED (SELECT q.memory_id, q.owner_id, q.vec, (SELECT x.embedding <=> q.vec"
                   f" FROM memories x WHERE x.id = q.memory_id AND {_ELIGIBLE}) AS d"
                   f" FROM own_text q WHERE NOT q.ann AND q.vec IS NOT NULL)"
                   f" SELECT o.memory_id, 1 - min(x.embedding <=> o.vec) FROM own o JOIN mine x"
                   f" ON x.user_id = o.owner_id AND x.id <> o.memory_id"
                   f" WHERE (x.embedding <=> o.vec) <= o.d + {NEAR_TIE} GROUP BY o.memory_id")
    _ANN = (f"SELECT q.memory_id, 1 - best.d FROM own_text q CROSS JOIN LATERAL (SELECT d FROM (SELECT x.id,"
            f" x.embedding <=> q.vec AS d FROM memories x WHERE x.user_id = q.owner_id AND {_ELIGIBLE}"
            f" ORDER BY x.embedding <=> q.vec LIMIT 26) fetched WHERE id <> q.memory_id ORDER BY d, id LIMIT 1) best"
            f" WHERE q.ann AND q.vec IS NOT NULL")
    _BEST_OTHER = (f"SELECT q.memory_id, best.id FROM own_text q CROSS JOIN LATERAL (SELECT x.id FROM memories x"
                   f" WHERE x.user_id = q.owner_id AND x.id <> q.memory_id AND {_ELIGIBLE}"
                   f" ORDER BY x.embedding <=> q.vec, x.id LIMIT 1) best WHERE q.memory_id = ANY(%(ids)s)")
    # Memories whose owners are checked together: the pairs of a part are sorted in memory (about 1 kB a memory).
    PART_MEMORIES = 20_000

    def _ann(self, app: RunningApp) -> tuple[str, int]:
        index = str(app.health.get("index", "hnsw"))
        return index, int(app.settings.get("ann-min-rows", 100_000)) if index != "none" else 1 << 62

    def _tune_ann(self, conn: psycopg.Connection, app: RunningApp) -> None:
        """The session settings of the app's ANN path (memory_store.MemoryStore._tune_ann)."""
        conn.execute("SET LOCAL enable_seqscan = off")
        conn.execute("SET LOCAL enable_sort = off")
        index, _ = self._ann(app)
        if index == "hnsw":
            conn.execute("SET LOCAL hnsw.ef_search = 400")
        elif "ivfflat-before-load" not in app.health.get("faults", []):
            row = conn.execute("SELECT (regexp_match(indexdef, 'lists=''?(\\d+)'))[1] FROM pg_indexes"
                               " WHERE indexname = 'memories_embedding_ivfflat'").fetchone()
            conn.execute(f"SET LOCAL ivfflat.probes = {int(row[0]) if row and row[0] else 1}")

    def _own_text_part(self, app: RunningApp, rows: list[OwnTextQuery],
                       ann_owners: set[str]) -> list[OwnTextResult]:
        owners = sorted({q.owner_id for q in rows} - ann_owners)
        params = {"embedder": str(app.health.get("embedder", "hash-ngram-v1")), "owners": owners}
        with psycopg.connect(str(app.pg_dsn), connect_timeout=10) as conn:
            register_vector(conn)
            conn.execute("CREATE TEMP TABLE own_text (memory_id text, owner_id text, vec vector, ann bool)")
            with conn.cursor() as cur, cur.copy("COPY own_text FROM STDIN WITH (FORMAT BINARY)") as copy:
                copy.set_types(["text", "text", "vector", "bool"])
                for q in rows:
                    vec = np.frombuffer(q.vector, dtype="<f4") if q.vector is not None else None
                    copy.write_row((q.memory_id, q.owner_id, vec, q.owner_id in ann_owners))
            conn.execute("ANALYZE own_text")
            near: dict[str, float] = {}
            if owners:
                conn.execute("SET LOCAL work_mem = '256MB'")  # a part's rows sorted in memory, not spilled
                conn.execute("SET LOCAL enable_nestloop = off")
                conn.execute("SET LOCAL enable_hashjoin = off")
                near = dict(conn.execute(self._EXACT_NEAR, params).fetchall())
                for setting in ("work_mem", "enable_nestloop", "enable_hashjoin"):
                    conn.execute(f"RESET {setting}")
            found = conn.execute(self._OWN_ROW, params).fetchall()
            if ann_owners & {q.owner_id for q in rows}:
                self._tune_ann(conn, app)
                near.update(conn.execute(self._ANN, params).fetchall())
            # Which memory outranks each outranked one: few, looked up one by one.
            outranked = [r[0] for r in found if r[4] is not None and near.get(r[0], -2.0) > r[4]]
            better: dict[str, str] = (dict(conn.execute(self._BEST_OTHER, {**params, "ids": outranked}).fetchall())
                                      if outranked else {})
            conn.rollback()
        return [OwnTextResult(r[0], r[1], r[2], bool(r[3]), r[4], near.get(r[0]), better.get(r[0]),
                              {"conversation": r[5], "created_at": r[6] and r[6].isoformat(),
                               "expires_at": r[7] and r[7].isoformat()}) for r in found]

    def _parts(self, queries: list[OwnTextQuery], counts: dict[str, int]) -> list[list[OwnTextQuery]]:
        """The queries in parts of at most PART_MEMORIES and an eighth of the pairs to score (a query scores every
        row of its owner), the costliest first, so that the two connections finish together. An owner's queries stay
        together unless they alone cost more than that."""
        by_owner: dict[str, list[OwnTextQuery]] = {}
        for q in queries:
            by_owner.setdefault(q.owner_id, []).append(q)
        most = max(1, sum(len(mine) * counts.get(o, 0) for o, mine in by_owner.items()) // 8)
        groups: list[tuple[int, list[OwnTextQuery]]] = []
        for owner, mine in by_owner.items():
            step = max(1, most // max(1, counts.get(owner, 0)))
            groups += [(len(mine[i:i + step]) * counts.get(owner, 0), mine[i:i + step])
                       for i in range(0, len(mine), step)]
        parts: list[list[OwnTextQuery]] = [[]]
        spent = [0]
        for cost, group in sorted(groups, key=lambda g: g[0], reverse=True):
            if parts[-1] and (len(parts[-1]) + len(group) > self.PART_MEMORIES or spent[-1] + cost > most):
                parts.append([])
                spent.append(0)
            parts[-1] += group
            spent[-1] += cost
        return [part for _, part in sorted(zip(spent, parts, strict=True), key=lambda p: p[0], reverse=True)]

    def recall_by_own_text(self, app: RunningApp, queries: list[OwnTextQuery]) -> list[OwnTextResult]:
        _, ann_min_rows = self._ann(app)
        owners = sorted({q.owner_id for q in queries})
        with psycopg.connect(str(app.pg_dsn), connect_timeout=10) as conn:
            counts: dict[str, int] = dict(conn.execute("SELECT user_id, count(*) FROM memories WHERE user_id = ANY(%s)"
                                                       " GROUP BY user_id", (owners,)).fetchall())
        ann_owners = {o for o, n in counts.items() if n >= ann_min_rows}
        parts = self._parts(queries, counts)
        # Two connections take the parts in turn: PostgreSQL runs each on a core of its own.
        with ThreadPoolExecutor(2) as pool:
            return [result for part in pool.map(lambda p: self._own_text_part(app, p, ann_owners), parts)
                    for result in part]

    def nearest(self, app: RunningApp, owner_id: str, vectors: list[bytes | None], k: int) -> list[list[Hit]]:
        embedder = str(app.health.get("embedder", "hash-ngram-v1"))
        out: list[list[Hit]] = []
        with psycopg.connect(str(app.pg_dsn), connect_timeout=10) as conn:
            register_vector(conn)
            for vector in vectors:
                if vector is None:
                    out.append([])
                    continue
                rows = conn.execute(
                    "WITH mine AS MATERIALIZED (SELECT id, text, embedding FROM memories WHERE user_id = %s AND"
                    " embedding IS NOT NULL AND embedder = %s AND (expires_at IS NULL OR expires_at > now()))"
                    " SELECT id, text, 1 - (embedding <=> %s) AS score FROM mine"
                    " ORDER BY embedding <=> %s, id LIMIT %s",
                    (owner_id, embedder, np.frombuffer(vector, dtype="<f4"), np.frombuffer(vector, dtype="<f4"),
                     k)).fetchall()
                out.append([Hit(r[0], float(r[2]), r[1]) for r in rows])
        return out

    def remove_vector(self, app: RunningApp, memory_id: str) -> None:
        with psycopg.connect(str(app.pg_dsn), connect_timeout=10, autocommit=True) as conn:
            changed = conn.execute("UPDATE memories SET embedding = NULL WHERE id = %s", (memory_id,)).rowcount
        if changed != 1:
            raise DriverError(f"no memory {memory_id} in the store to remove the vector of")

    def export_memories(self, app: RunningApp, path: Path) -> None:
        self._export(str(app.pg_dsn), str(path))
        self._check_json_export(path, self._export(str(app.pg_dsn), "-", ("--encoding", "json")))

    # memchat/records.py: its JSON export writes each float32 of a vector rounded to 7 decimals (the default encoding,
    # the one an operator gets without --encoding): read back, each is within half a unit of the 7th decimal.
    JSON_EXPORT_DECIMALS = 7

    def _check_json_export(self, exact: Path, json_lines: str) -> None:
        """The export in memchat's default encoding (JSON numbers) holds the records of the exact one (base64 of the
        stored float32 values), each vector as the store holds it to the decimals it is rounded to."""
        exact_records = {r["id"]: r for r in map(json.loads, exact.read_text(encoding="utf-8").splitlines())}
        worst: tuple[float, str] = (0.0, "")
        for record in map(json.loads, json_lines.splitlines()):
            other = exact_records.pop(record.get("id"), None)
            numbers, packed = record.pop("embedding", None), other.pop("embedding_f32", None) if other else None
            if other is None or record != other or (numbers is None) != (packed is None):
                raise DriverError(f"memchat export --encoding json wrote {str(record)[:300]} where its base64 export "
                                  f"wrote {str(other)[:300]} (the same record, its vector as numbers)")
            if numbers is not None and packed is not None:
                gap = float(np.max(np.abs(np.asarray(numbers, dtype=np.float64)
                                          - np.frombuffer(base64.b64decode(packed), dtype="<f4"))))
                worst = max(worst, (gap, record["id"]))
        if exact_records:
            raise DriverError(f"memchat export --encoding json left out {len(exact_records)} records its base64 export "
                              f"wrote (first: {sorted(exact_records)[:2]})")
        if worst[0] > 0.5 * 10.0 ** -self.JSON_EXPORT_DECIMALS * (1 + 1e-6):
            raise DriverError(f"memchat export --encoding json wrote the vector of {worst[1]} {worst[0]:.1e} away from "
                              f"the float32 values its store holds (its base64 export), where rounding to "
                              f"{self.JSON_EXPORT_DECIMALS} decimals keeps each within "
                              f"{0.5 * 10.0 ** -self.JSON_EXPORT_DECIMALS:.0e}")

    def _export(self, store: str, file: str, extra: Sequence[str] = ()) -> str:
        """memchat export of a store to a file ("-": its standard output, returned), which then holds as many records
        as it says it exported ("exported N memories", on its error stream: the records are its output)."""
        run = try_tool(self.target, "export", extra=extra, store=store, file=file, timeout=600)
        if run.returncode != 0:
            said = [line for line in run.stderr.splitlines() if line.strip()]
            raise DriverError(f"memchat export of {store.split('@')[-1]} failed (exit status {run.returncode}): "
                              f"{said[-1:] or 'it said nothing'}")
        out = run.stdout if file == "-" else Path(file).read_text(encoding="utf-8")
        written = out.count("\n")
        if file != "-" and run.stdout:
            raise DriverError(f"memchat export to {file} also wrote {run.stdout.strip()[-100:]!r} on its output")
        if run.stderr != f"exported {written} memories\n":
            raise DriverError(f"memchat export wrote {written} records and said {run.stderr.strip()[-200:]!r}, not "
                              f"'exported {written} memories'")
        return out

    def vector_index_scans(self, app: RunningApp) -> dict[str, IndexScans]:
        with psycopg.connect(str(app.pg_dsn), connect_timeout=10) as conn:
            return vector_index_scans(conn)

    def vector_indexes(self, app: RunningApp) -> dict[str, VectorIndex]:
        with psycopg.connect(str(app.pg_dsn), connect_timeout=10) as conn:
            return vector_indexes(conn)

    # The rows of one HNSW graph, unless the bulk load was given --index-graph-rows (memchat/README.md, migrate).
    GRAPH_ROWS = 100_000

    def promised_vector_indexes(self, app: RunningApp, given: Sequence[str] = ()) -> dict[str, PromisedIndex]:
        """As of the app's last start or bulk load (`given`: the words given to the bulk load's tool), on the memories
        its store holds. memchat/README.md: `--index hnsw` keeps one graph, `memories_embedding_hnsw`, up to
        `--index-graph-rows` memories with a vector (100,000), and a bulk load builds more in parts of at most about
        that many, one partial index `memories_embedding_hnsw_<part>_of_<parts>` each, owners split by
        `mod(hashtext(user_id) & 2147483647, parts)`; `--index none` builds none. `--index ivfflat`
        (memchat/memory_store.py, _build_ivfflat) builds `memories_embedding_ivfflat` once the store holds memories,
        with pgvector's recommended lists: one per 1,000 memories with a vector (at least one), the square root of
        their number past a million."""
        index = str(app.health.get("index", "hnsw"))
        with psycopg.connect(str(app.pg_dsn), connect_timeout=10) as conn:
            rows = int(scalar(conn, "SELECT count(*) FROM memories WHERE embedding IS NOT NULL"))
        if index == "ivfflat":
            lists = max(1, int(math.sqrt(rows)) if rows > 1_000_000 else rows // 1000)
            return {"memories_embedding_ivfflat": PromisedIndex("ivfflat", (("lists", str(lists)),))} if rows else {}
        if index != "hnsw":
            return {}
        words = list(given)
        graph_rows = (int(words[words.index("--index-graph-rows") + 1]) if "--index-graph-rows" in words[:-1]
                      else self.GRAPH_ROWS)
        parts = max(1, -(-rows // max(1, graph_rows)))
        if parts == 1:
            return {"memories_embedding_hnsw": PromisedIndex("hnsw")}
        return {f"memories_embedding_hnsw_{part}_of_{parts}": PromisedIndex(
            "hnsw", predicate=f"(mod((hashtext(user_id) & 2147483647), {parts}) = {part})") for part in range(parts)}

    # -- the app's own tools -------------------------------------------------------------------------------------
    def load_legacy_store(self, app: RunningApp, records: Iterable[str], embedder: str,
                          timezone: str | None = None) -> None:
        # The worker's Redis db belongs to the running scenario (a worker runs one scenario at a time). Emptied at
        # once, freed on Redis's own thread: a synchronous FLUSHDB of the million memories an earlier scenario left
        # took longer than the client's 5 s socket timeout.
        client = redis.Redis.from_url(str(app.redis_url), socket_connect_timeout=5)
        try:
            client.flushdb(asynchronous=True)
        finally:
            client.close()
        # From its standard input, as the records are made: the tool checks each chunk before it writes it.
        fed = 0
        given: set[tuple[str, str, str]] = set()  # (id, owner, text) of each record, up to LEGACY_CHECKED_UP_TO

        def counted() -> Iterator[str]:
            nonlocal fed
            for line in records:
                fed += 1
                if fed <= LEGACY_CHECKED_UP_TO:
                    record = json.loads(line)
                    given.add((record["id"], record["user_id"], record["text"]))
                yield line

        said = run_tool_fed(self.target, "redis_load", counted(), redis_url=str(app.redis_url), file="-",
                            embedder=embedder, timezone=timezone or "", timeout=900)
        if said != f"loaded {fed} memories into {app.redis_url}\n":  # an operator reads this count: the records given
            raise DriverError(f"memchat's legacy loader was given {fed} records and said {said.strip()[-200:]!r}, not "
                              f"'loaded {fed} memories into {app.redis_url}'")
        if fed <= LEGACY_CHECKED_UP_TO:
            self._check_legacy_store(app, given)

    def legacy_memory_ids(self, app: RunningApp) -> set[str]:
        """Through memchat's export of its legacy store, as an operator checks a load."""
        return {json.loads(line)["id"] for line in self._export(str(app.redis_url), "-").splitlines()}

    def _check_legacy_store(self, app: RunningApp, given: set[tuple[str, str, str]]) -> None:
        """The legacy store, as memchat's export reads it (as an operator checks a load), holds the records given:
        a replay that fails after the change is then the change's, not the load's."""
        exported = self._export(str(app.redis_url), "-")  # to its standard output, where an operator reads it
        records = [json.loads(line) for line in exported.splitlines()]
        odd = next((r for r in records if set(r) != EXPORTED_FIELDS), None)
        if odd is not None:
            raise DriverError(f"memchat's export of its legacy store wrote a record with the fields {sorted(odd)}, "
                              f"where memchat/README.md promises {sorted(EXPORTED_FIELDS)}")
        held = {(r["id"], r["user_id"], r["text"]) for r in records}
        if held != given:
            missing, other = sorted(given - held), sorted(held - given)
            raise DriverError(f"memchat's export of its legacy store holds {len(held)} records where {len(given)} were "
                              f"loaded: {len(missing)} missing (first: {missing[:2]}), {len(other)} not given "
                              f"(first: {other[:2]})")

    def migrate(self, app: RunningApp, batch_size: int, embedder: str, extra: Sequence[str] = ()) -> MigrationCounts:
        started = time.perf_counter()
        output = run_tool(self.target, "migrate", extra=extra, **self._migration(app, batch_size, embedder),
                          timeout=900)
        _check_summary(output, time.perf_counter() - started)
        # memchat/README.md, migrate: into an empty table it drops the owner index (memories_user) "and builds each
        # once after loading": a migration that ended well leaves it, or every owner's read scans the whole table.
        with psycopg.connect(str(app.pg_dsn), connect_timeout=10) as conn:
            if not scalar(conn, "SELECT count(*) FROM pg_indexes WHERE indexname = 'memories_user'"):
                raise DriverError("memchat migrate ended well and left the store without its owner index "
                                  "(memories_user)")
        return MigrationCounts.parse(output)

    def try_load_legacy_store(self, app: RunningApp, records: str, embedder: str,
                              extra: Sequence[str] = ()) -> ToolRun:
        return _check_refusal("redis-load", try_tool(self.target, "redis_load", extra=extra, stdin=records,
                                                     redis_url=str(app.redis_url), file="-", embedder=embedder,
                                                     timezone="", timeout=300))

    def try_migrate(self, app: RunningApp, batch_size: int, embedder: str, extra: Sequence[str]) -> ToolRun:
        started = time.perf_counter()
        run = _check_refusal("migrate", try_tool(self.target, "migrate", extra=extra,
                                                 **self._migration(app, batch_size, embedder), timeout=900))
        if run.returncode == 0:
            _check_summary(run.stdout, time.perf_counter() - started)
        return run

    def _migration(self, app: RunningApp, batch_size: int, embedder: str) -> dict[str, str]:
        return {"redis_url": str(app.redis_url), "pg_dsn": str(app.pg_dsn), "batch_size": str(batch_size),
                "embedder": embedder, "index": str(app.health.get("index", "hnsw")),
                "faults": app.settings.get("faults", "")}

    def import_history(self, app: RunningApp, records: Path, embedder: str,
                       user_ids: dict[str, str]) -> dict[str, str]:
        """memchat's documented bulk load: its legacy loader, then its migration, in batches of 5,000 (ids kept)."""
        with records.open(encoding="utf-8") as lines:
            self.load_legacy_store(app, lines, embedder)
        counts = self.migrate(app, 5000, str(app.health.get("embedder", embedder)))
        if counts.written + counts.already_present != counts.read:
            raise DriverError(f"memchat's bulk load wrote {counts.written} of the {counts.read} memories it read")
        return {}

    def advance_clock(self, app: RunningApp, days: float) -> None:
        """Moved on by `days`; then set to the time it answered, as a naive time and as the same time at another
        offset: memchat/README.md, POST /api/admin/clock `{"now": ISO-8601}` answers `{"now": ...}`, the time set
        (time keeps running from there: a moment later at most), a naive time taken as UTC (memchat/clock.py)."""
        path = self.target.api["admin_clock"]
        with self._admin(app) as admin:
            moved = datetime.fromisoformat(_check(admin.post(path, json={"advance_days": days}),
                                                  "moving the app's clock")["now"])
            for sent in (moved.astimezone(UTC).replace(tzinfo=None), moved.astimezone(timezone(timedelta(hours=2)))):
                answer = _check(admin.post(path, json={"now": sent.isoformat()}), "setting the app's clock")["now"]
                now = datetime.fromisoformat(answer)
                if now.tzinfo is None or not moved <= now <= moved + CLOCK_SET_WITHIN:
                    raise DriverError(f"setting memchat's clock to {sent.isoformat()!r} (the {moved.isoformat()} it "
                                      f"had just answered{', a naive time: UTC' if sent.tzinfo is None else ''}), it "
                                      f"answered {answer!r}, not that time")

    def change_embedding_model(self, app: RunningApp, model: str, restart: RestartApp) -> RunningApp:
        """The documented upgrade: stop, re-embed every memory with the new model, start on it."""
        def reembed() -> None:
            with psycopg.connect(str(app.pg_dsn), connect_timeout=10) as conn:
                other = scalar(conn, "SELECT count(*) FROM memories WHERE embedder IS DISTINCT FROM %s", (model,))
            output = run_tool(self.target, "reembed", pg_dsn=str(app.pg_dsn), embedder=model,
                              index=str(app.health.get("index", "hnsw")), faults=app.settings.get("faults", ""))
            report.attach_text("re-embedding output", output)
            # An operator reads this count: every memory the store held under another model, as memchat/README.md
            # says (reembed: "re-embed rows written under another embedder").
            if output != f"re-embedded {other} memories with {model}\n":
                raise DriverError(f"memchat reembed, on a store of {other} memories written under another model than "
                                  f"{model}, said {output.strip()[-200:]!r}, not 're-embedded {other} memories with "
                                  f"{model}'")
        return restart(app, {**app.settings, "embedder": model}, reembed)


DRIVER = MemchatDriver
