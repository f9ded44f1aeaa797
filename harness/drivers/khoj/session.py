"""A user's session of Khoj through its API, with the session cookie its code sign-in sets: chat, memories and
conversations, each turn returned once Khoj's log says it is saved (the saved-turn log read as it grows)."""

from __future__ import annotations

import codecs
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.app.app_launcher import RunningApp
from harness.drivers.base import Account, ApiAnswer, DriverError, Hit, Memory, Reply, UserSession
from harness.drivers.khoj.api import HTTP_TIMEOUT, SEND_TIMEOUT, _check
from harness.services.http_clients import client
from harness.vocabulary.turn import Turn

if TYPE_CHECKING:
    from harness.drivers.khoj.common import KhojCommon

TAIL_KEPT = 4096  # more than the start of a line of a turn saved, up to its user
# Khoj's own line once a turn is saved and its memories updated (processor/conversation/utils.py,
# save_to_conversation_log): "Saved Conversation Turn (<conversation>):\nYou (<username>): ..."
SAVED_TURN = re.compile(r"Saved Conversation Turn \((?P<conversation>[^)]*)\):\nYou \((?P<user>[^)]*)\):")


@dataclass(frozen=True)
class SavedTurn:
    conversation: str
    user: str  # the username Khoj logs: the address, lower case


