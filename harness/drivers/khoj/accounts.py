"""Khoj's accounts and sign-in: the account made at a first sign-in with the code Khoj issues, deleted as its settings
page does, a session signed in, a browser's state made and accepted."""

from __future__ import annotations

import secrets

import httpx

from harness.app.app_launcher import RunningApp
from harness.drivers.base import Account, DriverError, UserSession
from harness.drivers.khoj.api import HTTP_TIMEOUT, _check, session_cookie
from harness.drivers.khoj.common import KhojCommon
from harness.drivers.khoj.session import KhojSession
from harness.services.databases import scalar
from harness.services.http_clients import client


class KhojAccounts(KhojCommon):
    def _user_row(self, app: RunningApp, email: str) -> tuple[int, str] | None:
        with self._store(app) as conn:
            row = conn.execute("SELECT id, email FROM database_khojuser WHERE lower(email) = lower(%s)",
                               [email]).fetchone()
        return (int(row[0]), str(row[1])) if row else None

    def _sign_in(self, app: RunningApp, email: str) -> str:
        """The code sign-in: the address given, the code read from where Khoj keeps it, the link followed; the
        session cookie."""
        with client(base_url=app.base_url, timeout=HTTP_TIMEOUT) as http:
            _check(http.post("/auth/magic", json={"email": email}), f"asking Khoj for a sign-in code for {email}")
            with self._store(app) as conn:
                code = scalar(conn, "SELECT email_verification_code FROM database_khojuser WHERE lower(email) = "
                                    "lower(%s)", [email])
            if not code:
                raise DriverError(f"Khoj issued no sign-in code for {email}")
            resp = http.get("/auth/magic", params={"code": code, "email": email}, follow_redirects=False)
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
        with client(base_url=app.base_url, timeout=HTTP_TIMEOUT, cookies={"session": cookie}) as http:
            _check(http.patch("/api/user/name", params={"name": name.split(" ")[0]}), f"naming {email}")
        return Account(str(row[0]), row[1], "", name)

    def delete_user(self, app: RunningApp, account: Account) -> None:
        """`DELETE /api/self`, as the user's settings page does (an account already gone is fine)."""
        if self._user_row(app, account.email) is None:
            return
        with client(base_url=app.base_url, timeout=HTTP_TIMEOUT,
                    cookies={"session": self._sign_in(app, account.email)}) as http:
            _check(http.delete("/api/self"), f"deleting {account.label}'s account")

    def session(self, app: RunningApp, account: Account) -> KhojSession:
        return KhojSession(app, account, self._sign_in(app, account.email), self)

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
