"""The suite's model server: its language, Open WebUI's memory prompts, embeddings, and HTTP (a real process).

Open WebUI's formats are tested twice. Always: prompts built here from a verbatim copy of its template and
injection format (0.12.4, `open_webui/utils/memory.py`). And, when its installed source is found
(`MEMTEST_OPEN_WEBUI_SRC` or /tmp/owui/venv), through its own code: `utils/memory.py` is executed from source with
its database and HTTP dependencies stubbed (importing the package takes 25 s), so its real `add_memory_context`
builds the chat prompt and its real `_review_memory` builds the review prompt, parses this server's answer and
validates the operations.
"""

from __future__ import annotations

import ast
import asyncio
import base64
import json
import os
import select
import signal
import subprocess
import sys
import types
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import httpx
import numpy as np
import pytest

from harness.vocabulary import language
from model_server import agent, embeddings, memory_review
from model_server.agent import Step
from model_server.server import answer as server_answer
from model_server.server import build_app, complete

ROOT = Path(__file__).resolve().parent.parent
START_TIMEOUT = 15


def chat(*user_messages: str, system: str | None = None) -> str:
    """The reply to a conversation of user messages (with the assistant's turns in between, as apps send them)."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    for text in user_messages[:-1]:
        messages += [{"role": "user", "content": text}, {"role": "assistant", "content": "Noted."}]
    messages.append({"role": "user", "content": user_messages[-1]})
    return complete(messages)


# --- The language ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("said", "reply"), [
    ("My order number is 4417.", "Got it. I'll remember that your order number is 4417."),
    ("My city is Paris. Our dog is Rex!", "Got it. I'll remember that your city is Paris and your dog is Rex."),
    ("Actually, my  Favorite Colour is teal.", "Got it. I'll remember that your favourite colour is teal."),
    ("Correction: our wifi password = hunter2", "Got it. I'll remember that your wifi password is hunter2."),
    ("Hello there. How are you?", "Noted."),
    ("My name is what?", "Noted."),
])
def test_statements(said: str, reply: str) -> None:
    assert chat(said) == reply


@pytest.mark.parametrize("question", [
    "What is my order number?", "what's my order number", "Do you remember my order number?",
    "Do you still remember my order number?", "Tell me my order number.", "Hi. Which is my order number?",
])
def test_questions_in_their_forms(question: str) -> None:
    assert chat("My order number is 4417.", question) == "Your order number is 4417."


@pytest.mark.parametrize("lead_in", ["Actually, ", "Also ", "Oh, ", "So ", "Well, ", "Correction: ", "Sorry, "])
def test_a_correction_with_a_lead_in_wins(lead_in: str) -> None:
    assert chat("My city is Paris.", f"{lead_in}my city is Rome.", "Where is my city?") == "Your city is Rome."


def test_within_a_message_the_last_statement_wins() -> None:
    assert chat("My city is Paris. Oh, my city is Rome.", "What is my city?") == "Your city is Rome."


@pytest.mark.parametrize("value", ['"Zoë" \'the fox\' 🦊', "東京タワー", "שלום עולם", "a = b; <c> & d"])
def test_values_come_back_byte_for_byte(value: str) -> None:
    assert chat(f"My nickname is {value}.") == f"Got it. I'll remember that your nickname is {value}."
    assert chat(f"My nickname is {value}!", "What is my nickname?") == f"Your nickname is {value}."


def test_an_unknown_fact_is_not_made_up() -> None:
    assert chat("My city is Paris.", "What is my shoe size?") == "I don't remember your shoe size."
    assert chat("What is my favorite  colour?") == "I don't remember your favourite colour."


def test_it_is_stateless() -> None:
    assert chat("My locker number is 42.") == "Got it. I'll remember that your locker number is 42."
    assert chat("What is my locker number?") == "I don't remember your locker number."  # no memory of other calls
    assert chat("My locker number is 42.", "What is my locker number?") == chat(
        "My locker number is 42.", "What is my locker number?")


def test_only_the_users_sentences_count() -> None:
    messages = [{"role": "assistant", "content": "My name is Bot."}, {"role": "user", "content": "What is my name?"}]
    assert complete(messages) == "I don't remember your name."


# --- Open WebUI's formats, from a verbatim copy of its templates ----------------------------------------------------

def owui_memory_context(sections: dict[str, list[str]], system_prompt: str = "") -> str:
    """What `add_memory_context` (utils/memory.py:363-406) makes of a system prompt and the labels per section."""
    parts = [f"[{title}]\n" + "\n".join(f"- {m}" for m in sorted(labels, key=lambda m: (m.casefold(), m)))
             for title, labels in sections.items() if labels]
    block = "<memory_context>\n" + "\n\n".join(parts) + "\n</memory_context>"
    return f"{system_prompt}\n{block}" if system_prompt else block


def owui_review_prompt(existing: list[tuple[str, str, str, str]], turns: list[tuple[str, str]]) -> str:
    """The prompt of `_review_memory`/`_generate_memory_operations` (utils/memory.py:485-511, 539-567)."""
    existing_text = "\n".join(f"- id={i} type={t} path={p} content={c}" for i, t, p, c in existing) or "(none)"
    transcript = "\n\n".join(f"{role}: {text}" for role, text in turns)
    return f"""Review the completed conversation turn and decide whether long-term memory should change.

Memory types:
- user: durable facts, preferences, or instructions about the user.
- context: other durable context that may help future chats for this user account.

Rules:
- Save enduring details that can improve future conversations.
- Do not save one-off activity, meals, temporary mood, routine daily events, or other short-lived details unless the user explicitly asks to remember them.
- Do not save secrets, credentials, transient task steps, or unsupported guesses.
- Use path when there is a clear path for the memory.
- Leave path empty when there is no clear place for the memory.
- Prefer replace/move/remove over duplicate add when an existing memory should change.
- Do not invent type, status, trait, score, importance, or stability schemas.
- Return only JSON in this shape:
  {{"operations":[
    {{"action":"add","type":"user|context","path":"...","content":"..."}},
    {{"action":"replace","id":"...","type":"user|context","path":"...","content":"..."}},
    {{"action":"move","id":"...","path":"..."}},
    {{"action":"remove","id":"..."}}
  ]}}
- Use an empty operations array if nothing should be remembered.

