"""Signing in and out through the API, who is signed in, and the user's one setting (memory on or off)."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from memchat.accounts import User
from memchat.sign_ins import LOCKED_OUT
from memchat.web.http import COOKIE, BadRequest, Web, error, parse_json, text_field


def routes(web: Web) -> list[BaseRoute]:
    state, api = web.state, web.api

    def api_login(request: Request, _: None, body: bytes) -> Response:
        data = parse_json(body)
        user, refusal = web.sign_in(request, text_field(data, "email"), text_field(data, "password"))
        if user is None:
            return error(429, refusal) if refusal == LOCKED_OUT else error(401, "wrong email or password")
        response = JSONResponse({"user": user.as_json()})
        web.set_session(response, user)
        return response

    def api_logout(request: Request, user: User, body: bytes) -> Response:
        state.accounts.close_session(request.cookies.get(COOKIE, ""))
        response = JSONResponse({})
        response.delete_cookie(COOKIE, path="/")
        return response

    def api_me(request: Request, user: User, body: bytes) -> Response:
        return JSONResponse({"user": user.as_json()})

    def get_settings(request: Request, user: User, body: bytes) -> Response:
        return JSONResponse({"settings": {"memory": state.accounts.memory_enabled(user.id)}})

    def put_settings(request: Request, user: User, body: bytes) -> Response:
        data = parse_json(body)
        unknown = sorted(set(data) - {"memory"})
        if unknown:
            raise BadRequest(400, f"unknown setting '{unknown[0]}'; the one setting is 'memory'")
        if not isinstance(data.get("memory"), bool):
            raise BadRequest(400, "'memory' must be true or false")
        return JSONResponse({"settings": {"memory": state.accounts.set_memory_enabled(user.id, data["memory"])}})

    return [
        Route("/api/login", api(api_login, auth=False), methods=["POST"]),
        Route("/api/logout", api(api_logout), methods=["POST"]),
        Route("/api/me", api(api_me)),
        Route("/api/settings", api(get_settings), methods=["GET"]),
        Route("/api/settings", api(put_settings), methods=["PUT"]),
    ]
