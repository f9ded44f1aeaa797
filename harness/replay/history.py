"""A snapshot read once for a replay, kept compact, and what the replay writes and creates from it.

A replay maps the snapshot's symbolic owners and ids to the run's own (`<tag>-<owner>`, `<tag>-<id>`), so that
replays of one snapshot never share a row, and streams the memories into the input file of the app's loading tool.
"""

from __future__ import annotations

import base64
import json
import secrets
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from harness.app.app_handle import AppHandle
from harness.drivers.base import Account, NewUser
from harness.replay.vectors import StoredVectors
from harness.snapshots import GoldenProbe, Header, HistoricalMemory, read_history


@dataclass
class ReplayHistory:
    """Every memory's id, owner, text and flags (and vector, when the snapshot has one), and every probe."""

    tag: str
    header: Header
    ids: list[str] = field(default_factory=list)
    owners: list[str] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    embeddable: list[bool] = field(default_factory=list)
    expires_at: list[str | None] = field(default_factory=list)
    created_at: list[str] = field(default_factory=list)  # the UTC time each memory was told: what the replay expects
    legacy_created_at: list[str | None] = field(default_factory=list)  # as the legacy store wrote it, where otherwise
    conversations: list[str | None] = field(default_factory=list)  # the snapshot's own ids (None: no conversation)
    # By header.legacy_embedder, when the snapshot has it; in a file, not in memory (harness/replay/vectors.py)
    vectors: StoredVectors = field(default_factory=StoredVectors)
    probes: list[GoldenProbe] = field(default_factory=list)
    # The app's own id of each memory whose id it did not keep when imported (by the run's id), and the reverse
    app_ids: dict[str, str] = field(default_factory=dict)
    _run_ids: dict[str, str] = field(default_factory=dict)
    app_user_ids: dict[str, str] = field(default_factory=dict)  # likewise for owners, by the run's user id
    # The model of each memory's vector as the legacy store's loading tool is given it, counted (given, or the
    # loader's own where it embeds the text): a migration with another model embeds those again; "": a text left to
    # the loader with nothing to embed (whether it is embedded again is the app's choice); memories given without a
    # vector are not counted
    legacy_models: Counter[str] = field(default_factory=Counter)

    def memory_id(self, snapshot_id: str) -> str:
        """The memory's id in the app."""
        run_id = f"{self.tag}-{snapshot_id}"
        return self.app_ids.get(run_id, run_id)

    def keep_app_ids(self, app_ids: dict[str, str]) -> None:
        self.app_ids = dict(app_ids)
        self._run_ids = {app_id: run_id for run_id, app_id in app_ids.items()}

    def user_id(self, owner: str) -> str:
        """The owner's id in the app."""
        run_id = self.run_user_id(owner)
        return self.app_user_ids.get(run_id, run_id)

    def run_user_id(self, owner: str) -> str:
        """The owner's id as the run asks the app for it (and writes it in the records it loads)."""
        return f"{self.tag}-{owner}"

    def conversation_id(self, snapshot_conversation: str | None) -> str | None:
        return f"{self.tag}-{snapshot_conversation}" if snapshot_conversation else None

    def snapshot_id(self, app_id: str) -> str:
        return self._run_ids.get(app_id, app_id).removeprefix(f"{self.tag}-")

    @property
    def size(self) -> int:
        return len(self.ids)

    def embedded_again_by(self, model: str) -> int | None:
        """How many memories a migration with `model` must embed again (read from the legacy store with a vector of
        another model); None where a text the loader had nothing to embed leaves it the app's to say."""
        if self.legacy_models[""]:
            return None
        return sum(n for made_by, n in self.legacy_models.items() if made_by != model)


def _legacy_line(history: ReplayHistory, m: HistoricalMemory, legacy_times: bool) -> str:
    """The memory as the loading tool takes it; with `legacy_times`, its creation time as the legacy store wrote
    it."""
    created = m.legacy_created_at if legacy_times and m.legacy_created_at else m.created_at
    line = {"id": f"{history.tag}-{m.id}", "user_id": history.run_user_id(m.owner),
            "conversation_id": history.conversation_id(m.conversation), "text": m.text,
            "created_at": created, "expires_at": m.expires_at}
    if m.embedder is not None and (m.embedding is not None or not m.embeddable):
        line["embedder"] = m.embedder
        line["embedding_f32"] = base64.b64encode(m.embedding).decode() if m.embedding is not None else None
        if m.embedding is not None:
            history.legacy_models[m.embedder] += 1
    else:  # the loader embeds it with the history's legacy model
        history.legacy_models[history.header.legacy_embedder if m.embeddable else ""] += 1
    return json.dumps(line, ensure_ascii=False) + "\n"


def stream_for_replay(snapshot: str | Path, tag: str, legacy_times: bool = False,
                      ) -> tuple[ReplayHistory, Iterator[str]]:
    """One streamed pass: the history (its header read now) and the loading tool's JSON Lines input, line by line.
    Reading the lines validates the snapshot and fills the history, which is whole once they are all read.
    `legacy_times`: the creation times as the legacy store wrote them (for the legacy store's loading tool; the
    app's own import takes the UTC times)."""
    records = read_history(snapshot)
    header = next(records)
    assert isinstance(header, Header)
    history = ReplayHistory(tag, header)

    def lines() -> Iterator[str]:
        for record in records:
            if isinstance(record, HistoricalMemory):
                yield _legacy_line(history, record, legacy_times)
                history.ids.append(record.id)
                history.owners.append(record.owner)
                history.texts.append(record.text)
                history.embeddable.append(record.embeddable)
                history.expires_at.append(record.expires_at)
                history.created_at.append(record.created_at)
                history.legacy_created_at.append(record.legacy_created_at if legacy_times else None)
                history.conversations.append(record.conversation)
                history.vectors.append(record.embedding if record.embedder == header.legacy_embedder else None)
            elif isinstance(record, GoldenProbe):
                history.probes.append(record)

    return history, lines()


def read_for_replay(snapshot: str | Path, tag: str, legacy_input: Path) -> ReplayHistory:
    """One streamed pass: validates the snapshot, writes the loading tool's JSON Lines input, keeps the rest."""
    history, lines = stream_for_replay(snapshot, tag)
    with legacy_input.open("w", encoding="utf-8") as out:
        out.writelines(lines)
    return history


def import_owners(app: AppHandle, history: ReplayHistory) -> dict[str, Account]:
    """Every owner as a user of the app, in bulk, the app's own ids kept where it gave others; only the owners some
    probe asks for can sign in (their accounts are returned), since signing in is what costs (a password hash
    each)."""
    asked = {p.owner for p in history.probes}
    users, passwords = [], {}
    for n, owner in enumerate(sorted(set(history.owners))):
        password = secrets.token_urlsafe(12) if owner in asked else None
        users.append(NewUser(history.run_user_id(owner), f"{history.tag}-o{n}@replay.test", owner, password))
        if password is not None:
            passwords[owner] = password
    history.app_user_ids = app.import_users(users)
    return {u.name: Account(history.user_id(u.name), u.email, passwords[u.name], u.name)
            for u in users if u.name in passwords}