Existing memories:
{existing_text}

Conversation:
{transcript}
"""  # noqa: E501 (verbatim)


def review(existing: list[tuple[str, str, str, str]], turns: list[tuple[str, str]]) -> list[dict[str, Any]]:
    """Ask for a review as Open WebUI does and parse the answer as it does (utils/memory.py:593-609)."""
    content = complete([{"role": "system", "content": memory_review.REVIEWER_SYSTEM},
                        {"role": "user", "content": owui_review_prompt(existing, turns)}])
    parsed = json.loads(content[content.find("{"):content.rfind("}") + 1])
    return parsed["operations"]


def test_memories_in_the_system_prompt_are_recalled() -> None:
    system = owui_memory_context({"User Memory": ["My name is Ana."],
                                  "Relevant Context": ["My order number is 4417.", "Our dog is Rex 🐕."]},
                                 system_prompt="You are a helpful assistant.")
    assert chat("What is my order number?", system=system) == "Your order number is 4417."
    assert chat("What is my dog?", system=system) == "Your dog is Rex 🐕."
    assert chat("What is my name?", system=system) == "Your name is Ana."
    assert chat("What is my shoe size?", system=system) == "I don't remember your shoe size."


def test_a_memory_from_another_chat_beats_the_conversation_and_the_first_listed_memory_wins() -> None:
    system = owui_memory_context({"Relevant Context": ["My city is Berlin.", "Actually, my city is Amsterdam."]})
    assert chat("What is my city?", system=system) == "Your city is Amsterdam."  # listed first (alphabetical)
    # The app keeps one memory per fact, replaced after each turn: one this chat never stated was written since.
    assert chat("My city is Rome.", "What is my city?", system=system) == "Your city is Amsterdam."
    # Once the app holds this chat's statement, the chat's later statement wins over it.
    rome = owui_memory_context({"Relevant Context": ["My city is Rome."]})
    assert chat("My city is Rome.", "Hi.", "Actually, my city is Oslo.", "What is my city?", system=rome) == (
        "Your city is Oslo.")


def test_memories_listed_one_a_line_by_other_apps_are_recalled() -> None:
    system = "You are a helpful assistant. What you remember about the user:\n- My shoe size is 42.\n- (nothing)"
    assert chat("What is my shoe size?", system=system) == "Your shoe size is 42."


def test_dated_memories_prefer_the_newest() -> None:
    system = ("User Context:\n1. [2025-01-02] My city is Berlin.\n2. [2025-03-04] Also, my city is Oslo.\n"
              "3. [2024-12-31] My dog is Rex.")
    assert chat("What is my city?", system=system) == "Your city is Oslo."
    assert chat("What is my dog?", system=system) == "Your dog is Rex."


def test_review_adds_each_fact_the_user_stated_as_typed() -> None:
    ops = review([], [("user", "Hi! My name is Ana. Our dog is Rex."), ("assistant", "My name is Bot."),
                      ("user", "My nickname is \"Zoë\" 🦊."), ("assistant_final", "Your nickname is Zoë.")])
    assert ops == [{"action": "add", "type": "context", "path": "", "content": "My name is Ana."},
                   {"action": "add", "type": "context", "path": "", "content": "Our dog is Rex."},
                   {"action": "add", "type": "context", "path": "", "content": "My nickname is \"Zoë\" 🦊."}]


def test_review_leaves_known_memories_and_replaces_changed_ones() -> None:
    existing = [("id-1", "context", "", "My name is Ana."), ("id-2", "user", "me/home", "My city is Paris.")]
    turns = [("user", "My name is Ana."), ("assistant", "Noted."), ("user", "My city is Paris."),
             ("user", "Actually, my city is Rome."), ("assistant_final", "Got it.")]
    assert review(existing, turns) == [
        {"action": "replace", "id": "id-2", "type": "user", "path": "me/home", "content": "Actually, my city is Rome."}]
    # The next review shows the same turns again: the correction stays, nothing is undone or added.
    assert review([existing[0], ("id-2", "user", "me/home", "Actually, my city is Rome.")], turns) == []
    assert review(existing, [("user", "Hello."), ("assistant_final", "Noted.")]) == []


def test_review_skips_sentences_cut_by_the_truncation() -> None:
    text = "My city is Paris. " + "x" * 1000 + " My dog is Re\n...(truncated)...\nx. Pet is Rex. My cat is Tom."
    ops = review([], [("user", text)])
    assert [op["content"] for op in ops] == ["My city is Paris.", "My cat is Tom."]


def test_review_adds_the_memory_type_asked_for() -> None:
    prompt = owui_review_prompt([], [("user", "My name is Ana.")])
    assert memory_review.review_operations(prompt, "user") == [
        {"action": "add", "type": "user", "path": "", "content": "My name is Ana."}]


@pytest.mark.parametrize(("template_part", "key", "expected"), [
    ('Generate a concise title summarizing the chat history.\nJSON format: { "title": "your concise title here" }',
     "title", "My order number is"),
    ('Generate 1-3 broad tags\nJSON format: { "tags": ["tag1", "tag2", "tag3"] }', "tags", ["General"]),
    ('Predict 3-5 useful messages\nJSON format: { "follow_ups": ["Suggested next message 1"] }', "follow_ups", []),
    ('Analyze the chat history\nStrictly return in JSON format: \n{\n  "queries": ["query1", "query2"]\n}',
     "queries", []),
    ('You are an autocompletion system.\n- Respond only in JSON format: `{ "text": "<your_completion>" }`.',
     "text", ""),
])
def test_task_prompts_get_the_json_they_ask_for(template_part: str, key: str, expected: Any) -> None:
    prompt = (f"### Task:\n{template_part}\n### Chat History:\n<chat_history>\nUSER: My order number is 4417.\n"
              'ASSISTANT: Got it. { "title": "no" }\n</chat_history>')
    answer = complete([{"role": "user", "content": prompt}])
    assert json.loads(answer[answer.find("{"):answer.rfind("}") + 1]) == {key: expected}


def test_the_tool_choice_prompt_gets_no_tool_calls() -> None:
    messages = [{"role": "system", "content": "Available Tools: []\n\nYour task is to choose..."},
                {"role": "user", "content": "Query: What is my city?"}]
    assert json.loads(complete(messages)) == {"tool_calls": []}


# --- Open WebUI's own code (skipped when its source is not installed) -----------------------------------------------

def _open_webui_source() -> Path | None:
    candidates = [os.environ.get("MEMTEST_OPEN_WEBUI_SRC", "")]
    candidates += sorted(str(p) for p in Path("/tmp/owui/venv/lib").glob("python3*/site-packages/open_webui"))
    return next((Path(c) for c in candidates if c and (Path(c) / "utils" / "memory.py").is_file()), None)


def _functions(path: Path, names: set[str]) -> ast.Module:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return ast.Module([n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name in names], [])


class _Memories:
    def __init__(self, rows: list[SimpleNamespace]) -> None:
        self.rows = rows

    @staticmethod
    def normalize_memory_type(memory_type: str | None = None) -> str:
        return "user" if memory_type == "user" else "context"

    async def get_memories_by_user_id(self, user_id: str) -> list[SimpleNamespace]:
        return self.rows


class _Config:
    @staticmethod
    async def get_many(*keys: str) -> dict[str, Any]:
        return {}


def _memory_row(ident: str, kind: str, content: str, path: str | None = None) -> SimpleNamespace:
    return SimpleNamespace(id=ident, type=kind, path=path, content=content, updated_at=0)


@pytest.fixture
def open_webui(monkeypatch: pytest.MonkeyPatch) -> Iterator[SimpleNamespace]:
    """Open WebUI's `utils/memory.py`, run from source; `calls` records what it sends to stubbed routes."""
    source = _open_webui_source()
    if source is None:
        pytest.skip("Open WebUI's source is not installed (set MEMTEST_OPEN_WEBUI_SRC)")
    calls = SimpleNamespace(chat=[], updates=[], recalled=[])
    misc = _functions(source / "utils" / "misc.py", {"get_content_from_message", "get_output_text",
                                                     "update_message_content", "add_or_update_system_message"})
    namespace: dict[str, Any] = {"__name__": "owui_memory"}
    exec(compile(misc, str(source / "utils" / "misc.py"), "exec"), namespace)  # noqa: S102 (its own code)
    tree = ast.parse((source / "utils" / "memory.py").read_text(encoding="utf-8"))
    tree.body = [n for n in tree.body if not (isinstance(n, ast.ImportFrom) and n.module
                                              and n.module.split(".")[0] in ("open_webui", "fastapi"))]

    class HTTPException(Exception):  # noqa: N818 (FastAPI's name)
        def __init__(self, status_code: int, detail: str) -> None:
            super().__init__(detail)

    namespace.update(HTTPException=HTTPException, Config=_Config, JSONCodec=json, Memories=_Memories([]),
                     has_permission=None)
    exec(compile(tree, str(source / "utils" / "memory.py"), "exec"), namespace)  # noqa: S102

    async def generate_chat_completion(request: Any, form_data: dict[str, Any], user: Any) -> dict[str, Any]:
        calls.chat.append(form_data)
        text = complete(form_data["messages"])
        return {"choices": [{"index": 0, "message": {"role": "assistant", "content": text}}]}

    async def query_memory(request: Any, form: Any, user: Any) -> Any:
        rows = [r for r in namespace["Memories"].rows if r.type == "context"]
        calls.recalled.append(form)
        return SimpleNamespace(ids=[[r.id for r in rows]], documents=[[r.content for r in rows]],
                               metadatas=[[{"type": r.type, "path": r.path} for r in rows]])

    async def update_memories(request: Any, form: Any, user: Any) -> None:
        calls.updates.append(form)

    stubs = {
        "open_webui": types.ModuleType("open_webui"), "open_webui.utils": types.ModuleType("open_webui.utils"),
        "open_webui.utils.chat": types.ModuleType("open_webui.utils.chat"),
        "open_webui.routers": types.ModuleType("open_webui.routers"),
        "open_webui.routers.memories": types.ModuleType("open_webui.routers.memories"),
    }
    stubs["open_webui.utils.chat"].generate_chat_completion = generate_chat_completion
    routes = stubs["open_webui.routers.memories"]
    routes.query_memory, routes.update_memories = query_memory, update_memories
    routes.QueryMemoryForm = routes.UpdateMemoriesForm = SimpleNamespace
    for name, module in stubs.items():
        monkeypatch.setitem(sys.modules, name, module)
    yield SimpleNamespace(ns=namespace, calls=calls)


