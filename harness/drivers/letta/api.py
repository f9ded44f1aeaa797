"""Letta's API as the driver's parts use it: its pages, limits and timeouts, the database URI that survives Letta's
rebuild of it, and the readings of its answers the parts share."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import httpx
import numpy as np
from psycopg.conninfo import conninfo_to_dict

from harness.drivers.base import DriverError
from model_server.agent import is_app_event

EMBEDDER = "text-embedding-3-small"  # the model server's embedding model under OpenAI's name, 1536 dimensions
STORED_DIMS = 4096  # Letta pads every vector to its column's size (letta.constants.MAX_EMBEDDING_DIM)
ARCHIVAL_TOOLS = ("archival_memory_insert", "archival_memory_search")
SEARCH_TOOL = "archival_memory_search"
MAX_STEPS = 200  # one tool call per fact: a message of 60 facts takes 61 steps (Letta's default is 50)
PAGE = 100  # Letta's default page of messages and memories
CONVERSATION_PAGE = 50  # Letta's default page of conversations
LISTING = 1000  # one big page, where a read only has to show whether another user's data is in it
SCHEMA_TIMEOUT = 300.0
TEMPLATE_LOCK = 0x6C657474  # "lett": one worker builds the template of Letta's tables while the others wait
SEND_TIMEOUT = 900.0  # a turn of 60 facts is 61 model calls and 60 embeddings; minutes on a loaded machine
HTTP_TIMEOUT = 120.0
READERS = 8
BROAD_QUERY = "my"  # Letta's vector search has no threshold: any query returns the nearest memories, all of them
SHARED_ORGANIZATION = "memtest-everyone"  # under the fault one-organization


def letta_pg_uri(dsn: str) -> str:
    """The DSN in a form that survives Letta's rebuild of LETTA_PG_URI: user and password in the authority, a
    socket folder as the `host` query parameter behind a placeholder host (see the package's docstring)."""
    parts = conninfo_to_dict(dsn)
    user = quote(str(parts.get("user") or "postgres"), safe="")
    password = str(parts.get("password") or "")
    auth = user + (f":{quote(password, safe='')}" if password else "")
    host, port = str(parts.get("host") or "localhost"), parts.get("port")
    database = quote(str(parts.get("dbname") or "postgres"), safe="")
    at_port = f":{port}" if port else ""
    if host.startswith("/"):
        return f"postgresql://{auth}@localhost{at_port}/{database}?host={quote(host, safe='/')}"
    return f"postgresql://{auth}@{f'[{host}]' if ':' in host else host}{at_port}/{database}"


def _done(resp: httpx.Response, what: str) -> None:
    """A request Letta must have served (its body, if any, not read: a deletion answers null, a message or nothing)."""
    if resp.status_code >= 400:
        raise DriverError(f"{what}: HTTP {resp.status_code} {resp.text[:300]}")


def _check(resp: httpx.Response, what: str) -> Any:
    _done(resp, what)
    return resp.json()


def _content(message: dict) -> str:
    """A Letta message's text: a string, or its text parts."""
    content = message.get("content")
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text")
    return content if isinstance(content, str) else ""


def _is_turn(message: dict) -> bool:
    """A user's or the assistant's turn, not Letta's own heartbeat, login or alert (stored as user messages)."""
    if message.get("message_type") == "user_message":
        return not is_app_event({"content": _content(message)})
    return message.get("message_type") == "assistant_message"


def _floats(vector: Any) -> np.ndarray:
    """A pgvector value as float32 (pgvector's psycopg loader gives a Vector, older ones an array)."""
    return np.asarray(vector.to_numpy() if hasattr(vector, "to_numpy") else vector, dtype="<f4")
