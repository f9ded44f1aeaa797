"""The app's HTTP API as the suite uses it: seeding users, reading what the app stored, asking its memory."""

from __future__ import annotations

from dataclasses import dataclass

import httpx

from harness.target import Target


class ApiError(AssertionError):
    pass


@dataclass(frozen=True)
class Account:
    id: str
    email: str
    password: str


def _check(resp: httpx.Response, what: str) -> dict:
    if resp.status_code >= 400:
        raise ApiError(f"{what}: HTTP {resp.status_code} {resp.text[:300]}")
    return resp.json()


class AdminApi:
    """Endpoints guarded by the admin token: creating and deleting users, moving the app's clock."""

    def __init__(self, target: Target, base_url: str, token: str | None) -> None:
        self.target = target
        self.http = httpx.Client(base_url=base_url, timeout=30,
                                 headers={"Authorization": f"Bearer {token}"} if token else {})

    def create_user(self, email: str, password: str, user_id: str | None = None) -> Account:
        body = {"email": email, "password": password, **({"id": user_id} if user_id else {})}
        data = _check(self.http.post(self.target.api["admin_users"], json=body), f"creating user {email}")
        return Account(data["user"]["id"], data["user"]["email"], password)

    def delete_user(self, user_id: str) -> None:
        resp = self.http.delete(self.target.api["admin_user"].format(user_id=user_id))
        if resp.status_code not in (200, 404):
            raise ApiError(f"deleting user {user_id}: HTTP {resp.status_code} {resp.text[:200]}")

    def set_clock(self, *, advance_days: float) -> str:
        data = _check(self.http.post(self.target.api["admin_clock"], json={"advance_days": advance_days}),
                      "moving the app's clock")
        return data["now"]

    def close(self) -> None:
        self.http.close()


class UserApi:
    """One logged-in user's view of the API (its own cookie jar)."""

    def __init__(self, target: Target, base_url: str, account: Account) -> None:
        self.target = target
        self.account = account
        self.http = httpx.Client(base_url=base_url, timeout=30)
        _check(self.http.post(target.api["login"], json={"email": account.email, "password": account.password}),
               f"logging in {account.email}")

    def cookies(self) -> list[dict]:
        """The session cookie(s), in Playwright's storage_state shape."""
        return [{"name": c.name, "value": c.value, "domain": c.domain.lstrip(".") or "127.0.0.1",
                 "path": c.path or "/", "expires": c.expires or -1, "httpOnly": True, "secure": False,
                 "sameSite": "Lax"} for c in self.http.cookies.jar]

    def conversations(self) -> list[dict]:
        return _check(self.http.get(self.target.api["conversations"]), "listing conversations")["conversations"]

    def create_conversation(self, title: str = "") -> dict:
        return _check(self.http.post(self.target.api["conversations"], json={"title": title}),
                      "creating a conversation")["conversation"]

    def messages_response(self, conversation_id: str) -> httpx.Response:
        return self.http.get(self.target.api["messages"].format(conversation_id=conversation_id))

    def messages(self, conversation_id: str) -> list[dict]:
        return _check(self.messages_response(conversation_id), "reading messages")["messages"]

    def say(self, conversation_id: str, text: str) -> dict:
        return _check(self.http.post(self.target.api["messages"].format(conversation_id=conversation_id),
                                     json={"text": text}), "sending a message")

    def memories(self) -> list[dict]:
        return _check(self.http.get(self.target.api["memories"]), "listing memories")["memories"]

    def remember(self, texts: list[str], conversation_id: str | None = None) -> list[str]:
        body = {"items": texts, **({"conversation_id": conversation_id} if conversation_id else {})}
        return _check(self.http.post(self.target.api["memories"], json=body), "writing memories")["stored"]

    def search(self, query: str, k: int = 5) -> list[dict]:
        return _check(self.http.get(self.target.api["memory_search"], params={"q": query, "k": k}),
                      f"searching memory for {query!r}")["results"]

    def close(self) -> None:
        self.http.close()
