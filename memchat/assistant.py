"""The assistant: deterministic and offline by default; optionally an OpenAI-compatible model.

It answers a question about a fact with its newest statement: the last one in the conversation's turns (however long
ago it was told) or the newest recalled memory (this conversation's included), whichever was told later, so a
correction made in another conversation wins over an older conversation that is reopened.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import httpx

from memchat.conversations import Message
from memchat.facts import Fact, asked_key, facts_in, parse_fact
from memchat.memory_store import Recalled
from memchat.settings import Settings

CONTEXT_TURNS = 20  # the window of the fault long-conversation-forgets
DEFAULT_MODEL = "gpt-4o-mini"  # the model client's model when MEMCHAT_LLM_MODEL is not set


@dataclass(frozen=True)
class Turn:
    reply: str
    remember: list[str]


def _from_context(key: str, history: list[Message]) -> tuple[datetime, Fact] | None:
    for msg in reversed(history):
        if msg.role == "user":
            for fact in reversed(facts_in(msg.text)):
                if fact.key == key:
                    return msg.created_at, fact
    return None


def _from_memory(key: str, recalled: list[Recalled]) -> tuple[datetime, Fact] | None:
    matching = [r for r in recalled if r.fact_key == key]
    if not matching:
        return None
    newest = max(matching, key=lambda r: (r.created_at, r.id))  # a correction supersedes the fact it corrects
    fact = parse_fact(newest.text)
    return (newest.created_at, fact) if fact else None


def _newest(key: str, context: list[Message], recalled: list[Recalled], settings: Settings) -> Fact | None:
    in_context, in_memory = _from_context(key, context), _from_memory(key, recalled)
    if settings.has("reopened-conversation-wins"):  # the conversation first, memories only after it
        return (in_context or in_memory or (None, None))[1]
    found = [c for c in (in_context, in_memory) if c]
    # The memory written from a turn lands just after that turn's message: on a tie of the same statement, either.
    return max(found, key=lambda c: c[0])[1] if found else None


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
        fact = _newest(key, context, recalled, settings)
        if fact:
            return Turn(f"Your {fact.key} is {fact.value}.", remember)
        return Turn(f"I don't remember your {key}.", remember)
    if told:
        return Turn("Got it. I'll remember that your " + " and your ".join(f"{f.key} is {f.value}" for f in told)
                    + ".", remember)
    return Turn("Noted.", remember)


def described(settings: Settings) -> str:
    """Which assistant answers, as /healthz tells its operators: "built-in", or the model and where it is asked."""
    if not settings.llm_base_url:
        return "built-in"
    return f"{settings.llm_model or DEFAULT_MODEL} at {settings.llm_base_url}"


def _newest_of_each_fact(recalled: list[Recalled]) -> list[Recalled]:
    """The recalled memories a model is given: of each fact only its newest statement (as `_from_memory` picks it),
    in recall order. A model is not told when each was said: given a correction and the value it corrects, it could
    not tell which one is newer."""
    newest: dict[str, Recalled] = {}
    for r in recalled:
        if r.fact_key and (r.fact_key not in newest or (r.created_at, r.id) > (newest[r.fact_key].created_at,
                                                                                newest[r.fact_key].id)):
            newest[r.fact_key] = r
    return [r for r in recalled if not r.fact_key or newest[r.fact_key] is r]


def _ask_model(text: str, context: list[Message], recalled: list[Recalled], settings: Settings) -> str:
    memory = "\n".join(f"- {r.text}" for r in _newest_of_each_fact(recalled)) or "- (nothing relevant)"
    messages = [{"role": "system", "content": "You are a helpful assistant. What you remember about the user:\n"
                 + memory}]
    messages += [{"role": m.role, "content": m.text} for m in context]
    messages.append({"role": "user", "content": text})
    headers = {"Authorization": f"Bearer {settings.llm_api_key}"} if settings.llm_api_key else {}
    resp = httpx.post(settings.llm_base_url.rstrip("/") + "/chat/completions", headers=headers, timeout=60,
                      json={"model": settings.llm_model or DEFAULT_MODEL, "messages": messages})
    resp.raise_for_status()
    return resp.json()["choices"][0]["message"]["content"]