class SavedTurnLog:
    """Khoj's lines of turns saved, read from its log as it grows: each read decodes only what was written since the
    last (a run's log reaches megabytes, and a turn's wait reads it ten times a second)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._offset = 0
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")  # a character split across reads
        self._tail = ""  # what follows the last line read: the start of one not written whole yet
        self._turns: list[SavedTurn] = []
        self._lock = threading.Lock()

    def read(self) -> list[SavedTurn]:
        with self._lock:
            if self.path.exists():
                with self.path.open("rb") as log:
                    log.seek(self._offset)
                    data = log.read()
                self._offset += len(data)
                text, end = self._tail + self._decoder.decode(data), 0
                for match in SAVED_TURN.finditer(text):
                    self._turns.append(SavedTurn(match["conversation"], match["user"].lower()))
                    end = match.end()
                self._tail = text[end:][-TAIL_KEPT:]
            return list(self._turns)


class KhojSession(UserSession):
    """One user signed in with the code Khoj issued: every request carries the session cookie."""

    def __init__(self, app: RunningApp, account: Account, cookie: str, driver: KhojCommon) -> None:
        self.account = account
        self._app = app
        self._driver = driver
        self.http = client(base_url=app.base_url, timeout=HTTP_TIMEOUT, cookies={"session": cookie})

    # -- reads -----------------------------------------------------------------------------------------------------
    def conversation_ids(self) -> list[str]:
        """As Khoj's conversation list gives them: the most recently updated first."""
        return list(self.conversation_titles())

    def conversation_titles(self) -> dict[str, str]:
        listed = _check(self.http.get("/api/chat/sessions"), f"listing {self.account.label}'s conversations")
        return {str(c["conversation_id"]): str(c.get("slug") or "") for c in listed}

    def turns(self, conversation_id: str) -> list[Turn]:
        data = _check(self.http.get("/api/chat/history", params={"conversation_id": conversation_id}),
                      f"reading {self.account.label}'s conversation {conversation_id}")
        chat = (data.get("response") or {}).get("chat") or []
        return [Turn("user" if m.get("by") == "you" else "assistant", str(m.get("message") or "")) for m in chat
                if m.get("by") in ("you", "khoj")]

    def ask_for_conversation(self, conversation_id: str) -> ApiAnswer:
        resp = self.http.get("/api/chat/history", params={"conversation_id": conversation_id})
        return ApiAnswer(resp.status_code, resp.text)

    def memories(self) -> list[Memory]:
        """`GET /api/memories` (unordered, unpaged), oldest first by creation time and then id."""
        listed = _check(self.http.get("/api/memories"), f"listing {self.account.label}'s memories")
        listed.sort(key=lambda m: (str(m.get("created_at") or ""), int(m["id"])))
        return [Memory(str(m["id"]), str(m.get("raw") or "")) for m in listed]

    def search(self, query: str, k: int) -> list[Hit]:
        raise DriverError("Khoj has no search of a user's memories in its API (its own search covers notes only)")

    def remember(self, texts: list[str]) -> None:
        self._driver.write_memories(self._app, self.account, texts)

    def seed_conversation(self, sentence: str) -> str:
        conversation = self.start_conversation()
        self.send(conversation, sentence)
        return conversation

    # -- chatting ----------------------------------------------------------------------------------------------------
    def start_conversation(self) -> str:
        created = _check(self.http.post("/api/chat/sessions"), f"starting a conversation for {self.account.label}")
        return str(created["conversation_id"])

    def send(self, conversation_id: str, text: str) -> Reply:
        """One turn; returned once Khoj has saved it and written its memories, which it does after the reply, as a
        person reading the reply gives it time to (a next message sent at once races the memory manager: see
        docs/targets.md, "Worked example: Khoj")."""
        in_it = lambda turn: turn.conversation == conversation_id  # noqa: E731
        before = self._driver.saved_turns(self._app, in_it)
        data = _check(self.http.post("/api/chat", json={"q": text, "conversation_id": conversation_id,
                                                        "stream": False}, timeout=SEND_TIMEOUT),
                      f"{self.account.label} sending a message")
        self._driver.wait_saved(self._app, in_it, before + 1,
                                f"Khoj saving {self.account.label}'s turn in conversation {conversation_id}")
        return Reply(str(data.get("response") or ""))

    def credentials(self) -> dict:
        return {"cookies": {"session": self.http.cookies.get("session")}}

    # -- what users take back ----------------------------------------------------------------------------------------
    def delete_memory(self, memory_id: str) -> None:
        resp = self.http.delete(f"/api/memories/{memory_id}")
        if resp.status_code != 204:
            raise DriverError(f"deleting {self.account.label}'s memory {memory_id}: HTTP {resp.status_code} "
                              f"{resp.text[:200]}")

    def edit_memory(self, memory_id: str, text: str) -> None:
        _check(self.http.put(f"/api/memories/{memory_id}", json={"raw": text}),
               f"editing {self.account.label}'s memory {memory_id}")

    def clear_memories(self) -> None:
        """Khoj's memories dialog deletes them one by one (it has no call for all of them)."""
        for memory in self.memories():
            self.delete_memory(memory.id)

    def delete_conversation(self, conversation_id: str) -> None:
        _check(self.http.delete("/api/chat/history", params={"conversation_id": conversation_id}),
               f"deleting {self.account.label}'s conversation {conversation_id}")

    def set_memory(self, enabled: bool) -> None:
        _check(self.http.patch("/api/user/memory", params={"enable_memory": str(enabled).lower()}),
               f"turning {self.account.label}'s memory {'on' if enabled else 'off'}")

    def request(self, method: str, path: str, *, json: object = None,
                headers: dict[str, str] | None = None) -> ApiAnswer:
        resp = self.http.request(method, path, json=json, headers=headers)
        return ApiAnswer(resp.status_code, resp.text)

    def reads_of(self, other: Account, conversation_ids: list[str], memory_ids: list[str]) -> dict[str, ApiAnswer]:
        """Every read of Khoj's API that could reach another user's data: their conversations by id (history,
        file filters), and the listings and exports that answer the asker's own."""
        gets: dict[str, tuple[str, dict[str, Any]]] = {
            "memories listing": ("/api/memories", {}),
            "conversations listing": ("/api/chat/sessions", {}),
            "conversations export": ("/api/chat/export", {}),
            "the default conversation": ("/api/chat/history", {}),
            "user": ("/api/v1/user", {}),
        }
        for cid in conversation_ids:
            gets[f"conversation {cid}"] = ("/api/chat/history", {"conversation_id": cid})
            gets[f"conversation {cid} file filters"] = (f"/api/chat/conversation/file-filters/{cid}", {})
        return {label: ApiAnswer((r := self.http.get(path, params=params)).status_code, r.text)
                for label, (path, params) in gets.items()}

    def close(self) -> None:
        self.http.close()
