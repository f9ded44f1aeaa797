"""What the parts of Khoj's driver share: the models it is run with, its timeouts, what its template database is made
of, the ways a team could ship it wrongly; an answer's JSON, a database as Khoj's settings, a session's cookie."""

from __future__ import annotations

from typing import Any

import httpx
from psycopg.conninfo import conninfo_to_dict

from harness.app.app_launcher import ROOT
from harness.drivers.base import DriverError

EMBEDDER = "text-embedding-3-small"  # the search model's bi-encoder: the model server's, under OpenAI's name
CHAT_MODEL_NAME = "gpt-4o-mini"  # the chat model row tools/khoj_seed.py makes: the model server, under OpenAI's name
HTTP_TIMEOUT = 120.0
SEND_TIMEOUT = 300.0
PREPARE_TIMEOUT = 600.0  # the migrations, the offline rows and the static files, once per database server
SETTLE_SECONDS = 60.0
TEMPLATE_LOCK = 0x6B686F6A  # "khoj": one worker builds the template while the others wait for it
SEED = ROOT / "tools" / "khoj_seed.py"
PINS = ROOT / "targets" / "khoj.pins.txt"

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
