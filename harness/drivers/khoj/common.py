"""What every part of Khoj's driver reaches, and its sessions lean on: the app's store, a memory written there as Khoj's
own `save_memory` writes it, and each app's log of turns saved (their memories written), read as it grows."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import numpy as np
import psycopg
from pgvector.psycopg import register_vector

from harness.app.app_launcher import RunningApp
from harness.app.target import Target
from harness.drivers.base import Account, AppDriver, DriverError
from harness.drivers.khoj.api import EMBEDDER, SETTLE_SECONDS
from harness.drivers.khoj.session import SavedTurn, SavedTurnLog
from harness.services.databases import scalar
from harness.vocabulary.polling import wait_until
from model_server import embeddings


class KhojCommon(AppDriver):
    def __init__(self, target: Target) -> None:
        super().__init__(target)
        self._logs: dict[Path, SavedTurnLog] = {}  # each app's log, read as it grows
        self._logs_lock = threading.Lock()

    def _store(self, app: RunningApp) -> psycopg.Connection:
        if not app.pg_dsn:
            raise DriverError("the khoj driver needs the app's database (--pg-dsn): it reads the sign-in codes there")
        return psycopg.connect(app.pg_dsn, connect_timeout=10, autocommit=True)

    def write_memories(self, app: RunningApp, account: Account, texts: list[str]) -> None:
        """The rows Khoj's `save_memory` writes: the text, its vector from the search model, the default search
        model, no agent."""
        with self._store(app) as conn:
            register_vector(conn)
            model = scalar(conn, "SELECT id FROM database_searchmodelconfig WHERE name = 'default'")
            for text in texts:
                vector = np.asarray(embeddings.embed(text, EMBEDDER), dtype=np.float32)
                conn.execute("INSERT INTO database_usermemory (created_at, updated_at, user_id, embeddings, raw, "
                             "search_model_id) VALUES (clock_timestamp(), clock_timestamp(), %s, %s, %s, %s)",
                             [int(account.id), vector, text, model])

    def saved_turns(self, app: RunningApp, which: Callable[[SavedTurn], bool]) -> int:
        """How many turns Khoj's log says it saved (their memories written) that `which` picks."""
        if app.log_path is None:
            return 0
        path = app.log_path.with_suffix(".khoj.log")
        with self._logs_lock:
            log = self._logs.setdefault(path, SavedTurnLog(path))
        return sum(1 for turn in log.read() if which(turn))

    def wait_saved(self, app: RunningApp, which: Callable[[SavedTurn], bool], count: int, what: str) -> None:
        """Until Khoj's log holds `count` lines of turns saved that `which` picks (an app the suite did not start
        keeps its log elsewhere: nothing to wait on)."""
        if app.log_path is not None:
            wait_until(lambda: self.saved_turns(app, which), lambda n: n >= count, timeout=SETTLE_SECONDS,
                       interval=0.1, what=what)