def test_open_webuis_own_memory_context_is_understood(open_webui: SimpleNamespace) -> None:
    ns = open_webui.ns
    ns["Memories"] = _Memories([_memory_row("u1", "user", "My name is Ana.", path="profile"),
                                _memory_row("c1", "context", "My order number is 4417."),
                                _memory_row("c2", "context", "Actually, my city is Amsterdam."),
                                _memory_row("c3", "context", "My city is Berlin.")])
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "My dog is Rex."},
                {"role": "assistant", "content": "Noted."}, {"role": "user", "content": "What is my order number?"}]
    form = asyncio.run(ns["add_memory_context"](None, {"messages": messages}, SimpleNamespace(id="u")))
    assert "<memory_context>" in form["messages"][0]["content"], form["messages"][0]
    assert complete(form["messages"]) == "Your order number is 4417."
    for question, answer in [("What is my name?", "Your name is Ana."),
                             ("What is my city?", "Your city is Amsterdam."),  # listed first (alphabetical)
                             ("What is my dog?", "Your dog is Rex."),
                             ("What is my car?", "I don't remember your car.")]:
        form["messages"][-1]["content"] = question
        assert complete(form["messages"]) == answer


def test_open_webuis_own_review_parses_the_answer(open_webui: SimpleNamespace) -> None:
    ns = open_webui.ns
    ns["Memories"] = _Memories([_memory_row("id-1", "context", "My city is Paris."),
                                _memory_row("id-2", "context", "My name is Ana.")])
    chat_messages = [{"role": "user", "content": "My name is Ana. My city is Paris."},
                     {"role": "assistant", "content": "Got it."},
                     {"role": "user", "content": [{"type": "text", "text": "Sorry, my city is Rome. Our dog is 小白."},
                                                  {"type": "image_url", "image_url": {"url": "data:,"}}]},
                     {"role": "assistant", "content": "Got it. I'll remember that your city is Rome."}]
    asyncio.run(ns["_review_memory"](
        request=None, user=SimpleNamespace(id="u"), model={"id": "memtest-assistant"}, metadata={},
        form_data={}, assistant_message=chat_messages[-1], messages=chat_messages))
    (sent,) = open_webui.calls.chat
    assert sent["messages"][0]["content"] == memory_review.REVIEWER_SYSTEM and sent["stream"] is False
    (update,) = open_webui.calls.updates
    assert update.source == "background_review"
    assert update.operations == [
        {"action": "replace", "id": "id-1", "type": "context", "path": "", "content": "Sorry, my city is Rome."},
        {"action": "add", "type": "context", "path": "", "content": "Our dog is 小白."}]
    form = SimpleNamespace(operations=[SimpleNamespace(model_dump=lambda op=op: {"id": None, **op})
                                       for op in update.operations])
    assert [op["action"] for op in ns["validate_memory_operations"](form)] == ["replace", "add"]


