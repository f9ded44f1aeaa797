"""The HTTP side: OpenAI's /v1/models, /v1/chat/completions (plain and SSE, content or a tool call where the app
offers tools: see `agent`) and /v1/embeddings.

As OpenAI does, it answers a chat model it does not serve with 404 `model_not_found` (it serves `memtest-assistant`
and the names an app's driver starts it with: the model names that app is configured with), and, started with an API
key, a request without that key as its bearer with 401 `invalid_api_key`: an app that asks for another model than
its settings say, or forgets its key, is told so, as it would be in production.

Stateless: every answer derives from the request alone, so apps can be restarted, migrated or run in parallel
against one server and the same conversation always gets the same reply. The one thing it keeps is a log of the
memory reviews it answered (GET /memtest/reviews?user_id=...), which no answer reads: apps write memories after a
turn, on their own time, and the suite waits for those writes through it.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from collections.abc import AsyncIterator
from typing import Any

import numpy as np
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from harness.vocabulary import language
from model_server import agent, embeddings, fact_manager, memory_review
from model_server.agent import Step, message_text

CHAT_MODEL = "memtest-assistant"
MEMORY_TYPES = ("context", "user")


def _error(status: int, message: str, code: str) -> JSONResponse:
    return JSONResponse({"error": {"message": message, "type": "invalid_request_error", "code": code}},
                        status_code=status)


def answer(messages: list[dict[str, Any]], tools: list[Any] | None = None, memory_type: str = "context") -> Step:
    """The model's response to a chat request: a task prompt's answer, an agent's next step where the app offers
    tools it uses (`agent`), or a chat reply."""
    system = [message_text(m) for m in messages if m.get("role") in ("system", "developer")]
    user = [message_text(m) for m in messages if m.get("role") == "user"]
    if memory_review.is_review_prompt(system, user):
        return Step(content=memory_review.review_answer(user[-1] if user else "", memory_type))
    task = memory_review.task_answer(user, system)
    if task is None:
        task = fact_manager.task_answer(system + user)
    if task is not None:
        return Step(content=task)
    retrieved, user = fact_manager.retrieved_memories(user)  # memories an app hands over in a user message
    given = memory_review.memories_from_system(system + retrieved)
    step = agent.act(messages, tools, given) if tools else None
    return step or Step(content=language.reply(user, given))


def complete(messages: list[dict[str, Any]], memory_type: str = "context") -> str:
    """The assistant's answer to a chat request's messages (no tools offered)."""
    return answer(messages, None, memory_type).content or ""


def _pieces(text: str) -> list[str]:
    """Stream a reply in several deltas, as real models do, so clients must join them (word by word)."""
    out: list[str] = []
    for word in text.split(" "):
        out.append(word if not out else " " + word)
    return out or [""]


async def models(request: Request) -> JSONResponse:
    data = [{"id": name, "object": "model", "created": 0, "owned_by": "memtest"}
            for name in (*request.app.state.chat_models, *embeddings.MODELS)]
    return JSONResponse({"object": "list", "data": data})


async def health(_: Request) -> JSONResponse:
    return JSONResponse({"status": "ok"})


async def _json_body(request: Request) -> dict[str, Any] | None:
    try:
        body = await request.json()
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None
    return body if isinstance(body, dict) else None


async def chat_completions(request: Request) -> Response:
    body = await _json_body(request)
    if body is None or not isinstance(body.get("messages"), list):
        return _error(400, "the body must be a JSON object with a list of messages", "invalid_request")
    model = str(body.get("model") or CHAT_MODEL)
    if model not in request.app.state.chat_models:
        known = ", ".join(request.app.state.chat_models)
        return _error(404, f"The model {model!r} does not exist; known: {known}", "model_not_found")
    messages = [m for m in body["messages"] if isinstance(m, dict)]
    offered = body.get("tools") if isinstance(body.get("tools"), list) else None
    tools = offered if request.app.state.use_tools else None
    step = answer(messages, tools, request.app.state.memory_type)
    text, call = step.content or "", step.call
    _log_review(request, messages, text)
    # Deterministic id: the same request gets the same response, byte for byte apart from `created`.
    digest = hashlib.blake2b(json.dumps(messages, sort_keys=True).encode(), digest_size=12).hexdigest()
    ident, created = f"chatcmpl-{digest}", int(time.time())
    said = call.as_openai()["function"]["arguments"] if call else text
    prompt_tokens = sum(len(message_text(m).split()) for m in messages)
    usage = {"prompt_tokens": prompt_tokens, "completion_tokens": len(said.split()),
             "total_tokens": prompt_tokens + len(said.split())}
    finish = "tool_calls" if call else "stop"
    if not body.get("stream"):
        message: dict[str, Any] = {"role": "assistant", "content": text}
        if call:
            message = {"role": "assistant", "content": None, "tool_calls": [call.as_openai()]}
        return JSONResponse({
            "id": ident, "object": "chat.completion", "created": created, "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}], "usage": usage,
        })
    include_usage = bool((body.get("stream_options") or {}).get("include_usage"))

    def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> str:
        payload = {"id": ident, "object": "chat.completion.chunk", "created": created, "model": model,
                   "choices": [{"index": 0, "delta": delta, "finish_reason": finish}], **extra}
        return f"data: {json.dumps(payload, ensure_ascii=False)}\n\n"

    async def events() -> AsyncIterator[str]:
        if call:
            # As OpenAI streams a call: its id and name first, then the arguments in pieces to be joined.
            yield chunk({"role": "assistant", "content": None})
            yield chunk({"tool_calls": [{"index": 0, "id": call.id, "type": "function",
                                         "function": {"name": call.name, "arguments": ""}}]})
            for piece in _pieces(said):
                yield chunk({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]})
        else:
            yield chunk({"role": "assistant", "content": ""})
            for piece in _pieces(text):
                yield chunk({"content": piece})
        yield chunk({}, finish)
        if include_usage:
            payload = {"id": ident, "object": "chat.completion.chunk", "created": created, "model": model,
                       "choices": [], "usage": usage}
            yield f"data: {json.dumps(payload)}\n\n"
        yield "data: [DONE]\n\n"

    return StreamingResponse(events(), media_type="text/event-stream", headers={"Cache-Control": "no-cache"})


REVIEW_LOG_LIMIT = 10_000


def _log_review(request: Request, messages: list[dict[str, Any]], answer: str) -> None:
    system = [message_text(m) for m in messages if m.get("role") in ("system", "developer")]
    user = [message_text(m) for m in messages if m.get("role") == "user"]
    if not memory_review.is_review_prompt(system, user):
        return
    log: list[dict[str, Any]] = request.app.state.reviews
    operations = json.loads(answer).get("operations", [])
    # Open WebUI names the user it asks for with ENABLE_FORWARD_USER_INFO_HEADERS=true.
    log.append({"user_id": request.headers.get("x-openwebui-user-id", ""), "operations": operations,
                "memories_after": memory_review.memories_after(user[-1], operations)})
    del log[:-REVIEW_LOG_LIMIT]


async def reviews(request: Request) -> JSONResponse:
    user_id = request.query_params.get("user_id")
    log = request.app.state.reviews
    return JSONResponse({"reviews": [r for r in log if user_id is None or r["user_id"] == user_id]})


async def create_embeddings(request: Request) -> JSONResponse:
    body = await _json_body(request)
    if body is None:
        return _error(400, "the body must be a JSON object", "invalid_request")
    name = body.get("model")
    if name not in embeddings.MODELS:
        known = ", ".join(embeddings.MODELS)
        return _error(404, f"unknown embedding model {name!r}; known: {known}", "model_not_found")
    texts = body.get("input")
    if isinstance(texts, str):
        texts = [texts]
    if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
        return _error(400, "input must be a string or a list of strings", "invalid_request")
    dims = body.get("dimensions")
    if dims is not None and (isinstance(dims, bool) or not isinstance(dims, int) or dims < 1):
        return _error(400, "dimensions must be a whole number above 0", "invalid_request")
    as_base64 = body.get("encoding_format") == "base64"  # the openai Python client asks for base64 by default
    data = []
    for index, text in enumerate(texts):
        vector: Any = embeddings.embed(text, name, dims)
        if as_base64:
            vector = base64.b64encode(np.asarray(vector, dtype="<f4").tobytes()).decode()
        data.append({"object": "embedding", "index": index, "embedding": vector})
    tokens = sum(len(t.split()) for t in texts)
    return JSONResponse({"object": "list", "data": data, "model": name,
                         "usage": {"prompt_tokens": tokens, "total_tokens": tokens}})


class _KeyCheck:
    """401 `invalid_api_key` for an OpenAI route (/v1/...) asked without `Authorization: Bearer <key>`."""

    def __init__(self, app: Any, key: str) -> None:
        self.app, self.key = app, key

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["path"].startswith("/v1/"):
            given = dict(scope["headers"]).get(b"authorization", b"").decode("latin-1")
            if not hmac.compare_digest(given.encode(), f"Bearer {self.key}".encode()):
                said = "a missing API key" if not given else "an incorrect API key"
                await _error(401, f"You gave {said}: send Authorization: Bearer <the key>", "invalid_api_key")(
                    scope, receive, send)
                return
        await self.app(scope, receive, send)


def build_app(memory_type: str = "context", use_tools: bool = True, chat_models: tuple[str, ...] = (),
              api_key: str | None = None) -> Starlette:
    """The server's app; `memory_type`: the type ("context" or "user") of memories a review adds in Open WebUI;
    `use_tools` False: a chat model that never calls the tools an app offers (the memory under test is then the
    app's own, not written by the model's calls); `chat_models`: the names it answers besides `CHAT_MODEL`;
    `api_key`: the bearer every /v1 route then requires."""
    if memory_type not in MEMORY_TYPES:
        raise ValueError(f"memory_type must be one of {MEMORY_TYPES}, not {memory_type!r}")
    app = Starlette(routes=[
        Route("/health", health),
        Route("/v1/models", models),
        Route("/v1/chat/completions", chat_completions, methods=["POST"]),
        Route("/v1/embeddings", create_embeddings, methods=["POST"]),
        Route("/memtest/reviews", reviews),
    ])
    app.state.memory_type = memory_type
    app.state.use_tools = use_tools
    app.state.chat_models = tuple(dict.fromkeys((CHAT_MODEL, *chat_models)))
    app.state.reviews = []
    if api_key:
        app.add_middleware(_KeyCheck, key=api_key)
    return app
