"""The model server as a deterministic agent, for apps that offer the model tools and run its calls (Letta's agent
loop): it stores what the user states with the app's memory-insert tool, looks up what the user asks with its
memory-search tool, and answers through its reply tool, or as plain content where the app offers none.

Stateless, like the rest of the server: every step derives from the request alone. The turn under way is what
follows the last real user message (an app's own user-role events, such as Letta's JSON `{"type": "heartbeat"}`,
`"login"` and `"system_alert"`, are not the user's); the calls the model already made in it, and their results, are
in the request. One tool call per response (Letta sends `parallel_tool_calls: false`):

1. one insert per fact the user's message states (`language.facts_in`), holding the sentence exactly as typed;
2. one search when it asks about a fact (`language.asked_key`), for the whole question, as many results as allowed;
3. the answer: the reply the server gives without tools, with the search's results as the remembered facts (newest
   first by their timestamps, one per fact: the newest statement wins), through the reply tool if there is one.

Tools are recognised by what they are for, from their names (`archival_memory_insert`, `core_memory_append`,
`add_memory`; `archival_memory_search`, `search_memories`; `send_message`, `reply`), and called with the required
string parameter their JSON schema names for the text. A tool with no required string parameter cannot be given a
text, so it is not used: a request that offers no usable tool is answered as by a plain chat model.
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from harness.vocabulary import language

# Letta's own user-role messages; a user's message that happens to be such JSON would be mistaken for one.
APP_EVENTS = frozenset({"heartbeat", "login", "system_alert", "user_login"})
# Parameters an app adds for the model's inner monologue (Letta: "thinking" in every tool of a memgpt agent).
INNER_THOUGHTS = ("thinking", "inner_thoughts", "reasoning")
# The names a text parameter usually has, tried first: Letta's core memory_insert(label, new_string) takes the label
# first, and a fact is no label.
TEXT_PARAMETERS = ("content", "text", "memory", "new_string", "message", "query", "input", "data")
COUNT_PARAMETERS = ("top_k", "k", "limit", "count", "max_results", "n_results")
SEARCH_RESULTS = 50  # as many memories as a question may need, unless the schema caps it lower
THOUGHT = "Following the user's message."

_MEMORY = {"memory", "memories", "archival", "archive"}
_INSERT = {"insert", "append", "add", "save", "store", "write", "remember", "create"}
_SEARCH = {"search", "query", "retrieve", "find", "lookup", "recall"}
_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")


@dataclass(frozen=True)
class Tool:
    name: str
    parameters: dict[str, Any]

    @property
    def properties(self) -> dict[str, Any]:
        props = self.parameters.get("properties")
        return props if isinstance(props, dict) else {}

    @property
    def required(self) -> list[str]:
        required = self.parameters.get("required")
        return [r for r in required if isinstance(r, str)] if isinstance(required, list) else []

    @property
    def words(self) -> set[str]:
        return {w.lower() for w in _WORD.findall(self.name)}

    def _is(self, name: str, kind: str) -> bool:
        spec = self.properties.get(name)
        return isinstance(spec, dict) and (spec.get("type") == kind or (isinstance(spec.get("type"), list)
                                                                        and kind in spec["type"]))

    @property
    def text_parameter(self) -> str | None:
        """The required string parameter that takes the text, or None (the tool cannot be given one)."""
        strings = [p for p in self.required if p not in INNER_THOUGHTS and self._is(p, "string")]
        return next((p for p in TEXT_PARAMETERS if p in strings), strings[0] if strings else None)

    def arguments(self, text: str, *, go_on: bool) -> dict[str, Any]:
        """The call's arguments: the text, the inner thought and the heartbeat where the schema requires them, and
        for a search as many results as it allows. `go_on`: whether the model means to take another step."""
        args: dict[str, Any] = {}
        for name in self.required:
            if name in INNER_THOUGHTS and self._is(name, "string"):
                args[name] = THOUGHT
        param = self.text_parameter
        assert param is not None, f"{self.name} takes no text"
        args[param] = text
        if "request_heartbeat" in self.properties:  # Letta: the loop goes on only when the model asks for it
            args["request_heartbeat"] = go_on
        return args


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: dict[str, Any]

    def as_openai(self) -> dict[str, Any]:
        return {"id": self.id, "type": "function",
                "function": {"name": self.name, "arguments": json.dumps(self.arguments, ensure_ascii=False)}}


@dataclass(frozen=True)
class Step:
    """One response of the model: plain content, or one tool call."""

    content: str | None = None
    call: ToolCall | None = None


@dataclass(frozen=True)
class Toolbox:
    insert: Tool | None = None
    search: Tool | None = None
    reply: Tool | None = None
    usable: bool = field(default=False)


def _tools(offered: list[Any]) -> list[Tool]:
    out = []
    for entry in offered:
        if not isinstance(entry, dict):
            continue
        fn = entry.get("function", entry)
        if isinstance(fn, dict) and isinstance(fn.get("name"), str):
            params = fn.get("parameters")
            out.append(Tool(fn["name"], params if isinstance(params, dict) else {}))
    return out


def _best(tools: list[Tool], fits: Callable[[Tool], bool]) -> Tool | None:
    """The first tool for the role, archival ones first (Letta offers core memory_insert beside archival_memory_
    insert, and long-term memory is the archival one)."""
    candidates = [t for t in tools if fits(t) and t.text_parameter is not None]
    return next((t for t in candidates if t.words & {"archival", "archive"}), candidates[0] if candidates else None)


def toolbox(offered: list[Any]) -> Toolbox:
    tools = _tools(offered)
    insert = _best(tools, lambda t: bool(t.words & _MEMORY and t.words & _INSERT) and not t.words & _SEARCH)
    search = _best(tools, lambda t: bool(t.words & _MEMORY and t.words & _SEARCH) and not t.words & _INSERT)
    reply = _best(tools, lambda t: bool(t.words & {"reply", "respond", "answer"}
                                        or ({"send"} & t.words and {"message", "reply"} & t.words)))
    return Toolbox(insert, search, reply, usable=any((insert, search, reply)))


def message_text(message: dict[str, Any]) -> str:
    """A message's text: a string, or the text parts of a list of parts (images and the like are skipped)."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p.get("text", "") for p in content
                         if isinstance(p, dict) and p.get("type") in ("text", "input_text") and p.get("text"))
    return ""


