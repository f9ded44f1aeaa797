"""The assistant: deterministic and offline by default; optionally an OpenAI-compatible model.

It answers a question about a fact from the conversation's turns first (newest first, however long ago), then from
recalled memories, this conversation's included.
"""

from __future__ import annotations

from dataclasses import dataclass

import httpx

from memchat.conversations import Message
from memchat.facts import Fact, asked_key, facts_in, parse_fact
from memchat.memory_store import Recalled
from memchat.settings import Settings

CONTEXT_TURNS = 20  # the window of the fault long-conversation-forgets


@dataclass(frozen=True)
class Turn:
    reply: str
    remember: list[str]


def _from_context(key: str, history: list[Message]) -> Fact | None:
    for msg in reversed(history):
        if msg.role == "user":
            for fact in reversed(facts_in(msg.text)):
                if fact.key == key:
                    return fact
    return None


def _from_memory(key: str, recalled: list[Recalled]) -> Fact | None:
    matching = [r for r in recalled if r.fact_key == key]
    if not matching:
        return None
    newest = max(matching, key=lambda r: (r.created_at, r.id))  # a correction supersedes the fact it corrects
    return parse_fact(newest.text)


def respond(text: str, history: list[Message], recalled: list[Recalled], settings: Settings) -> Turn:
    """`history`: the conversation's earlier messages, oldest first, without the new one."""
    if settings.has("context-dropped"):
        context = []
    elif settings.has("long-conversation-forgets"):
        context = history[-CONTEXT_TURNS:]
    else:
        context = history  # the whole conversation: its early facts are answered however long ago they were told
    told = facts_in(text)
    remember = [f.sentence for f in told]
    if settings.llm_base_url:
        return Turn(_ask_model(text, context, recalled, settings), remember)
    key = asked_key(text)
    if key:
        fact = _from_context(key, context) or _from_memory(key, recalled)
        if fact:
            return Turn(f"Your {fact.key} is {fact.value}.", remember)
        return Turn(f"I don't remember your {key}.", remember)
    if told:
        return Turn("Got it. I'll remember that your " + " and your ".join(f"{f.key} is {f.value}" for f in told)
                    + ".", remember)
    return Turn("Noted.", remember)


def _ask_model(text: str, context: list[Message], recalled: list[Recalled], settings: Settings) -> str:
    memory = "\n".join(f"- {r.text}" for r in recalled) or "- (nothing relevant)"
    messages = [{"role": "system", "content": "You are a helpful assistant. What you remember about the user:\n"
                 + memory}]
    messages += [{"role": m.role, "content": m.text} for m in context]
    messages.append({"role": "user", "content": text})
    headers = {"Authorization": f"Bearer {settings.llm_api_key}"} if settings.llm_api_key else {}
    resp = httpx.post(settings.llm_base_url.rstrip("/") + "/chat/completions", headers=headers, timeout=60,
                      json={"model": settings.llm_model or "gpt-4o-mini", "messages": messages})
    resp.raise_for_status()
    return resp.json()["choices"][0]["message"]["content"]
