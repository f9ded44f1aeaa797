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


def chat_page(user: User, conversations: list[Conversation], current: Conversation | None,
              messages: list[Message], front_end: dict) -> str:
    def item(c: Conversation) -> str:
        here = ' aria-current="page"' if current and c.id == current.id else ""
        return (f'<li><a href="/c/{escape(c.id)}" data-testid="conversation-item"'
                f' data-conversation-id="{escape(c.id)}"{here}>{escape(c.title or "New conversation")}</a></li>')

    items = "\n".join(item(c) for c in conversations)
    config = json.dumps({"conversationId": current.id if current else None, **front_end})
    return _HEAD.format(title=escape(current.title if current and current.title else "memchat")) + f"""
<body class="chat">
<header>
  <span data-testid="current-user">{escape(user.email)}</span>
  <form method="post" action="/logout"><button type="submit" data-testid="logout">Log out</button></form>
</header>
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
<script src="/static/chat.js"></script>
</body></html>"""
