"""What Khoj 2.0.0b28 sends the chat model besides the chat itself, and the answers it parses.

Read from its source at the release (`src/khoj/`, paths below relative to it):

- The tool choice (`processor/conversation/prompts.py`, `pick_relevant_tools`; `response_format` json_schema
  "PickTools"): "Which of the data sources, output format listed below would you use to answer the user's
  question?" ... answered `{"source": [...], "output": "text"}`. This server picks no source but the chat itself.
- The memories of a turn (`processor/conversation/utils.py`, `generate_chatml_messages_with_context`): a user
  message before the question, "Your memory system retrieved the following memories about me ..." with
  `<retrieved_memories>` holding one `- [YYYY-MM-DD HH:MM:SS]: <fact>` line per memory. Read as memories, newest
  first (the same key's newest statement wins); the message is not a turn of the conversation.
- The memory manager, after the reply (`routers/helpers.py`, `extract_facts_from_query`; prompt
  `extract_facts_from_query`, json_schema "MemoryUpdates"): one user message starting "You are Muninn, the user's
  memory manager", whose last `# Input` holds `Existing Facts:` (JSON: id, raw, updated_at of the memories retrieved
  for the turn, `[]` for none) and `Latest Chat Session:` (`User: <message>` lines; the reply is left out for plain
  chat). Answered `{"create": [...], "delete": [...]}`: each fact the user's message states, as its sentence, unless
  a shown memory reads so already; and the ids of the shown memories that state one of those facts' keys otherwise
  (a correction). Only what the prompt shows is deleted, as Khoj's own model could.
- A title (`conversation_title_generation`, "title generator assistant"): the first words of the conversation's
  first user line, as plain text.
"""

from __future__ import annotations

import json
import re

from harness.vocabulary.language import facts_in

TOOL_CHOICE = "Which of the data sources, output format listed below would you use to answer the user's question?"
MEMORY_MANAGER = "You are Muninn, the user's memory manager"
TITLE = "title generator assistant"
RETRIEVED = re.compile(r"<retrieved_memories>\n?(.*?)\n?</retrieved_memories>", re.DOTALL)
_INPUT = "# Input"
_EXISTING = "Existing Facts:"
_SESSION = "Latest Chat Session:"
_SPEAKER = re.compile(r"^(User|AI|Khoj): ?", re.MULTILINE)


def retrieved_memories(user_texts: list[str]) -> tuple[list[str], list[str]]:
    """(the retrieved-memories blocks, the user messages without the ones that only carry them)."""
    blocks = [m.group(1) for text in user_texts for m in RETRIEVED.finditer(text)]
    return blocks, [text for text in user_texts if not RETRIEVED.search(text)]


def memory_updates(prompt: str) -> dict[str, list[str]]:
    """The memory manager's answer to its prompt (see the module's docstring)."""
    section = prompt.rpartition(_INPUT)[2]
    facts_part, _, session = section.partition(_SESSION)
    shown = _shown_facts(facts_part.partition(_EXISTING)[2])
    said = _user_lines(session)
    held = {raw.strip() for _, raw in shown}
    create: list[str] = []
    keys: dict[str, str] = {}
    for text in said:
        for fact in facts_in(text):
            keys[fact.key] = fact.sentence
            if fact.sentence not in held and fact.sentence not in create:
                create.append(fact.sentence)
    delete = [mid for mid, raw in shown if any(f.key in keys and keys[f.key] != raw.strip() for f in facts_in(raw))]
    return {"create": create, "delete": delete}


def _shown_facts(text: str) -> list[tuple[str, str]]:
    try:
        listed = json.loads(text.strip() or "[]")
    except json.JSONDecodeError:
        return []
    return [(str(m["id"]), str(m["raw"])) for m in listed if isinstance(m, dict) and "id" in m and "raw" in m] \
        if isinstance(listed, list) else []


def _user_lines(session: str) -> list[str]:
    """The user's messages of a chat session as Khoj writes it (`User: ...`, a message's further lines after it)."""
    parts = _SPEAKER.split(session)
    return [parts[i + 1].strip() for i in range(1, len(parts) - 1, 2) if parts[i] == "User"]


def task_answer(texts: list[str]) -> str | None:
    """The answer to one of Khoj's task prompts among a request's message texts, or None when it is a chat."""
    joined = "\n".join(texts)
    if MEMORY_MANAGER in joined:
        prompt = next(text for text in texts if MEMORY_MANAGER in text)
        return json.dumps(memory_updates(prompt), ensure_ascii=False)
    if TOOL_CHOICE in joined:
        return json.dumps({"source": ["general"], "output": "text"})
    if TITLE in joined:
        said = _user_lines(joined.rpartition("Conversation History:")[2])
        words = re.findall(r"[^\W_][\w'\-]*", said[0] if said else "")[:4]
        return " ".join(words) or "New Chat"
    return None
