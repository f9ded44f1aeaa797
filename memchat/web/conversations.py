"""A user's conversations and their turns: each turn answered (what was recalled for it, and what the page is to
remember of it)."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from memchat import assistant
from memchat.accounts import User
from memchat.web.http import Web, error, parse_json, text_field


def routes(web: Web) -> list[BaseRoute]:
    state, settings, api = web.state, web.settings, web.api

    def list_conversations(request: Request, user: User, body: bytes) -> Response:
        return JSONResponse({"conversations": [c.as_json() for c in state.conversations.list(user.id)]})

    def create_conversation(request: Request, user: User, body: bytes) -> Response:
        data = parse_json(body)
        title = text_field(data, "title", required=False, limit=200)
        conv = state.conversations.create(user.id, title, state.clock.now())
        return JSONResponse({"conversation": conv.as_json()}, status_code=201)

    def list_messages(request: Request, user: User, body: bytes) -> Response:
        conv = state.conversations.get(user.id, request.path_params["cid"])
        if conv is None:
            return error(404, "conversation not found")
        return JSONResponse({"messages": [m.as_json() for m in state.conversations.messages(conv.id)]})

    def post_message(request: Request, user: User, body: bytes) -> Response:
        data = parse_json(body)
        text = text_field(data, "text")
        # Writing into a conversation always needs its owner, even where reading has the IDOR fault.
        conv = state.conversations.get(user.id, request.path_params["cid"])
        if conv is None or conv.user_id != user.id:
            return error(404, "conversation not found")
        history = state.conversations.messages(conv.id)
        now = state.clock.now()
        memory_on = state.accounts.memory_enabled(user.id)
        # Recall includes this conversation: a memory of it may be newer than what another conversation holds.
        skip = conv.id if settings.has("long-conversation-forgets") else None
        asked = assistant.asked_key(text)
        # Memory off: nothing remembered is recalled (the conversation's own turns still answer: they are no memory).
        recalled = []
        if asked and (memory_on or settings.has("memory-off-still-recalls")):
            recalled = state.memories.search(user.id, text, now, exclude_conversation=skip, fact_key=asked)
        turn = assistant.respond(text, history, recalled, settings)
        message = state.conversations.add(conv, "user", text, now)
        reply = state.conversations.add(conv, "assistant", turn.reply, state.clock.now())
        # Memory off: the page is told to remember nothing of this turn.
        remember = turn.remember if web.writes_allowed(memory_on) else []
        return JSONResponse({"message": message.as_json(), "reply": reply.as_json(),
                             "recalled": [r.as_json() for r in recalled], "remember": remember})

    def delete_conversation(request: Request, user: User, body: bytes) -> Response:
        if not state.conversations.delete(user.id, request.path_params["cid"], state.clock.now()):
            return error(404, "conversation not found")
        return Response(status_code=204)

    return [
        Route("/api/conversations", api(list_conversations), methods=["GET"]),
        Route("/api/conversations", api(create_conversation), methods=["POST"]),
        Route("/api/conversations/{cid}", api(delete_conversation), methods=["DELETE"]),
        Route("/api/conversations/{cid}/messages", api(list_messages), methods=["GET"]),
        Route("/api/conversations/{cid}/messages", api(post_message), methods=["POST"]),
    ]
