"""How memories come to be in Open WebUI, as the driver waits for them or writes them: by its background memory
review after each turn sent with memory on (`settle` waits for the reviews, then for what they chose), or as a
history's rows of its `memory` table, embedded by the admin's re-index."""

from __future__ import annotations

import json
from pathlib import Path

from harness.app.app_launcher import RunningApp
from harness.drivers.base import DriverError, UserSession
from harness.drivers.open_webui.api import OpenWebUIParts, Reviews, admin_client, check
from harness.drivers.open_webui.store import MemoryRow, epoch, insert_memories
from harness.vocabulary.polling import wait_until
from model_server.client import ModelServer

SETTLE_SECONDS = 10.0  # a review lands 0.1-0.5 s after the reply here


class OpenWebUIMemoryWrites(OpenWebUIParts):
    def settle(self, app: RunningApp, session: UserSession, turns_sent: int) -> None:
        """Wait until the model server has answered a memory review for each of the user's turns sent with memory
        on, then until the app holds what the newest review told it to store (once: what the user took back since is
        not waited for again)."""
        model = ModelServer.of(app)
        if model is None or turns_sent == 0:
            return
        ledger = self._reviews.setdefault((app.base_url, session.account.id), Reviews())
        if ledger.model_url != model.base_url:  # the app restarted since the last settle, with a new model server
            if ledger.model_url:  # every turn the last settle saw reviewed was reviewed there
                ledger.reviewed_before = ledger.turns_seen - ledger.unreviewed
                ledger.reviews_seen = 0
            ledger.model_url = model.base_url
        if not ledger.memory_on:  # the turns since the last settle went unreviewed (the actor settles before a switch)
            ledger.unreviewed += max(0, turns_sent - ledger.turns_seen)
        ledger.turns_seen = turns_sent
        expected = turns_sent - ledger.unreviewed - ledger.reviewed_before
        if expected <= 0:
            return
        who = session.account.label
        reviews = wait_until(lambda: model.reviews(session.account.id), lambda r: len(r) >= expected,
                             timeout=SETTLE_SECONDS, what=f"Open WebUI asking for a memory review of each of {who}'s "
                                                          f"{expected} turns sent with memory on")
        if len(reviews) == ledger.reviews_seen:
            return
        chosen = set(reviews[-1]["memories_after"])  # what the last review left the user's memories holding
        wait_until(lambda: {m.text for m in session.memories()}, lambda held: chosen <= held,
                   timeout=SETTLE_SECONDS, what=f"Open WebUI storing the memories its review chose for {who}")
        ledger.reviews_seen = len(reviews)

    def import_history(self, app: RunningApp, records: Path, embedder: str,
                       user_ids: dict[str, str]) -> dict[str, str]:
        """Rows of the `memory` table with the history's ids and creation times, then the admin's re-index, which
        embeds every memory with the app's model (the history's own vectors are not Open WebUI's to take)."""
        rows = []
        with records.open(encoding="utf-8") as lines:
            for line in lines:
                record = json.loads(line)
                owner = user_ids.get(record["user_id"], record["user_id"])
                rows.append(MemoryRow(record["id"], owner, record["text"], epoch(record["created_at"])))
        insert_memories(app, self.postgresql, rows)
        with admin_client(app) as admin:
            done = check(admin.post("/api/v1/memories/reindex", timeout=600), "re-indexing the imported memories")
        if done.get("total_memories") != len(rows):
            raise DriverError(f"Open WebUI re-indexed {done.get('total_memories')} memories of the {len(rows)} "
                              "imported")
        return {}