# --- Embeddings -----------------------------------------------------------------------------------------------------

def _vec(text: str, model: str = "hash-ngram-v1") -> np.ndarray:
    return np.asarray(embeddings.embed(text, model))


def test_similar_texts_are_closer_than_unrelated_ones() -> None:
    for model in embeddings.MODELS:
        query = _vec("What is my order number?", model)
        assert query @ _vec("My order number is 4417.", model) > query @ _vec("Our dog is Rex.", model) + 0.3
        assert _vec("my favourite colour", model) @ _vec("My favourite colour is teal.", model) > 0.5


def test_vectors_have_384_unit_dims_and_are_deterministic() -> None:
    vector = embeddings.embed("My city is Paris.", "hash-ngram-v2")
    assert len(vector) == embeddings.DIMS == 384
    assert abs(float(np.linalg.norm(vector)) - 1) < 1e-6
    assert vector == embeddings.embed("My city is Paris.", "hash-ngram-v2")


def test_the_two_models_disagree() -> None:
    texts = ["My order number is 4417.", "What is my order number?", "Our dog is Rex.", "My city is Paris."]
    for text in texts:
        assert abs(_vec(text, "hash-ngram-v1") @ _vec(text, "hash-ngram-v2")) < 0.3
    # A v2 query against v1 memories is nearly useless: far below what the right model scores.
    right = _vec(texts[1], "hash-ngram-v1") @ _vec(texts[0], "hash-ngram-v1")
    wrong = _vec(texts[1], "hash-ngram-v2") @ _vec(texts[0], "hash-ngram-v1")
    assert abs(wrong) < 0.3 < right


# --- Over real HTTP -------------------------------------------------------------------------------------------------

def _start(extra: list[str] | None = None) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen([sys.executable, "-m", "model_server", "--host", "127.0.0.1", "--port", "0",
                             *(extra or [])], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    ready, _, _ = select.select([proc.stdout], [], [], START_TIMEOUT)
    line = proc.stdout.readline() if ready else ""  # type: ignore[union-attr]
    if not line.startswith("model server: http://127.0.0.1:"):
        proc.kill()
        pytest.fail(f"the model server did not start: {line!r} {proc.stderr.read()!r}")  # type: ignore[union-attr]
    return proc, line.removeprefix("model server: ").strip()


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    proc, url = _start()
    yield url
    proc.terminate()
    proc.wait(timeout=10)


OPEN_WEBUI_EXTRAS = {"stream_options": {"include_usage": True}, "metadata": {"chat_id": "c"}, "tools": [
    {"type": "function", "function": {"name": "search_memories", "parameters": {"type": "object"}}}],
    "tool_choice": "auto", "temperature": 0.7, "user": {"id": "u"}, "features": {"memory": True}}


def test_streaming(base_url: str) -> None:
    messages = [{"role": "user", "content": "Our gate code is 12 34 #!"},
                {"role": "assistant", "content": "Got it."},
                {"role": "user", "content": [{"type": "text", "text": "Do you remember our gate code?"},
                                             {"type": "image_url", "image_url": {"url": "data:,"}}]}]
    body = {"model": "memtest-assistant", "messages": messages, "stream": True, **OPEN_WEBUI_EXTRAS}
    with httpx.stream("POST", f"{base_url}/chat/completions", json=body, timeout=10) as resp:
        assert resp.status_code == 200 and resp.headers["content-type"].startswith("text/event-stream")
        lines = [line for line in resp.iter_lines() if line]
    assert all(line.startswith("data: ") for line in lines) and lines[-1] == "data: [DONE]"
    chunks = [json.loads(line.removeprefix("data: ")) for line in lines[:-1]]
    assert {c["object"] for c in chunks} == {"chat.completion.chunk"}
    deltas = [c["choices"][0] for c in chunks if c["choices"]]
    assert "".join(d["delta"].get("content", "") for d in deltas) == "Your gate code is 12 34 #."
    assert len(deltas) > 3 and deltas[-1]["finish_reason"] == "stop"
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["total_tokens"] > 0


def test_plain_completion(base_url: str) -> None:
    body = {"model": "memtest-assistant", "messages": [{"role": "user", "content": "My pin is 0042."}]}
    resp = httpx.post(f"{base_url}/chat/completions", json=body, timeout=10)
    assert resp.status_code == 200
    assert resp.json()["choices"][0] == {"index": 0, "finish_reason": "stop", "message": {
        "role": "assistant", "content": "Got it. I'll remember that your pin is 0042."}}


def test_models_and_health(base_url: str) -> None:
    ids = {m["id"] for m in httpx.get(f"{base_url}/models", timeout=10).json()["data"]}
    assert {"memtest-assistant", "hash-ngram-v1", "hash-ngram-v2"} <= ids
    assert httpx.get(base_url.removesuffix("/v1") + "/health", timeout=10).json() == {"status": "ok"}


def test_embeddings_over_http_match_this_process(base_url: str) -> None:
    texts = ["My city is Paris.", "What is my city?"]
    data = httpx.post(f"{base_url}/embeddings", json={"model": "hash-ngram-v2", "input": texts}, timeout=10).json()
    assert [d["index"] for d in data["data"]] == [0, 1]
    assert [d["embedding"] for d in data["data"]] == [embeddings.embed(t, "hash-ngram-v2") for t in texts]
    one = httpx.post(f"{base_url}/embeddings", timeout=10,
                     json={"model": "hash-ngram-v1", "input": texts[0], "encoding_format": "base64"}).json()
    decoded = np.frombuffer(base64.b64decode(one["data"][0]["embedding"]), dtype="<f4")
    assert np.allclose(decoded, embeddings.embed(texts[0], "hash-ngram-v1"), atol=1e-6)


def test_unknown_embedding_model_is_404(base_url: str) -> None:
    resp = httpx.post(f"{base_url}/embeddings", json={"model": "text-embedding-3-large", "input": "x"}, timeout=10)
    assert resp.status_code == 404
    message = resp.json()["error"]["message"]
    assert "\n" not in message and "hash-ngram-v1" in message and "hash-ngram-v2" in message


def test_an_unknown_chat_model_is_404_and_the_names_an_app_is_configured_with_are_answered() -> None:
    from starlette.testclient import TestClient

    messages = [{"role": "user", "content": "My pin is 0042."}]
    plain = TestClient(build_app())
    resp = plain.post("/v1/chat/completions", json={"model": "gpt-4o-mini", "messages": messages})
    assert resp.status_code == 404 and resp.json()["error"]["code"] == "model_not_found"
    assert "'gpt-4o-mini'" in resp.json()["error"]["message"] and "memtest-assistant" in resp.json()["error"]["message"]
    assert plain.post("/v1/chat/completions", json={"messages": messages}).status_code == 200  # none: its own
    khoj = TestClient(build_app(chat_models=("gpt-4o-mini",)))
    for name in ("gpt-4o-mini", "memtest-assistant"):
        assert khoj.post("/v1/chat/completions", json={"model": name, "messages": messages}).status_code == 200
    assert "gpt-4o-mini" in {m["id"] for m in khoj.get("/v1/models").json()["data"]}


def test_started_with_a_key_it_answers_only_requests_bearing_it() -> None:
    from starlette.testclient import TestClient

    client = TestClient(build_app(api_key="k3y"))
    body = {"model": "memtest-assistant", "messages": [{"role": "user", "content": "My pin is 0042."}]}
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "k3y"}):
        for resp in (client.post("/v1/chat/completions", json=body, headers=headers),
                     client.post("/v1/embeddings", json={"model": "hash-ngram-v1", "input": "x"}, headers=headers),
                     client.get("/v1/models", headers=headers)):
            assert resp.status_code == 401 and resp.json()["error"]["code"] == "invalid_api_key", (headers, resp.text)
    ok = client.post("/v1/chat/completions", json=body, headers={"Authorization": "Bearer k3y"})
    assert ok.status_code == 200 and ok.json()["choices"][0]["message"]["content"].startswith("Got it.")
    assert client.get("/health").status_code == 200  # the suite's own routes need no key


