"""Seeding the app's legacy Redis memory store with historical memories, through the app's own loading tool."""

from __future__ import annotations

import json
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

import redis

from harness.app_tools import run_tool
from harness.target import Target


@dataclass(frozen=True)
class LegacyMemory:
    id: str
    user_id: str
    text: str
    created_at: str


@dataclass(frozen=True)
class MigrationCounts:
    read: int
    written: int
    skipped: int
    already_present: int
    output: str

    @classmethod
    def parse(cls, output: str) -> MigrationCounts:
        """From the tool's summary line: "read N, written N, skipped N (N already present, ...)"."""
        m = re.search(r"read (\d+), written (\d+), skipped (\d+) \((\d+) already present", output)
        if not m:
            raise AssertionError(f"the migration printed no counts; it said: {output.strip()[-300:]!r}")
        return cls(*(int(g) for g in m.groups()), output=output)


def empty_legacy_store(redis_url: str) -> None:
    """The worker's Redis db belongs to the running scenario (a worker runs one scenario at a time)."""
    client = redis.Redis.from_url(redis_url, socket_connect_timeout=5)
    try:
        client.flushdb()
    finally:
        client.close()


def load_legacy_store(target: Target, redis_url: str, memories: list[LegacyMemory], embedder: str) -> None:
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False, encoding="utf-8") as f:
        for m in memories:
            f.write(json.dumps({"id": m.id, "user_id": m.user_id, "text": m.text, "created_at": m.created_at,
                                "embedder": embedder}) + "\n")
        path = Path(f.name)
    try:
        run_tool(target, "redis_load", redis_url=redis_url, file=str(path), embedder=embedder)
    finally:
        path.unlink(missing_ok=True)
