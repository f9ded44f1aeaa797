"""Server-rendered HTML. Every user-supplied string goes through escape(): it is shown as text, never as markup."""

from __future__ import annotations

import json
from html import escape

from memchat.accounts import User
from memchat.conversations import Conversation, Message

_HEAD = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title><link rel="stylesheet" href="/static/app.css"></head>"""


def login_page(error: str | None = None, email: str = "") -> str:
    alert = (f'<p role="alert" class="error" data-testid="login-error">{escape(error)}</p>' if error else "")
    return _HEAD.format(title="Log in - memchat") + f"""
<body class="login"><main>
<h1>memchat</h1>
<form method="post" action="/login" aria-label="Log in">
  {alert}
  <label for="email">Email</label>
  <input id="email" name="email" type="email" autocomplete="username" required value="{escape(email)}"
         data-testid="login-email">
  <label for="password">Password</label>
  <input id="password" name="password" type="password" autocomplete="current-password" required
         data-testid="login-password">
  <button type="submit" data-testid="login-submit">Log in</button>
</form>
</main></body></html>"""


def _message(m: Message) -> str:
    return (f'<li class="message {m.role}" data-testid="message" data-role="{m.role}">'
            f'<span class="text">{escape(m.text)}</span></li>')


def _header(user: User, links: str) -> str:
    return f"""<header>
  {links}
  <span data-testid="current-user">{escape(user.email)}</span>
  <form method="post" action="/logout"><button type="submit" data-testid="logout">Log out</button></form>
</header>"""


def chat_page(user: User, conversations: list[Conversation], current: Conversation | None,
              messages: list[Message], front_end: dict, memory_on: bool = True) -> str:
    def item(c: Conversation) -> str:
        here = ' aria-current="page"' if current and c.id == current.id else ""
        return (f'<li><a href="/c/{escape(c.id)}" data-testid="conversation-item"'
                f' data-conversation-id="{escape(c.id)}"{here}>{escape(c.title or "New conversation")}</a>'
                f'<p class="preview" data-testid="conversation-preview">{escape(c.preview)}</p>'
                '<button type="button" class="delete" data-testid="delete-conversation"'
                ' aria-label="Delete conversation">Delete</button></li>')

    items = "\n".join(item(c) for c in conversations)
    config = json.dumps({"conversationId": current.id if current else None, **front_end})
    off = "" if memory_on else '<span data-testid="memory-off">Memory is off</span>'
    links = f'{off}<a href="/memories" data-testid="memories-link">Memories</a>'
    return _HEAD.format(title=escape(current.title if current and current.title else "memchat")) + f"""
<body class="chat">
{_header(user, links)}
<nav aria-label="Conversations" data-testid="conversation-list">
  <button type="button" id="new-conversation" data-testid="new-conversation">New conversation</button>
  <ul id="conversations">{items}</ul>
</nav>
<main>
  <ol role="log" aria-label="Messages" aria-live="polite" id="messages" data-testid="messages">
{"".join(_message(m) for m in messages)}
  </ol>
  <form id="composer" aria-label="Send a message">
    <label for="message-input">Message</label>
    <textarea id="message-input" name="text" rows="2" required data-testid="message-input"></textarea>
    <button type="submit" id="send" data-testid="send">Send</button>
  </form>
</main>
<script>window.MEMCHAT = {config};</script>
<script src="/static/common.js"></script>
<script src="/static/chat.js"></script>
</body></html>"""


# What the memories page says of the switch, once the server holds it (the page script shows the other after a change).
MEMORY_STATUS = {True: "Memory is on: what you tell me is remembered.",
                 False: "Memory is off: nothing you tell me is remembered or recalled."}


def _memory_item(m: dict) -> str:
    return (f'<li data-testid="memory-item" data-memory-id="{escape(m["id"])}">'
            f'<span class="text" data-testid="memory-text">{escape(m["text"])}</span>'
            '<button type="button" data-testid="edit-memory" aria-label="Edit memory">Edit</button>'
            '<button type="button" data-testid="delete-memory" aria-label="Delete memory">Delete</button></li>')


def memories_page(user: User, memories: list[dict], memory_on: bool, front_end: dict) -> str:
    """The user's memories, oldest first, to edit, delete or clear, and the switch of memory itself."""
    items = "\n".join(_memory_item(m) for m in memories)
    empty = "" if memories else '<p data-testid="no-memories">You have no memories.</p>'
    checked = " checked" if memory_on else ""
    return _HEAD.format(title="Memories - memchat") + f"""
<body class="memories">
{_header(user, '<a href="/" data-testid="back-to-chat">Back to chat</a>')}
<main>
  <h1>Memories</h1>
  <p class="setting">
    <input type="checkbox" role="switch" id="memory-enabled" data-testid="memory-enabled"{checked}>
    <label for="memory-enabled">Remember what I tell you</label>
  </p>
  <p role="status" id="memory-status" data-testid="memory-status" data-on="{MEMORY_STATUS[True]}"
     data-off="{MEMORY_STATUS[False]}">{MEMORY_STATUS[memory_on]}</p>
  <ul aria-label="Memories" id="memory-list" data-testid="memory-list">{items}</ul>
  {empty}
  <p class="clear">
    <button type="button" id="clear-memories" data-testid="clear-memories">Clear all memories</button>
    <button type="button" id="confirm-clear-memories" data-testid="confirm-clear-memories"
            hidden>Yes, clear all</button>
    <button type="button" id="cancel-clear-memories" data-testid="cancel-clear-memories" hidden>Cancel</button>
  </p>
</main>
<script>window.MEMCHAT = {json.dumps(front_end)};</script>
<script src="/static/common.js"></script>
<script src="/static/memories.js"></script>
</body></html>"""
