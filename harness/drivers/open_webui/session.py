"""A user's session of Open WebUI through the JSON API its page calls, with the user's token: chats, memories and
their search, and what users take back (a memory deleted, edited or all cleared, a chat deleted, memory turned off)."""

from __future__ import annotations

import uuid

from harness.app.app_launcher import RunningApp
from harness.drivers.base import (
    Account,
    ApiAnswer,
    DriverError,
    Hit,
    Memory,
    UserSession,
)
from harness.drivers.open_webui.api import Reviews, check, search_memories
from harness.services.http_clients import client
from harness.vocabulary.turn import Turn
from model_server.client import ModelServer


def shown_branch(history: dict) -> list[Turn]:
    """The turns on screen, oldest first: from the current message back to the first through parentId (a chat's
    history is a tree, since a reply can be regenerated or a message edited)."""
    messages, current = history.get("messages") or {}, history.get("currentId")
    chain, seen = [], set()
    while current and current not in seen:
        seen.add(current)
        message = messages[current]
        chain.append(Turn(message["role"], message.get("content", "")))
        current = message.get("parentId")
    return list(reversed(chain))


class OpenWebUISession(UserSession):
    def __init__(self, app: RunningApp, account: Account, token: str, model: ModelServer | None,
                 reviews: Reviews | None = None) -> None:
        self.account = account
        self.reviews = reviews or Reviews()
        self.model = model
        self.base_url = app.base_url
        self.token = token
        self.http = client(base_url=app.base_url, timeout=60,
                           headers={"Authorization": f"Bearer {self.token}"})

    def conversation_ids(self) -> list[str]:
        return [c["id"] for c in check(self.http.get("/api/v1/chats/"), "listing chats")]

    def ask_for_conversation(self, conversation_id: str) -> ApiAnswer:
        resp = self.http.get(f"/api/v1/chats/{conversation_id}")
        return ApiAnswer(resp.status_code, resp.text)

    def turns(self, conversation_id: str) -> list[Turn]:
        chat = check(self.http.get(f"/api/v1/chats/{conversation_id}"), "reading a chat")["chat"]
        return shown_branch(chat.get("history") or {})

    def memories(self) -> list[Memory]:
        rows = check(self.http.get("/api/v1/memories/"), "listing memories")
        rows = sorted(rows, key=lambda m: (m.get("created_at") or 0))
        return [Memory(m["id"], m["content"]) for m in rows]

    def remember(self, texts: list[str]) -> None:
        for text in texts:
            check(self.http.post("/api/v1/memories/add", json={"content": text}), "adding a memory")

    def search(self, query: str, k: int) -> list[Hit]:
        return search_memories(self.http, query, k)

    def seed_conversation(self, sentence: str) -> str:
        """A chat with the sentence and the model's reply, and the memory the review would have stored."""
        reply = self.model.reply(sentence) if self.model else "Noted."
        user_id, reply_id = str(uuid.uuid4()), str(uuid.uuid4())
        user_msg = {"id": user_id, "role": "user", "content": sentence, "parentId": None, "childrenIds": [reply_id]}
        reply_msg = {"id": reply_id, "role": "assistant", "content": reply, "parentId": user_id, "childrenIds": []}
        chat = {"title": sentence[:60], "history": {"messages": {user_id: user_msg, reply_id: reply_msg},
                                                    "currentId": reply_id},
                "messages": [user_msg, reply_msg]}
        created = check(self.http.post("/api/v1/chats/new", json={"chat": chat}), "creating a chat")
        self.remember([sentence])
        return str(created["id"])

    # -- what users take back: the routes the page calls (its memory manager, chat menu and memory switch) ---------
    def delete_memory(self, memory_id: str) -> None:
        """The memory manager's delete (routers/memories.py delete_memory_by_id: the row, then its vector); it
        answers false for a memory that is not the user's."""
        if check(self.http.delete(f"/api/v1/memories/{memory_id}"), "deleting a memory") is not True:
            raise DriverError(f"Open WebUI deleted no memory {memory_id} of {self.account.label}: it is not theirs")

    def edit_memory(self, memory_id: str, text: str) -> None:
        """The memory manager's edit (update_memory_by_id: the row's content, then its vector embedded again)."""
        updated = check(self.http.post(f"/api/v1/memories/{memory_id}/update", json={"content": text}),
                         "editing a memory")
        if not updated or updated.get("content") != text:
            raise DriverError(f"Open WebUI stored {updated!r} for the edit of memory {memory_id} to {text!r}")

    def clear_memories(self) -> None:
        """The memory manager's "Clear memory", confirmed (delete_memory_by_user_id: every row of the user's, then
        the user's vector collection); it answers false for a user who had none."""
        check(self.http.delete("/api/v1/memories/delete/user"), "clearing memories")

    def delete_conversation(self, conversation_id: str) -> None:
        """The chat menu's delete, confirmed (routers/chats.py delete_chat_by_id)."""
        if check(self.http.delete(f"/api/v1/chats/{conversation_id}"), "deleting a chat") is not True:
            raise DriverError(f"Open WebUI did not delete chat {conversation_id} of {self.account.label}")

    def set_memory(self, enabled: bool) -> None:
        """The Personalization tab's Memory switch: it saves `ui.memory` (a field-level patch of the user's settings);
        the page sends `features.memory` with each message from it, and without it the server neither puts
        memories into the prompt nor reviews the turn."""
        saved = check(self.http.post("/api/v1/users/user/settings/update", json={"ui": {"memory": enabled}}),
                       "saving the memory switch")
        if (saved.get("ui") or {}).get("memory") is not enabled:
            raise DriverError(f"Open WebUI saved {saved.get('ui')!r} for {self.account.label}'s memory switch")
        self.reviews.memory_on = enabled

    def close(self) -> None:
        self.http.close()
