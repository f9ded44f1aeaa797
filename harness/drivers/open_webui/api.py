"""What Open WebUI's parts of the driver share: the JSON its API answers, its memory search, the suite's own admin
session (signed in again when the app ends it), what settle knows of each user's reviews, and the users' tokens."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

import httpx

from harness.app.app_launcher import RunningApp
from harness.app.target import Target
from harness.drivers.base import AppDriver, DriverError, Hit
from harness.services.http_clients import KEEP_ALIVE, tls

ADMIN_FILE = "memtest-admin.json"  # beside the app's data: the admin's credentials and the secret key
# a setting of the upgraded app under the fault upgrade-leaves-vector-store-behind (PostgreSQL: no VECTOR_DB)
LEFT_BEHIND = "vector_store_left_behind"


def check(resp: httpx.Response, what: str) -> Any:  # the JSON the app answered, of the shape the caller expects
    if resp.status_code >= 400:
        raise DriverError(f"{what}: HTTP {resp.status_code} {resp.text[:300]}")
    return resp.json()


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
    return hits_of(check(resp, f"searching memory for {query[:60]!r}"))


def sign_in_admin(app: RunningApp, admin: dict[str, str]) -> str:
    resp = httpx.post(app.base_url + "/api/v1/auths/signin", verify=tls(), timeout=30,
                      json={"email": admin["email"], "password": admin["password"]})
    return str(check(resp, "signing the admin in again after a restart")["token"])


class AdminClient(httpx.Client):
    """The suite's own admin session. When the app ends it (a restart with a new secret, an expired token), the
    admin signs in again and the request is sent once more: the suite's session never decides a verdict."""

    def __init__(self, app: RunningApp) -> None:
        super().__init__(verify=tls(), limits=KEEP_ALIVE, base_url=app.base_url, timeout=60,
                         headers={"Authorization": f"Bearer {app.admin_token}"})
        self.app = app

    def send(self, request: httpx.Request, **kwargs) -> httpx.Response:  # noqa: ANN003 - httpx's own options
        response = super().send(request, **kwargs)
        if response.status_code != 401 or self.app.data_dir is None:
            return response
        admin = json.loads((self.app.data_dir / ADMIN_FILE).read_text(encoding="utf-8"))
        self.app.admin_token = sign_in_admin(self.app, admin)
        request.headers["Authorization"] = self.headers["Authorization"] = f"Bearer {self.app.admin_token}"
        return super().send(request, **kwargs)


def admin_client(app: RunningApp) -> httpx.Client:
    return AdminClient(app)


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


class OpenWebUIParts(AppDriver):
    """What each part of the driver reads: the users' tokens and what settle knows of their reviews, by app, and
    whether the target runs Open WebUI on PostgreSQL."""

    def __init__(self, target: Target) -> None:
        super().__init__(target)
        self._tokens: dict[tuple[str, str], str] = {}  # (app, user id) -> the user's token
        self._reviews: dict[tuple[str, str], Reviews] = {}  # (app, user id) -> what settle knows of their reviews

    @property
    def postgresql(self) -> bool:
        return self.target.app.get("database") == "postgresql"
