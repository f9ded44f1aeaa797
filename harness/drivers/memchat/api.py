"""What memchat/README.md promises of memchat's API and tools, as the driver's parts check it: the statuses its calls
answer, its tools' summary lines and refusals, and the admin client the parts share."""

from __future__ import annotations

import re
from datetime import timedelta

import httpx

from harness.app.app_launcher import (
    RunningApp,
)
from harness.app.app_tools import ToolRun
from harness.drivers.base import (
    DriverError,
)
from harness.services.http_clients import client


def check(resp: httpx.Response, what: str, promised: int = 200) -> dict:
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
# memchat/README.md, migrate and reembed: an HNSW graph that outgrew its build memory is told on the error stream, one
# line each, and the run still ends well.
OUTGREW = "memchat: warning: the HNSW graph "
REFUSED = 2  # memchat/cli.py, CliError: a tool refused in one line "memchat: ..." exits 2, as argparse's own refusals
# Stores nobody answers at: a socket in a folder that does not exist.
NOWHERE_PG = "postgresql://memtest@/none?host=/nonexistent/memtest"
NOWHERE_REDIS = "unix:///nonexistent/memtest/redis.sock"


def check_summary(output: str, took_s: float) -> None:
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


def check_refusal(name: str, run: ToolRun) -> ToolRun:
    """A tool run as it ended, once it ended as memchat's tools end: well (0), or refused with exit status 2."""
    if run.returncode not in (0, REFUSED):
        said = [line for line in run.stderr.splitlines() if line.strip()]
        raise DriverError(f"memchat {name} ended with exit status {run.returncode}, where a refusal ends with "
                          f"{REFUSED}; it said {said[-3:]}")
    return run

def admin_client(app: RunningApp) -> httpx.Client:
    """A client of memchat's admin API, with the token handed to the app at its start."""
    return client(base_url=app.base_url, timeout=30,
                  headers={"Authorization": f"Bearer {app.admin_token}"} if app.admin_token else {})

