"""The driver of the reference app (memchat): its JSON API, a cookie session, an admin token handed to it at start,
and every optional capability (requested ids, a settable clock, its migration and re-embedding tools)."""

from __future__ import annotations

import json
import secrets
from pathlib import Path

import httpx
import psycopg

from harness import report
from harness.app_launcher import RunningApp, attach_app, free_port, start_process
from harness.app_tools import run_tool
from harness.drivers.base import (
    Account,
    ApiAnswer,
    AppDriver,
    Capability,
    ChatTurn,
    DriverError,
    Hit,
    Memory,
    RestartApp,
    UserSession,
)
from harness.target import Target, fill


def _check(resp: httpx.Response, what: str) -> dict:
    if resp.status_code >= 400:
        raise DriverError(f"{what}: HTTP {resp.status_code} {resp.text[:300]}")
    return resp.json()


class MemchatSession(UserSession):
    def __init__(self, target: Target, base_url: str, account: Account) -> None:
        self.target = target
        self.account = account
        self.http = httpx.Client(base_url=base_url, timeout=30)
        _check(self.http.post(target.api["login"], json={"email": account.email, "password": account.password}),
               f"signing in {account.email}")

    def cookies(self) -> list[dict]:
        """The session cookie(s), in Playwright's storage_state shape."""
        return [{"name": c.name, "value": c.value, "domain": c.domain.lstrip(".") or "127.0.0.1",
                 "path": c.path or "/", "expires": c.expires or -1, "httpOnly": True, "secure": False,
                 "sameSite": "Lax"} for c in self.http.cookies.jar]

    def conversation_ids(self) -> list[str]:
        data = _check(self.http.get(self.target.api["conversations"]), "listing conversations")
        return [c["id"] for c in data["conversations"]]

    def ask_for_conversation(self, conversation_id: str) -> ApiAnswer:
        resp = self.http.get(self.target.path_of("messages", conversation_id=conversation_id))
        return ApiAnswer(resp.status_code, resp.text)

    def turns(self, conversation_id: str) -> list[ChatTurn]:
        resp = self.http.get(self.target.path_of("messages", conversation_id=conversation_id))
        return [ChatTurn(m["role"], m["text"]) for m in _check(resp, "reading messages")["messages"]]

    def memories(self) -> list[Memory]:
        data = _check(self.http.get(self.target.api["memories"]), "listing memories")
        return [Memory(m["id"], m["text"]) for m in data["memories"]]

    def remember(self, texts: list[str], conversation_id: str | None = None) -> None:
        body = {"items": texts, **({"conversation_id": conversation_id} if conversation_id else {})}
        _check(self.http.post(self.target.api["memories"], json=body), "writing memories")

    def search(self, query: str, k: int) -> list[Hit]:
        data = _check(self.http.get(self.target.api["memory_search"], params={"q": query, "k": k}),
                      f"searching memory for {query!r}")
        return [Hit(h["id"], h["text"], float(h["score"])) for h in data["results"]]

    def seed_conversation(self, sentence: str) -> str:
        """Tell the assistant through the API, and write what it says to remember, as the front end would."""
        conversation = _check(self.http.post(self.target.api["conversations"], json={"title": ""}),
                              "creating a conversation")["conversation"]
        turn = _check(self.http.post(self.target.path_of("messages", conversation_id=conversation["id"]),
                                     json={"text": sentence}), "sending a message")
        if turn["remember"]:
            self.remember(turn["remember"], conversation["id"])
        return conversation["id"]

    def close(self) -> None:
        self.http.close()


class MemchatDriver(AppDriver):
    name = "memchat"
    capabilities = frozenset(Capability)

    def _admin(self, app: RunningApp) -> httpx.Client:
        return httpx.Client(base_url=app.base_url, timeout=30,
                            headers={"Authorization": f"Bearer {app.admin_token}"} if app.admin_token else {})

    def start(self, *, pg_dsn: str, redis_url: str, settings: dict[str, str], log_path: Path,
              data_dir: Path | None = None) -> RunningApp:
        port = free_port()
        command = fill(self.target.start_command, port=str(port), pg_dsn=pg_dsn, redis_url=redis_url)
        for name, value in settings.items():
            command += [f"--{name}", value]
        token = secrets.token_urlsafe(24)
        base_url = f"http://127.0.0.1:{port}"
        process, health = start_process(self.target.name, command, log_path=log_path,
                                        env={**self.target.env, self.target.app["admin_token_env"]: token},
                                        health_url=base_url + self.target.health_path)
        return RunningApp(base_url, health, token, pg_dsn, redis_url, dict(settings), True, log_path, process)

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
            data = _check(admin.post(self.target.api["admin_users"], json=body), f"creating user {email}")
        return Account(data["user"]["id"], data["user"]["email"], password, name)

    def delete_user(self, app: RunningApp, account: Account) -> None:
        with self._admin(app) as admin:
            resp = admin.delete(self.target.path_of("admin_user", user_id=account.id))
        if resp.status_code not in (200, 404):
            raise DriverError(f"deleting user {account.email}: HTTP {resp.status_code} {resp.text[:200]}")

    def session(self, app: RunningApp, account: Account) -> MemchatSession:
        return MemchatSession(self.target, app.base_url, account)

    def browser_state(self, app: RunningApp, session: UserSession) -> dict:
        assert isinstance(session, MemchatSession)
        return {"cookies": session.cookies(), "origins": []}

    def fault_catalogue(self) -> list[dict[str, str]]:
        return json.loads(run_tool(self.target, "list_faults", timeout=60))

    def accepts(self, app: RunningApp, browser_state: dict) -> bool:
        cookies = {c["name"]: c["value"] for c in browser_state.get("cookies", [])}
        with httpx.Client(base_url=app.base_url, timeout=30, cookies=cookies) as http:
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
            return {kind: conn.execute(sql, params).fetchone()[0] for kind, (sql, params) in queries.items()}

    def advance_clock(self, app: RunningApp, days: float) -> None:
        with self._admin(app) as admin:
            _check(admin.post(self.target.api["admin_clock"], json={"advance_days": days}), "moving the app's clock")

    def change_embedding_model(self, app: RunningApp, model: str, restart: RestartApp) -> RunningApp:
        """The documented upgrade: stop, re-embed every memory with the new model, start on it."""
        def reembed() -> None:
            output = run_tool(self.target, "reembed", pg_dsn=str(app.pg_dsn), embedder=model,
                              index=str(app.health.get("index", "hnsw")), faults=app.settings.get("faults", ""))
            report.attach_text("re-embedding output", output)
        return restart(app, {**app.settings, "embedder": model}, reembed)


DRIVER = MemchatDriver
