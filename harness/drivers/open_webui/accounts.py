"""Open WebUI's accounts and sign-in: users made, imported and deleted through the admin API (each reply's token kept
as the user's session), a browser's state made of that token, made up, and accepted or not."""

from __future__ import annotations

import secrets
from concurrent.futures import ThreadPoolExecutor

import httpx

from harness.app.app_launcher import RunningApp
from harness.drivers.base import Account, DriverError, NewUser, UserSession
from harness.drivers.open_webui.api import OpenWebUIParts, Reviews, admin_client, check
from harness.drivers.open_webui.session import OpenWebUISession
from harness.services.http_clients import tls
from model_server.client import ModelServer


def tokens_in(browser_state: dict, origin: str) -> list[str]:
    """The tokens a browser holds for the app: in local storage, where the front end reads it, and the cookie."""
    tokens = [item["value"] for entry in browser_state.get("origins", []) if entry.get("origin") == origin
              for item in entry.get("localStorage", []) if item.get("name") == "token"]
    return tokens + [c["value"] for c in browser_state.get("cookies", []) if c.get("name") == "token"]


def sign_in(app: RunningApp, account: Account) -> str:
    resp = httpx.post(app.base_url + "/api/v1/auths/signin", verify=tls(), timeout=30,
                      json={"email": account.email, "password": account.password})
    return str(check(resp, f"signing in {account.email}")["token"])


class OpenWebUIAccounts(OpenWebUIParts):
    def create_user(self, app: RunningApp, name: str, email: str, password: str,
                    user_id: str | None = None) -> Account:
        with admin_client(app) as admin:
            data = check(admin.post("/api/v1/auths/add", json={"name": name, "email": email, "password": password,
                                                                "role": "user"}), f"creating user {email}")
        account = Account(str(data["id"]), str(data["email"]), password, name)
        # The reply carries the user's token: reusing it keeps clear of the sign-in rate limit (15 per 3 minutes).
        self._tokens[(app.base_url, account.id)] = str(data["token"])
        # Plain text in and out: by default the message editor turns quotes into curly ones and user messages are
        # shown as markdown, so what is stored and shown would differ from what was typed.
        resp = httpx.post(app.base_url + "/api/v1/users/user/settings/update", verify=tls(), timeout=30,
                          headers={"Authorization": f"Bearer {data['token']}"},
                          json={"ui": {"richTextInput": False, "renderMarkdownInUserMessages": False}})
        check(resp, f"setting {email}'s message input to plain text")
        return account

    def import_users(self, app: RunningApp, users: list[NewUser]) -> dict[str, str]:
        """Through the admin API, a few at a time (each costs a password hash); Open WebUI gives each user an id of
        its own, returned by the requested one. Each reply's token is the user's session."""
        def add(user: NewUser) -> tuple[str, str]:
            with admin_client(app) as admin:
                data = check(admin.post("/api/v1/auths/add", json={
                    "name": user.name, "email": user.email, "password": user.password or secrets.token_urlsafe(18),
                    "role": "user"}), f"importing user {user.email}")
            self._tokens[(app.base_url, str(data["id"]))] = str(data["token"])
            return user.id, str(data["id"])

        with ThreadPoolExecutor(4) as pool:
            return dict(pool.map(add, users))

    def delete_user(self, app: RunningApp, account: Account) -> None:
        with admin_client(app) as admin:
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