def test_openai_named_embeddings_have_openais_size_and_honour_dimensions(base_url: str) -> None:
    body = {"model": "text-embedding-3-small", "input": ["my favourite colour"], "encoding_format": "base64"}
    one = httpx.post(f"{base_url}/embeddings", json=body, timeout=10).json()["data"][0]["embedding"]
    vector = np.frombuffer(base64.b64decode(one), dtype="<f4")
    assert vector.shape == (1536,) and abs(float(np.linalg.norm(vector)) - 1) < 1e-5
    assert _vec("my favourite colour", "text-embedding-3-small") @ _vec(
        "My favourite colour is teal.", "text-embedding-3-small") > 0.5
    small = httpx.post(f"{base_url}/embeddings", json={**body, "dimensions": 256}, timeout=10).json()
    assert len(np.frombuffer(base64.b64decode(small["data"][0]["embedding"]), dtype="<f4")) == 256
    assert httpx.post(f"{base_url}/embeddings", json={**body, "dimensions": 0}, timeout=10).status_code == 400


def test_it_stops_on_sigint_and_can_add_user_memories() -> None:
    proc, url = _start(["--memory-type", "user"])
    prompt = owui_review_prompt([], [("user", "My name is Ana.")])
    body = {"model": "memtest-assistant", "messages": [{"role": "system", "content": memory_review.REVIEWER_SYSTEM},
                                                       {"role": "user", "content": prompt}]}
    try:
        answer = httpx.post(f"{url}/chat/completions", json=body, timeout=10).json()["choices"][0]["message"]
    finally:
        proc.send_signal(signal.SIGINT)
    assert json.loads(answer["content"])["operations"][0]["type"] == "user"
    assert proc.wait(timeout=10) == 0
    assert proc.stdout.read() == ""  # type: ignore[union-attr]  # the address line was the only one


def test_bad_requests_are_400(base_url: str) -> None:
    assert httpx.post(f"{base_url}/chat/completions", content=b"not json", timeout=10).status_code == 400
    assert httpx.post(f"{base_url}/embeddings", json={"model": "hash-ngram-v1", "input": [1, 2]},
                      timeout=10).status_code == 400
    with pytest.raises(ValueError):
        build_app("episodic")


def test_the_review_log_names_each_review_and_its_operations() -> None:
    from starlette.testclient import TestClient

    from model_server.server import build_app

    client = TestClient(build_app())
    prompt = owui_review_prompt([], [("user", "My dog is Rex."), ("assistant", "Noted.")])
    client.post("/v1/chat/completions", headers={"X-OpenWebUI-User-Id": "u1"}, json={"messages": [
        {"role": "system", "content": memory_review.REVIEWER_SYSTEM}, {"role": "user", "content": prompt}]})
    client.post("/v1/chat/completions", json={"messages": [{"role": "user", "content": "My cat is Tom."}]})
    logged = client.get("/memtest/reviews", params={"user_id": "u1"}).json()["reviews"]
    assert [r["user_id"] for r in logged] == ["u1"]
    assert [(op["action"], op["content"]) for op in logged[0]["operations"]] == [("add", "My dog is Rex.")]
    assert logged[0]["memories_after"] == ["My dog is Rex."]
    assert client.get("/memtest/reviews", params={"user_id": "u2"}).json()["reviews"] == []


def test_memories_after_a_review_apply_its_replacements() -> None:
    prompt = owui_review_prompt([("m1", "context", "", "My car is red."), ("m2", "context", "", "My dog is Rex.")],
                                [("user", "My cat is Tom."), ("user", "Actually, my car is blue.")])
    operations = memory_review.review_operations(prompt)
    assert memory_review.memories_after(prompt, operations) == [
        "Actually, my car is blue.", "My dog is Rex.", "My cat is Tom."]


