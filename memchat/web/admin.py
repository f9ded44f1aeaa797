"""The operators' API, behind the admin token: users created, imported and deleted, and the settable clock."""

from __future__ import annotations

from datetime import datetime

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from memchat.accounts import MAX_IMPORT, AccountError, NewUser, check_new_user
from memchat.web.http import MAX_IMPORT_BODY, BadRequest, Web, error, parse_json, text_field


def routes(web: Web) -> list[BaseRoute]:
    state, api = web.state, web.api

    def admin_create_user(request: Request, _: None, body: bytes) -> Response:
        data = parse_json(body)
        uid = data.get("id")
        if uid is not None and not isinstance(uid, str):
            raise BadRequest(400, "'id' must be a string")
        user = state.accounts.create(text_field(data, "email", limit=254), text_field(data, "password", limit=200),
                                     uid)
        return JSONResponse({"user": user.as_json()}, status_code=201)

    def import_entry(i: int, entry: object) -> NewUser:
        """users[i] of an import, by the rules of admin_create_user; a bad one is a 400 naming its index."""
        if not isinstance(entry, dict):
            raise BadRequest(400, f"users[{i}] must be an object with 'id', 'email' and optionally 'password'")
        try:
            uid = text_field(entry, "id", limit=64)
            email = text_field(entry, "email", limit=254)
            password = text_field(entry, "password", limit=200) if entry.get("password") is not None else None
            return NewUser(uid, check_new_user(email, password, uid), password)
        except (BadRequest, AccountError) as e:
            raise BadRequest(400, f"users[{i}]: {e}") from None

    def admin_import_users(request: Request, _: None, body: bytes) -> Response:
        entries = parse_json(body).get("users")
        if not isinstance(entries, list) or not 1 <= len(entries) <= MAX_IMPORT:
            raise BadRequest(400, f"'users' must be a list of 1 to {MAX_IMPORT} users")
        users = [import_entry(i, e) for i, e in enumerate(entries)]
        seen_ids: dict[str, int] = {}
        seen_emails: dict[str, int] = {}
        for i, user in enumerate(users):
            for seen, key, what in ((seen_ids, user.id, f"id '{user.id}'"),
                                    (seen_emails, user.email.lower(), f"email '{user.email}'")):
                if key in seen:
                    raise BadRequest(400, f"users[{i}]: {what} is given twice in the request (also users[{seen[key]}])")
                seen[key] = i
        return JSONResponse({"created": state.accounts.import_users(users)}, status_code=201)

    def admin_delete_user(request: Request, _: None, body: bytes) -> Response:
        if not state.accounts.delete(request.path_params["uid"]):
            return error(404, "user not found")
        return JSONResponse({"deleted": True})

    def admin_clock(request: Request, _: None, body: bytes) -> Response:
        if not state.clock.settable:
            return error(409, "the clock is the wall clock; start with --clock settable")
        data = parse_json(body)
        if "now" in data:
            try:
                now = state.clock.set(datetime.fromisoformat(str(data["now"])))
            except ValueError:
                raise BadRequest(400, "'now' must be an ISO-8601 time") from None
        elif isinstance(data.get("advance_days"), (int, float)):
            now = state.clock.advance(float(data["advance_days"]))
        else:
            raise BadRequest(400, "give 'now' (ISO-8601) or 'advance_days' (a number)")
        return JSONResponse({"now": now.isoformat()})

    return [
        Route("/api/admin/users", api(admin_create_user, admin=True), methods=["POST"]),
        Route("/api/admin/users/import", api(admin_import_users, admin=True, max_body=MAX_IMPORT_BODY),
              methods=["POST"]),
        Route("/api/admin/users/{uid}", api(admin_delete_user, admin=True), methods=["DELETE"]),
        Route("/api/admin/clock", api(admin_clock, admin=True), methods=["POST"]),
    ]
