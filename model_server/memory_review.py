"""What Open WebUI 0.12.4 sends the chat model besides the chat itself, and the answers it can parse.

Read from the installed package (`open_webui/`, paths below relative to it). Line numbers are those of 0.12.4.

Memories in the chat prompt (`utils/memory.py:290-407`, `add_memory_context`; called from
`utils/middleware.py:2349-2361` only when the request's `features.memory` is true (the web UI sets it when the
user's memory setting, defaulting to `ENABLE_MEMORIES`, is on) and `memories.system_context.enable`
(`ENABLE_MEMORY_SYSTEM_CONTEXT`, default true, `config.py:433`) holds):

    <memory_context>
    [User Memory]
    - <content>                  every memory of type "user", always
    - <path>: <content>          (`memory_label`, `utils/memory.py:43-44`: the path prefix only when the memory has one)

    [Memory Neighborhood]
    - ...                        "context" memories whose path is hinted at by the query
    [Relevant Context]
    - ...                        "context" memories from the vector search: query = last 7 user messages, k = 8
    </memory_context>

It is appended with a "\\n" to the first message when that is a system message, else inserted as a new system message
(`utils/misc.py:677-717`). Empty sections are left out; each section is capped (2000 characters by default) and, the
surprise, sorted alphabetically (`casefold`, line 370): neither the similarity rank nor any date survives, so when two
memories state the same key this server takes the FIRST listed one (the format carries no date to prefer).

Memory review (`ENABLE_MEMORY_BACKGROUND_REVIEW`, default false; every `MEMORIES_REVIEW_INTERVAL_TURNS` user turns,
default 10; `config.py:434-435`): after a turn, `review_memory_after_turn` (`utils/memory.py:410-471`; called at
`utils/middleware.py:3731`; it too needs `features.memory`, lines 423-425) starts `_review_memory` (474-525), which
calls the chat model (non-streaming) with system message `REVIEWER_SYSTEM` (line 579) and one user message, the
f-string template at lines 539-567:

    Review the completed conversation turn and decide whether long-term memory should change.
    ... rules ...
    Existing memories:
    - id=<uuid> type=<user|context> path=<path or empty> content=<content>     (first 80 memories, lines 485-488)
    (or "(none)")

    Conversation:
    user: <text>                 the last 16 messages of the chat thread, joined by blank lines (lines 494-511);
                                 > 1600 characters -> first 1000 + "\\n...(truncated)...\\n" + last 400
    assistant: <text>
    assistant_final: <text>      the reply just given, once more

The answer is parsed at lines 593-609: from the first "{" to the last "}" of `message.content`, JSON, key
"operations" (a list, else nothing happens). Operations (`routers/memories.py:84-94`, validated by
`validate_memory_operations`, `utils/memory.py:251-283`, applied by `models/memories.py:168-263`):
  {"action": "add", "type": "user|context", "path": "...", "content": "..."}   an add whose content, type and path
                                                                                equal an existing memory is skipped
  {"action": "replace", "id": "...", "type": ..., "path": ..., "content": "..."}
  {"action": "move", "id": "...", "path": "..."} and {"action": "remove", "id": "..."}
There is no "update": it is "replace". An unknown id raises and the whole batch is lost (one commit), and a
missing path clears the memory's path, so a replace here always names an id from the prompt and repeats its path.
`POST /api/v1/memories/add` defaults to type "context" (`routers/memories.py:72-75`); this server adds that type too
unless told otherwise, so memories reach the chat through the vector search (and an embedding-model change matters).

Other task prompts (`routers/tasks.py`, one user message each, `stream: false`; templates in `config.py`): title
(2279, parsed as JSON "title", `utils/middleware.py:3632-3666`), tags (2304, "tags"), image prompt (2324,
"prompt"), follow-ups (2347, "follow_ups", `utils/task.py:348`), search/retrieval queries (2380, "queries"),
autocomplete (2411, "text"), emoji (2528, plain text), MoA (2532, plain text), legacy tool calling (2504, system
message, "tool_calls"), context compaction (`utils/context_compaction.py:25`, plain summary). The request's
`metadata.task` is removed before the call reaches this server (`routers/openai.py:1432`), so they are recognised by
their text.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from harness.vocabulary.language import Fact, facts_in, sentences

REVIEWER_SYSTEM = "You are Open WebUI's private memory reviewer. Return only valid JSON."
REVIEW_PROMPT_START = "Review the completed conversation turn and decide whether long-term memory should change."
MEMORY_CONTEXT = re.compile(r"<memory_context>\n?(.*?)\n?</memory_context>", re.DOTALL)
_SECTION = re.compile(r"^\[[^\]\n]+\]$")
_BULLET = re.compile(r"^\s*(?:[-*\u2022]|\d+[.)])\s+")
_DATED = re.compile(r"^\[(\d{4}-\d\d-\d\d[^\]]*)\]:?\s*")
_EXISTING = re.compile(r"^- id=(?P<id>\S+) type=(?P<type>\S*) path=(?P<path>.*?) content=(?P<content>.*)$")
_TURN = re.compile(r"(?:^|\n\n)(user|assistant|assistant_final): ")
_TRUNCATED = "\n...(truncated)...\n"


@dataclass(frozen=True)
class StoredMemory:
    id: str
    type: str
    path: str
    content: str


def _memory_facts(label: str) -> list[Fact]:
    """Facts of one listed memory, the last stated first; a "path: " prefix is tried away if nothing parses."""
    found = facts_in(label)
    if not found and ": " in label:
        found = facts_in(label.split(": ", 1)[1])
    return found[::-1]


def memories_from_system(system_texts: list[str]) -> list[Fact]:
    """Facts the app gave the model as memories, in the order listed (first listed wins a tie on the key).

    Open WebUI's `<memory_context>` block when there is one; otherwise every bulleted, numbered or plain line of the
    system prompts, so other apps (and older Open WebUI's dated "User Context:" list) work too.
    """
    blocks = [m.group(1) for text in system_texts for m in MEMORY_CONTEXT.finditer(text)]
    labels: list[str] = []
    for block in blocks:
        for line in block.split("\n"):
            if not line.strip() or _SECTION.match(line.strip()):
                continue
            if line.startswith("- ") or not labels:
                labels.append(line[2:] if line.startswith("- ") else line)
            else:  # a memory whose content has line breaks
                labels[-1] += "\n" + line
    if not blocks:
        labels = [_BULLET.sub("", line).strip() for text in system_texts for line in text.split("\n")]
        # Older Open WebUI and others date each line ("1. [2025-01-31] My city is Paris."): newest first, then as
        # listed (a stable sort keeps the order among equal and undated lines).
        labels = sorted(labels, key=lambda label: m[1] if (m := _DATED.match(label)) else "", reverse=True)
        labels = [_DATED.sub("", label) for label in labels]
    return [fact for label in labels for fact in _memory_facts(label)]


def is_review_prompt(system_texts: list[str], user_texts: list[str]) -> bool:
    return REVIEWER_SYSTEM in system_texts or any(t.lstrip().startswith(REVIEW_PROMPT_START) for t in user_texts)


def parse_review_prompt(prompt: str) -> tuple[list[StoredMemory], list[tuple[str, str]]]:
    """The existing memories and the (role, text) turns the review prompt lists."""
    _, _, rest = prompt.partition("\nExisting memories:\n")
    existing_text, _, transcript = rest.partition("\n\nConversation:\n")
    memories: list[StoredMemory] = []
    for line in existing_text.split("\n"):
        m = _EXISTING.match(line)
        if m:
            memories.append(StoredMemory(m["id"], m["type"], m["path"], m["content"]))
        elif memories and line != "(none)":  # the next line of a multi-line memory
            last = memories[-1]
            memories[-1] = StoredMemory(last.id, last.type, last.path, f"{last.content}\n{line}")
    parts = _TURN.split(transcript.rstrip("\n"))
    turns = [(parts[i], parts[i + 1].strip()) for i in range(1, len(parts) - 1, 2)]
    return memories, turns


def _user_facts(text: str) -> list[Fact]:
    """Facts of one user turn; around Open WebUI's truncation mark the cut sentences are dropped, not misread."""
    if _TRUNCATED not in text:
        return facts_in(text)
    head, _, tail = text.partition(_TRUNCATED)
    head_sentences, tail_sentences = sentences(head), sentences(tail)
    if head_sentences and not head.rstrip().endswith((".", "!", "?")):
        head_sentences.pop()
    kept = head_sentences + tail_sentences[1:]
    return [fact for sentence in kept for fact in facts_in(sentence)]


def review_operations(prompt: str, memory_type: str = "context") -> list[dict[str, str]]:
    """The memory operations for a review prompt: one memory per fact key, holding the sentence as typed.

    Only user turns count. The turn under review (the last user turn) decides: per key its last statement is kept,
    replacing the memory that holds the key with other wording or value (the first listed), or added. Earlier turns
    of the transcript were reviewed before: their facts are only added where no memory holds the key, so a chat
    opened again never undoes a correction made in another chat since.
    """
    memories, turns = parse_review_prompt(prompt)
    user_turns = [text for role, text in turns if role == "user"]
    held = {f.key for m in memories for f in facts_in(m.content)}
    latest: dict[str, Fact] = {}
    for index, text in enumerate(user_turns):
        under_review = index == len(user_turns) - 1
        for fact in _user_facts(text):
            if under_review or fact.key not in held:
                latest.pop(fact.key, None)  # re-inserted: order follows the last statement
                latest[fact.key] = fact
    stored = {m.content.strip() for m in memories}
    operations: list[dict[str, str]] = []
    replaced: set[str] = set()
    for key, fact in latest.items():
        if fact.sentence in stored:
            continue
        target = next((m for m in memories if m.id not in replaced
                       and any(f.key == key for f in facts_in(m.content))), None)
        if target:
            replaced.add(target.id)
            operations.append({"action": "replace", "id": target.id, "type": target.type or memory_type,
                               "path": target.path, "content": fact.sentence})
        else:
            operations.append({"action": "add", "type": memory_type, "path": "", "content": fact.sentence})
    return operations


def memories_after(prompt: str, operations: list[dict[str, str]]) -> list[str]:
    """What the user's memories hold once the app has applied `operations` to those the prompt lists."""
    held = {m.id: m.content for m in parse_review_prompt(prompt)[0]}
    added = []
    for op in operations:
        if op.get("action") == "add":
            added.append(op["content"])
        elif op.get("action") == "replace":
            held[op["id"]] = op["content"]
        elif op.get("action") == "remove":
            held.pop(op["id"], None)
    return [*held.values(), *added]


def review_answer(prompt: str, memory_type: str = "context") -> str:
    return json.dumps({"operations": review_operations(prompt, memory_type)}, ensure_ascii=False)


# --- Other task prompts -------------------------------------------------------------------------------------------

def _first_user_line(prompt: str) -> str:
    history = prompt.partition("<chat_history>")[2]
    return next((line[len("USER: "):] for line in history.split("\n") if line.startswith("USER: ")), "")


def _title(prompt: str) -> str:
    words = re.findall(r"[^\W_][\w'\-]*", _first_user_line(prompt))[:4]
    return " ".join(words) or "New Chat"


def task_answer(user_texts: list[str], system_texts: list[str]) -> str | None:
    """The answer to one of Open WebUI's task prompts, or None when the request is a chat."""
    if any(t.startswith("Available Tools:") for t in system_texts):
        return json.dumps({"tool_calls": []})
    if len(user_texts) != 1:
        return None
    prompt = user_texts[0]
    if prompt.startswith("### Task:"):
        task = prompt.partition("<chat_history>")[0]  # the instructions only: the history is the user's text
        if "Summarize the conversation history that will be compacted" in task:
            return "The user told the assistant some facts about themselves."
        for key, value in (("title", _title(prompt)), ("tags", ["General"]), ("follow_ups", []),
                           ("queries", []), ("prompt", "A plain illustration."), ("text", "")):
            if f'"{key}"' in task:
                return json.dumps({key: value}, ensure_ascii=False)
        return None
    if prompt.startswith("Your task is to reflect the speaker's likely facial expression"):
        return "\N{SLIGHTLY SMILING FACE}"
    if prompt.startswith("You have been provided with a set of responses from various models"):
        return "Noted."
    return None
