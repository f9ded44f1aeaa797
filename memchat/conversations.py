"""Conversations and their messages, always read through their owner (unless the `history-idor` fault is on).

Deleting a conversation deletes its row and its messages (ON DELETE CASCADE). The memories told in it are kept: they
outlive the conversation, and keep its id as where they were told.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime

from memchat.db import Pool


@dataclass(frozen=True)
class Message:
    id: int
    role: str
    text: str
    created_at: datetime

    def as_json(self) -> dict:
        return {"id": self.id, "role": self.role, "text": self.text, "created_at": self.created_at.isoformat()}


@dataclass(frozen=True)
class Conversation:
    id: str
    user_id: str
    title: str
    created_at: datetime
    updated_at: datetime
    preview: str = ""  # its last message, cut to PREVIEW_LENGTH characters: the list shows it under the title

    def as_json(self) -> dict:
        return {"id": self.id, "title": self.title, "created_at": self.created_at.isoformat(),
                "updated_at": self.updated_at.isoformat(), "preview": self.preview}


_COLUMNS = "id, user_id, title, created_at, updated_at"
PREVIEW_LENGTH = 100
# The newest message of each listed conversation, whoever said it (the fault preview-shows-own-message: the user's).
_PREVIEW = ("coalesce((SELECT left(m.text, %s) FROM messages m WHERE m.conversation_id = conversations.id{whose}"
            " ORDER BY m.id DESC LIMIT 1), '')")


class Conversations:
    def __init__(self, pool: Pool, check_owner: bool = True, soft_delete: bool = False, by_creation: bool = False,
                 retitle: bool = False, own_preview: bool = False) -> None:
        self.pool = pool
        self.check_owner = check_owner
        # The fault conversation-delete-keeps-messages: a delete marks the row, which only the list leaves out.
        self.soft_delete = soft_delete
        self.order = "created_at" if by_creation else "updated_at"  # the fault conversation-list-by-creation
        self.retitle = retitle  # the fault title-follows-latest-message
        self.preview = _PREVIEW.format(whose=" AND m.role = 'user'" if own_preview else "")

    def create(self, user_id: str, title: str, now: datetime) -> Conversation:
        cid = "c_" + uuid.uuid4().hex[:16]
        with self.pool.connection() as conn:
            conn.execute("INSERT INTO conversations (id, user_id, title, created_at, updated_at)"
                         " VALUES (%s, %s, %s, %s, %s)", (cid, user_id, title[:80], now, now))
        return Conversation(cid, user_id, title[:80], now, now)

    def list(self, user_id: str) -> list[Conversation]:
        with self.pool.connection() as conn:
            rows = conn.execute(f"SELECT {_COLUMNS}, {self.preview} FROM conversations WHERE user_id = %s"
                                f" AND deleted_at IS NULL ORDER BY {self.order} DESC, id DESC",
                                (PREVIEW_LENGTH, user_id)).fetchall()
        return [Conversation(*r) for r in rows]

    def get(self, user_id: str, conversation_id: str) -> Conversation | None:
        """The conversation if `user_id` owns it; None otherwise, so that callers answer 404 and reveal nothing."""
        marked = "" if self.soft_delete else " AND deleted_at IS NULL"  # the fault's read by id forgets the mark
        with self.pool.connection() as conn:
            row = conn.execute(f"SELECT {_COLUMNS} FROM conversations WHERE id = %s{marked}",
                               (conversation_id,)).fetchone()
        if row is None or (self.check_owner and row[1] != user_id):
            return None
        return Conversation(*row)

    def delete(self, user_id: str, conversation_id: str, now: datetime) -> bool:
        """Delete the owner's conversation with its messages (never another user's, even with `history-idor`);
        False when the user has no such conversation."""
        with self.pool.connection() as conn:
            if self.soft_delete:
                return conn.execute("UPDATE conversations SET deleted_at = %s WHERE id = %s AND user_id = %s"
                                    " AND deleted_at IS NULL", (now, conversation_id, user_id)).rowcount > 0
            return conn.execute("DELETE FROM conversations WHERE id = %s AND user_id = %s",
                                (conversation_id, user_id)).rowcount > 0

    def messages(self, conversation_id: str) -> list[Message]:
        with self.pool.connection() as conn:
            rows = conn.execute("SELECT id, role, text, created_at FROM messages WHERE conversation_id = %s"
                                " ORDER BY id", (conversation_id,)).fetchall()
        return [Message(*r) for r in rows]

    def told_at(self, conversation_id: str, message_id: int) -> datetime | None:
        """When the user's turn `message_id` of this conversation was told, or None if it has no such turn."""
        with self.pool.connection() as conn:
            row = conn.execute("SELECT created_at FROM messages WHERE id = %s AND conversation_id = %s"
                               " AND role = 'user'", (message_id, conversation_id)).fetchone()
        return row[0] if row else None

    def add(self, conversation: Conversation, role: str, text: str, now: datetime) -> Message:
        with self.pool.transaction() as conn:
            row = conn.execute("INSERT INTO messages (conversation_id, role, text, created_at)"
                               " VALUES (%s, %s, %s, %s) RETURNING id", (conversation.id, role, text, now)).fetchone()
            once = "title = ''" if not self.retitle else f"title = '' OR {role == 'user'}"
            conn.execute("UPDATE conversations SET updated_at = %s,"
                         f" title = CASE WHEN {once} THEN left(%s, 80) ELSE title END WHERE id = %s",
                         (now, text, conversation.id))
        return Message(row[0], role, text, now)