def test_a_chat_opened_again_does_not_undo_a_correction_made_elsewhere_since() -> None:
    """The turn under review decides; an older statement earlier in the transcript only fills a missing key."""
    prompt = owui_review_prompt([("m1", "context", "", "Actually, my car is blue.")],
                                [("user", "My car is red."), ("assistant", "Noted."), ("user", "My cat is Tom.")])
    assert memory_review.review_operations(prompt) == [
        {"action": "add", "type": "context", "path": "", "content": "My cat is Tom."}]


def test_the_newest_statement_wins_between_the_chat_and_a_memory_from_elsewhere() -> None:
    blue = language.parse_fact("Actually, my car is blue.")
    # an older chat opened again: the memory was written since, from another chat
    assert language.reply(["My car is red.", "Hello.", "What is my car?"], [blue]) == "Your car is blue."
    # just stated in this chat, and already the app's memory: the same answer
    green = language.parse_fact("Actually, my car is green.")
    assert language.reply(["Actually, my car is green.", "What is my car?"], [green]) == "Your car is green."
    # the memory holds what this chat said: the chat's later statement wins
    assert language.reply(["Actually, my car is blue.", "Hi.", "My car is grey.", "Hi.", "What is my car?"],
                          [blue]) == "Your car is grey."


# --- Tool calls: the model as a deterministic agent (Letta's agent loop) ----------------------------------------------
# Requests shaped like those Letta 0.16.8 sends (captured: /work/scratch/letta/results/samples): a system prompt, the
# tools with their JSON schemas, `parallel_tool_calls: false`, and after each call the tool's return wrapped as JSON.

LETTA_SYSTEM = ("<base_instructions>\nYou are a helpful self-improving agent with advanced memory.\n"
                "</base_instructions>\n<memory_blocks>\n<human>\n<value>\nThe user's name is Ana.\n</value>\n</human>\n"
                "</memory_blocks>")