def is_app_event(message: dict[str, Any]) -> bool:
    """A user-role message the app wrote itself (Letta's heartbeats, logins and system alerts, as JSON)."""
    text = message_text(message).strip()
    if not text.startswith("{"):
        return False
    try:
        data = json.loads(text)
    except ValueError:
        return False
    return isinstance(data, dict) and data.get("type") in APP_EVENTS


def _calls(message: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    """(id, name, arguments) of an assistant message's tool calls."""
    out = []
    for call in message.get("tool_calls") or []:
        fn = call.get("function") if isinstance(call, dict) else None
        if not isinstance(fn, dict):
            continue
        try:
            args = json.loads(fn.get("arguments") or "{}")
        except ValueError:
            args = {}
        out.append((str(call.get("id", "")), str(fn.get("name", "")), args if isinstance(args, dict) else {}))
    return out


def _literal(text: str) -> Any:
    """A Python literal (Letta returns its search results as a list's repr), or JSON; None if neither. A repr cut
    short by the app's limit on a tool's output keeps its whole items: the longest prefix that parses."""
    for parse in (json.loads, ast.literal_eval):
        try:
            return parse(text)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            pass
    if text.lstrip().startswith("["):
        for cut in reversed([m.start() for m in re.finditer(r"\}, \{", text)]):
            try:
                return ast.literal_eval(text[:cut + 1] + "]")
            except (ValueError, SyntaxError, MemoryError, RecursionError):
                continue
    return None


def _when(item: dict[str, Any]) -> datetime | None:
    for key in ("timestamp", "created_at", "updated_at", "date"):
        value = item.get(key)
        if isinstance(value, str):
            try:
                when = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
            except ValueError:
                continue
            return when if when.tzinfo else when.replace(tzinfo=datetime.now().astimezone().tzinfo)
    return None


def found_memories(tool_output: str) -> list[str]:
    """The memories' texts in a search tool's output, newest first (undated ones after, as listed).

    Letta wraps a tool's return as JSON `{"status": "OK", "message": <return>, "time": ...}`, the return of its
    archival search being the repr of a list of {'id', 'timestamp', 'content', 'tags'}."""
    data = _literal(tool_output)
    if isinstance(data, dict) and "message" in data:
        data = data["message"]
    if isinstance(data, str):
        data = _literal(data)
    if isinstance(data, dict):
        data = data.get("results") or data.get("memories") or data.get("data")
    if not isinstance(data, list):
        return []
    items: list[tuple[datetime | None, str]] = []
    for item in data:
        if isinstance(item, str):
            items.append((None, item))
        elif isinstance(item, dict):
            text = next((item[k] for k in ("content", "text", "memory", "document") if isinstance(item.get(k), str)),
                        None)
            if text is not None:
                items.append((_when(item), text))
    # sorted is stable: items of the same time keep their rank
    dated = sorted(((when, text) for when, text in items if when is not None), key=lambda i: i[0], reverse=True)
    return [text for _, text in dated] + [text for when, text in items if when is None]


def newest_per_fact(texts: list[str]) -> list[language.Fact]:
    """The facts of memories listed newest first, the newest statement of each fact only: an app that keeps every
    statement holds the old value beside its correction, and the old one must not pass for news from elsewhere."""
    kept: dict[str, language.Fact] = {}
    for text in texts:
        for fact in reversed(language.facts_in(text)):  # within one memory the last statement is the newest
            kept.setdefault(fact.key, fact)
    return list(kept.values())


def _call_id(messages: list[dict[str, Any]]) -> str:
    digest = hashlib.blake2b(json.dumps(messages, sort_keys=True, default=str).encode(), digest_size=12)
    return f"call_{digest.hexdigest()}"


def act(messages: list[dict[str, Any]], offered: list[Any],
        given: list[language.Fact] | None = None) -> Step | None:
    """The next step of the turn under way, or None when no offered tool is one the agent uses. `given`: memories
    the app put into the prompt itself, which answer a question where no search tool is offered."""
    box = toolbox(offered)
    if not box.usable:
        return None
    real = [i for i, m in enumerate(messages) if m.get("role") == "user" and not is_app_event(m)]
    user_messages = [message_text(messages[i]) for i in real]
    if not real:
        return _answer(box, language.reply([], []), messages)
    text = user_messages[-1]
    calls = [c for m in messages[real[-1] + 1:] if m.get("role") == "assistant" for c in _calls(m)]
    outputs = {str(m.get("tool_call_id", "")): message_text(m)
               for m in messages[real[-1] + 1:] if m.get("role") == "tool"}

    if box.insert is not None:
        told = language.facts_in(text)
        inserted = sum(1 for _, name, _ in calls if name == box.insert.name)
        if inserted < len(told):
            return _call(box.insert, told[inserted].sentence, messages)
    remembered = list(given or [])
    if box.search is not None and language.asked_key(text):
        searches = [ident for ident, name, _ in calls if name == box.search.name]
        if not searches:
            return _call(box.search, text, messages, search=True)
        remembered = newest_per_fact([t for ident in searches for t in found_memories(outputs.get(ident, ""))])
    return _answer(box, language.reply(user_messages, remembered), messages)


def _call(tool: Tool, text: str, messages: list[dict[str, Any]], *, search: bool = False) -> Step:
    args = tool.arguments(text, go_on=True)
    if search:
        for name in COUNT_PARAMETERS:
            spec = tool.properties.get(name)
            if isinstance(spec, dict) and spec.get("type") == "integer":
                cap = spec.get("maximum")
                args[name] = min(SEARCH_RESULTS, int(cap)) if isinstance(cap, (int, float)) else SEARCH_RESULTS
                break
    return Step(call=ToolCall(_call_id(messages), tool.name, args))


def _answer(box: Toolbox, reply: str, messages: list[dict[str, Any]]) -> Step:
    if box.reply is None:
        return Step(content=reply)
    return Step(call=ToolCall(_call_id(messages), box.reply.name, box.reply.arguments(reply, go_on=False)))
