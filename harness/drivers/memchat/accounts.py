"""memchat's accounts and sign-in: users made and deleted through the admin API and its users tool, imported, signed in,
a browser's state made and accepted."""

from __future__ import annotations

import re
import secrets

import httpx

from harness.app.app_launcher import (
    RunningApp,
)
from harness.app.app_tools import ToolRun, run_tool, try_tool
from harness.drivers.base import (
    Account,
    AppDriver,
    DriverError,
    NewUser,
    UserSession,
)
from harness.drivers.memchat.api import (
    admin_client,
    check,
    check_refusal,
)
from harness.drivers.memchat.session import MemchatSession
from harness.services.http_clients import KEEP_ALIVE, client, tls


class MemchatAccounts(AppDriver):
    def create_user(self, app: RunningApp, name: str, email: str, password: str,
                    user_id: str | None = None) -> Account:
        body = {"email": email, "password": password, **({"id": user_id} if user_id else {})}
        with admin_client(app) as admin:
            data = check(admin.post(self.target.api["admin_users"], json=body), f"creating user {email}", 201)
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
        return check_refusal("users add", try_tool(self.target, "users_add", pg_dsn=str(app.pg_dsn), email=email,
                                                    password=password, timeout=60))

    def try_delete_user_by_tool(self, app: RunningApp, email: str) -> ToolRun:
        return check_refusal("users delete", try_tool(self.target, "users_delete", pg_dsn=str(app.pg_dsn),
                                                       email=email, timeout=60))

    def delete_user(self, app: RunningApp, account: Account) -> None:
        with admin_client(app) as admin:
            resp = admin.delete(self.target.path_of("admin_user", user_id=account.id))
        if resp.status_code not in (200, 404):
            raise DriverError(f"deleting user {account.email}: HTTP {resp.status_code} {resp.text[:200]}")
        if resp.status_code == 200 and resp.json() != {"deleted": True}:  # its admin API's promise, to its own tools
            raise DriverError(f"deleting user {account.email}: the app answered 200 with {resp.text[:200]}, not "
                              '{"deleted": true}')

    def session(self, app: RunningApp, account: Account) -> MemchatSession:
        return MemchatSession(self.target, app.base_url, account)

    def try_sign_in(self, app: RunningApp, email: str, password: str, from_address: str | None = None) -> str:
        transport = (httpx.HTTPTransport(verify=tls(), limits=KEEP_ALIVE, local_address=from_address)
                     if from_address else None)
        with client(base_url=app.base_url, timeout=30, transport=transport) as http:
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

    def made_up_credentials(self, app: RunningApp, like: dict) -> dict:
        return {**like, "cookies": [{**c, "value": secrets.token_urlsafe(32)} for c in like.get("cookies", [])]}

    def accepts(self, app: RunningApp, browser_state: dict) -> bool:
        cookies = {c["name"]: c["value"] for c in browser_state.get("cookies", [])}
        with client(base_url=app.base_url, timeout=30, cookies=cookies) as http:
            return http.get(self.target.api["me"]).status_code == 200

    def import_users(self, app: RunningApp, users: list[NewUser]) -> dict[str, str]:
        with admin_client(app) as admin:
            for start in range(0, len(users), 50_000):
                body = {"users": [{"id": u.id, "email": u.email, **({"password": u.password} if u.password else {})}
                                  for u in users[start:start + 50_000]]}
                check(admin.post(self.target.api["admin_users_import"], json=body, timeout=300),
                       f"importing {len(body['users'])} users", 201)
        return {}
