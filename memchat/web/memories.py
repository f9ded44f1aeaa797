"""A user's long-term memories: written by the page after each turn, listed, searched, and taken back (edited,
deleted, cleared)."""

from __future__ import annotations

from datetime import datetime, timedelta

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from memchat.accounts import User
from memchat.web.http import MAX_TEXT, MAX_WRITE_ITEMS, BadRequest, Web, error, parse_json, text_field


def routes(web: Web) -> list[BaseRoute]:
    state, settings, api = web.state, web.settings, web.api

    def owner_of_write(user: User, data: dict) -> str:
        """The session's user; with the fault memory-owner-from-body, whoever the body names."""
        named = data.get("user_id")
        return named if settings.has("memory-owner-from-body") and isinstance(named, str) and named else user.id

    def write_memories(request: Request, user: User, body: bytes) -> Response:
        data = parse_json(body)
        owner = owner_of_write(user, data)
        items = data.get("items")
        if not isinstance(items, list) or not items or len(items) > MAX_WRITE_ITEMS:
            raise BadRequest(400, f"'items' must be a list of 1 to {MAX_WRITE_ITEMS} strings")
        texts = [text_field({"item": t}, "item") for t in items]
        cid = data.get("conversation_id")
        if cid is not None:
            conv = state.conversations.get(owner, cid) if isinstance(cid, str) else None
            if conv is None or conv.user_id != owner:
                return error(404, "conversation not found")
        told = told_when(data, cid)
        if told is None:
            return error(404, "turn not found in this conversation")
        # Refused while memory is off, e.g. a page's write of a turn told before it was turned off.
        if not web.writes_allowed(state.accounts.memory_enabled(owner)):
            return error(409, "memory is off: nothing is remembered until it is turned on again")
        ids = state.memories.write(owner, cid, texts, told)
        return JSONResponse({"stored": ids}, status_code=201)

    def told_when(data: dict, cid: str | None) -> datetime | None:
        """When a write's items were told: now, or, for a write naming its turn, the turn's time plus the position of
        its first item in the turn's `remember`. A page's writes leave one after the other, but the one a beacon takes
        at pagehide may overtake the fetch still on its way: dated by arrival, a long message's facts would be
        listed out of the order they were told in."""
        turn, first = data.get("turn"), data.get("first", 0)
        if turn is None:
            return state.clock.now()
        # A message of MAX_TEXT characters teaches fewer facts than it has characters.
        if type(turn) is not int or type(first) is not int or not 0 <= first < MAX_TEXT or cid is None:
            raise BadRequest(400, f"'turn' must be a message id of 'conversation_id' and 'first' an integer"
                                  f" from 0 to {MAX_TEXT - 1}")
        told_at = state.conversations.told_at(cid, turn)
        return None if told_at is None else told_at + timedelta(microseconds=first)

    def list_memories(request: Request, user: User, body: bytes) -> Response:
        return JSONResponse({"memories": state.memories.list(user.id, state.clock.now())})

    def search_memories(request: Request, user: User, body: bytes) -> Response:
        query = request.query_params.get("q", "")
        if not query.strip() or len(query) > MAX_TEXT:
            raise BadRequest(400, "'q' must be a non-empty string")
        try:
            k = int(request.query_params.get("k", settings.top_k))
        except ValueError:
            raise BadRequest(400, "'k' must be a whole number") from None
        if not 1 <= k <= 100:
            raise BadRequest(400, "'k' must be between 1 and 100")
        hits = state.memories.search(user.id, query, state.clock.now(), k=k)
        return JSONResponse({"results": [h.as_json() for h in hits]})

    # -- what users take back ---------------------------------------------------------------------------------------
    def edit_memory(request: Request, user: User, body: bytes) -> Response:
        data = parse_json(body)
        text = text_field(data, "text")
        memory = state.memories.edit(owner_of_write(user, data), request.path_params["mid"], text, state.clock.now())
        if memory is None:
            return error(404, "memory not found")
        return JSONResponse({"memory": memory})

    def delete_memory(request: Request, user: User, body: bytes) -> Response:
        if not state.memories.delete(user.id, request.path_params["mid"], state.clock.now()):
            return error(404, "memory not found")
        return Response(status_code=204)

    def clear_memories(request: Request, user: User, body: bytes) -> Response:
        return JSONResponse({"deleted": state.memories.clear(user.id, state.clock.now())})

    return [
        Route("/api/memories", api(list_memories), methods=["GET"]),
        Route("/api/memories", api(write_memories), methods=["POST"]),
        Route("/api/memories", api(clear_memories), methods=["DELETE"]),
        Route("/api/memories/search", api(search_memories)),
        Route("/api/memories/{mid}", api(edit_memory), methods=["PUT"]),
        Route("/api/memories/{mid}", api(delete_memory), methods=["DELETE"]),
    ]