V1_TOOLS = [
    {"type": "function", "function": {"name": "archival_memory_insert", "description": "Add to archival memory.",
                                      "parameters": {"type": "object", "properties": {
                                          "content": {"type": "string"},
                                          "tags": {"type": "array", "items": {"type": "string"}}},
                                          "required": ["content"]}}},
    {"type": "function", "function": {"name": "archival_memory_search", "description": "Search archival memory.",
                                      "parameters": {"type": "object", "properties": {
                                          "query": {"type": "string"}, "tags": {"type": "array"},
                                          "tag_match_mode": {"type": "string", "enum": ["any", "all"]},
                                          "top_k": {"type": "integer"}, "start_datetime": {"type": "string"}},
                                          "required": ["query"]}}},
    {"type": "function", "function": {"name": "conversation_search", "parameters": {
        "type": "object", "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}}, "required": []}}},
    {"type": "function", "function": {"name": "memory_insert", "parameters": {"type": "object", "properties": {
        "label": {"type": "string"}, "new_string": {"type": "string"}, "insert_line": {"type": "integer"}},
        "required": ["label", "new_string"]}}},
    {"type": "function", "function": {"name": "memory_replace", "parameters": {"type": "object", "properties": {
        "label": {"type": "string"}, "old_string": {"type": "string"}, "new_string": {"type": "string"}},
        "required": ["label", "old_string", "new_string"]}}},
]


def _memgpt(tool: dict) -> dict:
    """A memgpt_v2_agent's version of a tool: `thinking` first and required, `request_heartbeat` on all but
    send_message."""
    fn = tool["function"]
    params = fn["parameters"]
    props = {"thinking": {"type": "string"}, **params["properties"]}
    required = ["thinking", *params["required"]]
    if fn["name"] != "send_message":
        props["request_heartbeat"] = {"type": "boolean"}
        required.append("request_heartbeat")
    return {"type": "function", "function": {**fn, "parameters": {**params, "properties": props,
                                                                  "required": required}}}


SEND_MESSAGE = {"type": "function", "function": {"name": "send_message", "parameters": {
    "type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]}}}
V2_TOOLS = [_memgpt(t) for t in [*V1_TOOLS, SEND_MESSAGE]]
HEARTBEAT = json.dumps({"type": "heartbeat", "reason": "[This is an automated system message hidden from the user] "
                        "Continuing: continue tool rule.", "time": "2026-12-01 11:00:33 AM UTC+0000"}, indent=2)
LOGIN = json.dumps({"type": "login", "last_login": "Never (first login)", "time": "2026-12-01 11:00:22 AM UTC+0000"})


def tool_return(message: str | None) -> str:
    return json.dumps({"status": "OK", "message": message, "time": "2026-12-01 11:00:26 AM UTC+0000"}, indent=2)


def found(*memories: tuple[str, str]) -> str:
    """Letta's archival search return: the repr of a list of dicts, best match first."""
    return repr([{"id": f"passage-{n}", "timestamp": when, "content": text, "tags": []}
                 for n, (text, when) in enumerate(memories)])


@dataclass
class LettaLoop:
    """Letta's agent loop around the model server, as it runs a turn: each call is executed and its return added,
    memgpt agents get a heartbeat after each tool but the reply, the turn ends on plain content or the reply tool."""

    tools: list[dict]
    search_returns: str = "[]"
    messages: list[dict[str, Any]] = field(default_factory=lambda: [{"role": "system", "content": LETTA_SYSTEM}])
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    def turn(self, text: str, max_steps: int = 80) -> str:
        self.messages.append({"role": "user", "content": text})
        self.calls = []
        for _ in range(max_steps):
            step = server_answer(self.messages, self.tools)
            if step.call is None:
                self.messages.append({"role": "assistant", "content": step.content})
                return step.content or ""
            call = step.call.as_openai()
            assert self.messages[-1]["role"] != "assistant" or self.messages[-1].get("tool_calls")
            self.messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
            args = json.loads(call["function"]["arguments"])
            self.calls.append((step.call.name, args))
            result = {"archival_memory_search": self.search_returns, "send_message": "Sent message successfully."}
            self.messages.append({"role": "tool", "tool_call_id": call["id"],
                                  "content": tool_return(result.get(step.call.name, "None"))})
            reply = agent.toolbox(self.tools).reply
            if reply is not None and step.call.name == reply.name:
                return args[reply.text_parameter]
            if "request_heartbeat" in args:
                self.messages.append({"role": "user", "content": HEARTBEAT})
        raise AssertionError(f"the turn did not end within {max_steps} steps: {self.calls}")


def test_each_fact_stated_is_inserted_as_typed_one_call_at_a_time_then_confirmed() -> None:
    letta = LettaLoop(V1_TOOLS)
    reply = letta.turn("My city is Paris. Hello! Our dog is Rex!")
    assert letta.calls == [("archival_memory_insert", {"content": "My city is Paris."}),
                           ("archival_memory_insert", {"content": "Our dog is Rex!"})]
    assert reply == complete([{"role": "user", "content": "My city is Paris. Hello! Our dog is Rex!"}])
    assert reply == "Got it. I'll remember that your city is Paris and your dog is Rex."


def test_sixty_facts_in_one_message_are_sixty_inserts() -> None:
    letta = LettaLoop(V1_TOOLS)
    letta.turn(" ".join(f"My item {n} is value{n}." for n in range(60)))
    assert [args["content"] for _, args in letta.calls] == [f"My item {n} is value{n}." for n in range(60)]


def test_small_talk_calls_no_tool() -> None:
    letta = LettaLoop(V1_TOOLS)
    assert letta.turn("Hello there. How are you?") == "Noted." and letta.calls == []


def test_a_question_searches_once_for_it_with_many_results_then_answers_from_them() -> None:
    letta = LettaLoop(V1_TOOLS, found(("My order number is 4417.", "2026-12-01T11:00:25.742343+00:00"),
                                      ("Our dog is Rex!", "2026-12-01T11:00:20.000001+00:00")))
    assert letta.turn("What is my order number?") == "Your order number is 4417."
    assert letta.calls == [("archival_memory_search", {"query": "What is my order number?", "top_k": 50})]
    assert letta.turn("What is my car?") == "I don't remember your car."


def test_the_newest_memory_wins_whatever_the_search_ranks_first() -> None:
    letta = LettaLoop(V1_TOOLS, found(("My city is Paris.", "2026-12-01T10:00:00.000000+00:00"),
                                      ("Actually, my city is Rome.", "2026-12-01T11:00:00.000000+00:00")))
    assert letta.turn("Where is my city?") == "Your city is Rome."


def test_a_correction_told_in_this_conversation_beats_an_older_memory_from_another() -> None:
    """The conversation said Rome (stored since as the newest memory) long after another conversation said Paris:
    the older memory is not news from elsewhere."""
    letta = LettaLoop(V1_TOOLS)
    letta.turn("Actually, my city is Rome.")
    for n in range(5):
        letta.turn(f"Hello {n}.")
    letta.search_returns = found(("My city is Paris.", "2026-12-01T10:00:00.000000+00:00"),
                                 ("Actually, my city is Rome.", "2026-12-01T11:00:00.000000+00:00"))
    assert letta.turn("Where is my city?") == "Your city is Rome."


def test_a_correction_made_in_another_conversation_since_beats_this_conversations_statement() -> None:
    letta = LettaLoop(V1_TOOLS)
    letta.turn("My city is Paris.")
    letta.search_returns = found(("My city is Paris.", "2026-12-01T10:00:00+00:00"),
                                 ("Actually, my city is Rome.", "2026-12-01T11:00:00Z"))
    assert letta.turn("Where is my city?") == "Your city is Rome."


def test_the_conversation_answers_where_no_memory_holds_the_fact() -> None:
    letta = LettaLoop(V1_TOOLS)
    letta.turn("My locker code is 5150.")
    assert letta.turn("What is my locker code?") == "Your locker code is 5150."


def test_a_memgpt_agent_gets_its_reply_through_send_message_with_the_required_fields() -> None:
    letta = LettaLoop(V2_TOOLS)
    letta.messages += [{"role": "assistant", "content": None, "tool_calls": [{
        "id": "boot", "type": "function", "function": {"name": "send_message", "arguments": json.dumps(
            {"thinking": "Bootup sequence complete.", "message": "More human than human is our motto."})}}]},
        {"role": "tool", "tool_call_id": "boot", "content": tool_return(None)},
        {"role": "user", "content": LOGIN}]
    assert letta.turn("Our gate code is 12 34 #!") == "Got it. I'll remember that your gate code is 12 34 #."
    (insert_name, insert), (reply_name, reply) = letta.calls
    assert insert_name == "archival_memory_insert" and reply_name == "send_message"
    assert insert["content"] == "Our gate code is 12 34 #!" and insert["request_heartbeat"] is True
    assert set(insert) == {"thinking", "content", "request_heartbeat"} and insert["thinking"]
    assert set(reply) == {"thinking", "message"} and reply["message"].startswith("Got it.")
    # heartbeats and logins are Letta's, not the user's: after one the turn goes on from the user's message
    letta.search_returns = found(("Our gate code is 12 34 #!", "2026-12-01T11:00:33.173237+00:00"))
    assert letta.turn("Do you remember our gate code?") == "Your gate code is 12 34 #."
    assert [name for name, _ in letta.calls] == ["archival_memory_search", "send_message"]
    assert letta.turn("Thanks.") == "Noted." and [name for name, _ in letta.calls] == ["send_message"]


def test_tools_are_recognised_by_their_role_and_their_schema_not_only_by_lettas_names() -> None:
    tools = [{"type": "function", "function": {"name": name, "parameters": {
        "type": "object", "properties": {param: {"type": "string"}, "limit": {"type": "integer", "maximum": 20}},
        "required": [param]}}} for name, param in (("saveMemory", "text"), ("memory_lookup", "q"),
                                                   ("reply", "answer"))]
    letta = LettaLoop(tools, search_returns=json.dumps([{"content": "My pin is 0042.", "created_at": "2026-01-02"}]))
    assert letta.turn("My pin is 0042.") == "Got it. I'll remember that your pin is 0042."
    assert letta.calls == [("saveMemory", {"text": "My pin is 0042."}),
                           ("reply", {"answer": "Got it. I'll remember that your pin is 0042."})]
    assert letta.turn("What is my pin?") == "Your pin is 0042."
    assert letta.calls[0] == ("memory_lookup", {"q": "What is my pin?", "limit": 20})  # capped by the schema


def test_tools_it_cannot_give_a_text_are_not_used() -> None:
    """Open WebUI's search_memories has no required parameter: the request is answered as a plain chat."""
    tools = [{"type": "function", "function": {"name": "search_memories", "parameters": {
        "type": "object", "properties": {"query": {"type": "string"}, "count": {"type": "integer"}}}}},
             {"type": "function", "function": {"name": "get_weather", "parameters": {
                 "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
    messages = [{"role": "user", "content": "My pin is 0042."}]
    assert server_answer(messages, tools) == Step(content="Got it. I'll remember that your pin is 0042.")


def test_search_returns_are_read_as_literals_never_run() -> None:
    tricky = "Note: my vet's name is \"Paws\" {n} \\ 🐾."
    returned = found((tricky, "2026-12-01T11:00:00+00:00"), ("__import__('os').system('false')", "2026-12-01"))
    assert agent.found_memories(tool_return(returned)) == [tricky, "__import__('os').system('false')"]
    cut = returned[:returned.rindex("{'id'") + 20] + "... [NOTE: function output was truncated since it exceeded"
    assert agent.found_memories(tool_return(cut)) == [tricky]  # Letta's limit on a tool's output keeps whole items
    assert agent.found_memories(tool_return("None")) == [] and agent.found_memories("not a list") == []


def test_the_same_request_gets_the_same_call() -> None:
    messages = [{"role": "system", "content": LETTA_SYSTEM}, {"role": "user", "content": "My pin is 0042."}]
    assert server_answer(messages, V1_TOOLS) == server_answer(messages, V1_TOOLS)
    assert server_answer(messages, V1_TOOLS).call.id != server_answer(messages + [
        {"role": "user", "content": "My pin is 0043."}], V1_TOOLS).call.id


def test_tool_calls_over_http_plain_and_streamed(base_url: str) -> None:
    body = {"model": "memtest-assistant", "messages": [{"role": "user", "content": "Our gate code is 12 34 #!"}],
            "tools": V2_TOOLS, "tool_choice": "required", "parallel_tool_calls": False}
    plain = httpx.post(f"{base_url}/chat/completions", json=body, timeout=10).json()["choices"][0]
    assert plain["finish_reason"] == "tool_calls" and plain["message"]["content"] is None
    (call,) = plain["message"]["tool_calls"]
    assert call["type"] == "function" and call["function"]["name"] == "archival_memory_insert"
    assert json.loads(call["function"]["arguments"]) == {"thinking": agent.THOUGHT,
                                                          "content": "Our gate code is 12 34 #!",
                                                          "request_heartbeat": True}
    streamed = {**body, "stream": True, "stream_options": {"include_usage": True}}
    with httpx.stream("POST", f"{base_url}/chat/completions", json=streamed, timeout=10) as resp:
        lines = [line for line in resp.iter_lines() if line]
    assert lines[-1] == "data: [DONE]"
    chunks = [json.loads(line.removeprefix("data: ")) for line in lines[:-1]]
    deltas = [c["choices"][0] for c in chunks if c["choices"]]
    parts = [t for d in deltas for t in d["delta"].get("tool_calls", [])]
    assert parts[0]["id"] == call["id"] and parts[0]["function"]["name"] == "archival_memory_insert"
    assert len(parts) > 2 and {p["index"] for p in parts} == {0}
    assert "".join(p["function"].get("arguments", "") for p in parts) == call["function"]["arguments"]
    assert deltas[-1]["finish_reason"] == "tool_calls" and chunks[-1]["usage"]["total_tokens"] > 0



# -- the embedding tool: the server's vectors on the command line (targets whose embedder is the model server) --------

def _embed_tool(lines: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "model_server.embed_tool", *args], input=lines,
                          capture_output=True, text=True, timeout=60, cwd=Path(__file__).resolve().parent.parent)


def test_the_embedding_tool_gives_the_servers_own_vectors_and_none_for_a_text_without_a_word() -> None:
    texts = ["My dog is Rex.", ";)", "東京"]
    proc = _embed_tool("".join(json.dumps({"text": t}) + "\n" for t in texts), "--embedder", "hash-ngram-v2",
                       "--encoding", "base64")
    assert proc.returncode == 0, proc.stderr
    out = [json.loads(line)["embedding_f32"] for line in proc.stdout.splitlines()]
    assert out[1] is None
    for text, encoded in zip((texts[0], texts[2]), (out[0], out[2]), strict=True):
        vector = np.frombuffer(base64.b64decode(encoded), dtype="<f4")
        assert np.allclose(vector, embeddings.embed(text, "hash-ngram-v2"), atol=1e-7)


@pytest.mark.parametrize(("lines", "args", "says"), [
    ('{"text": "a"}\n', ("--embedder", "hash-ngram-v9"),
     "unknown embedding model 'hash-ngram-v9'; the model server has hash-ngram-v1, hash-ngram-v2, "
     "text-embedding-3-small"),
    ('{"text": "a"}\nnot json\n', ("--embedder", "hash-ngram-v1"), "stdin line 2 is not a JSON object with a text"),
])
def test_the_embedding_tool_refuses_bad_input_in_one_line(lines: str, args: tuple[str, ...], says: str) -> None:
    proc = _embed_tool(lines, *args)
    assert proc.returncode == 2 and proc.stderr.strip().splitlines() == [f"ERROR: {says}"]


def test_a_key_that_begins_with_a_dash_starts_the_server(tmp_path: Path) -> None:
    # secrets.token_urlsafe draws a key beginning with "-" once in 64: given as its own argument, argparse took it for
    # an option and the server never started (CI at e9ed59c: "argument --api-key: expected one argument")
    from model_server.client import start_model_server

    server = start_model_server(tmp_path / "model.log", api_key="-k3y")
    try:
        body = {"model": "memtest-assistant", "messages": [{"role": "user", "content": "My pin is 0042."}]}
        url = f"{server.base_url}/chat/completions"
        assert httpx.post(url, json=body, headers={"Authorization": "Bearer -k3y"}, timeout=10).status_code == 200
        assert httpx.post(url, json=body, headers={"Authorization": "Bearer k3y"}, timeout=10).status_code == 401
    finally:
        server.stop()
