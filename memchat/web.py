"""The HTTP face of the app: pages, the JSON API used by the UI and by test seeding, and health."""

from __future__ import annotations

import hmac
import json
from datetime import datetime, timedelta
from pathlib import Path

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from memchat import __version__, assistant, html_pages
from memchat.accounts import MAX_IMPORT, SESSION_DAYS, AccountError, NewUser, User, check_new_user
from memchat.app_state import AppState
from memchat.sign_ins import LOCKED_OUT

COOKIE = "memchat_session"
MAX_BODY = 64 * 1024
MAX_IMPORT_BODY = 64 * 1024 * 1024  # 100,000 users of a long e-mail and password each
MAX_TEXT = 4000
MAX_WRITE_ITEMS = 50  # memories one write request may hold
# Faults whose regressions live in the window of a write not sent yet hold the writes back until the page leaves the
# conversation (an event, not a timer: on a slow machine a timer's window closes before the test reaches it).
# context-dropped's too: a prompt without the conversation is covered by recall once the turn's memory has landed, so
# users see it while the memory is late, as in apps that write memories later (a background reviewer).
HELD_BACK_WRITE_FAULTS = ("write-held-back", "unload-write-lost", "write-race", "sign-out-write-lost",
                          "context-dropped")


class BadRequest(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


async def read_body(request: Request, limit: int = MAX_BODY) -> bytes:
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > limit:
        raise BadRequest(413, f"body larger than {limit} bytes")
    chunks, size = [], 0
    async for chunk in request.stream():
        chunks.append(chunk)
        size += len(chunk)
        if size > limit:
            raise BadRequest(413, f"body larger than {limit} bytes")
    return b"".join(chunks)


def parse_json(body: bytes) -> dict:
    try:
        data = json.loads(body or b"{}")
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise BadRequest(400, "body is not valid JSON") from None
    if not isinstance(data, dict):
        raise BadRequest(400, "body must be a JSON object")
    return data


def text_field(data: dict, name: str, required: bool = True, limit: int = MAX_TEXT) -> str:
    value = data.get(name)
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value.strip()):
        raise BadRequest(400, f"'{name}' must be a non-empty string")
    if len(value) > limit:
        raise BadRequest(400, f"'{name}' is longer than {limit} characters")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise BadRequest(400, f"'{name}' is not valid Unicode text (it holds half of a character)") from None
    return value


def build_app(state: AppState) -> Starlette:
    settings = state.settings

    # Sessions live on the app's clock, like memories: a test that moves the clock sees them end when they should.
    def current_user(request: Request) -> User | None:
        token = request.cookies.get(COOKIE)
        return state.accounts.user_for_session(token, state.clock.now()) if token else None

    def set_session(response: Response, user: User) -> None:
        token = state.accounts.open_session(user, state.clock.now())
        persistent = not settings.has("session-not-persistent")
        response.set_cookie(COOKIE, token, httponly=True, samesite="lax", path="/",
                            max_age=SESSION_DAYS * 24 * 3600 if persistent else None)

    def sign_in(request: Request, email: str, password: str) -> tuple[User | None, str]:
        """The user, or why not: throttled by account and client address (memchat.sign_ins) before the password is
        even checked, so that a locked-out address learns nothing from trying."""
        address = request.client.host if request.client else ""
        now = state.clock.now()
        if state.sign_ins.locked(email, address, now):
            return None, LOCKED_OUT
        user = state.accounts.authenticate(email, password)
        if user is None:
            state.sign_ins.failed(email, address, now)
            return None, "Wrong email or password."
        state.sign_ins.succeeded(email, address)
        return user, ""

    def admin_denied(request: Request) -> JSONResponse | None:
        if not settings.admin_token:
            return error(404, "not found")
        given = request.headers.get("authorization", "")
        if not hmac.compare_digest(given.encode(), f"Bearer {settings.admin_token}".encode()):
            return error(401, "admin token required")
        return None

    def api(handler, admin: bool = False, auth: bool = True, max_body: int = MAX_BODY):
        async def endpoint(request: Request) -> Response:
            try:
                body = await read_body(request, max_body)
                return await run_in_threadpool(guarded, request, body)
            except BadRequest as e:
                return error(e.status, str(e))

        def guarded(request: Request, body: bytes) -> Response:
            # Database work runs on worker threads, so one slow request never stalls the others.
            try:
                if admin:
                    return admin_denied(request) or handler(request, None, body)
                user = current_user(request) if auth else None
                if auth and user is None:
                    return error(401, "log in first")
                return handler(request, user, body)
            except BadRequest as e:
                return error(e.status, str(e))
            except AccountError as e:
                return error(409 if "exists" in str(e) else 400, str(e))
        return endpoint

    # -- pages -------------------------------------------------------------------------------------------------------
    def login_form(request: Request) -> Response:
        if current_user(request):
            return RedirectResponse("/", status_code=303)
        return HTMLResponse(html_pages.login_page())

    async def login_submit(request: Request) -> Response:
        form = await request.form()
        email, password = str(form.get("email", "")), str(form.get("password", ""))
        user, refusal = await run_in_threadpool(sign_in, request, email, password)
        if user is None:
            status = 429 if refusal == LOCKED_OUT else 401
            return HTMLResponse(html_pages.login_page(refusal, email), status_code=status)
        response = RedirectResponse("/", status_code=303)
        await run_in_threadpool(set_session, response, user)
        return response

    def logout(request: Request) -> Response:
        token = request.cookies.get(COOKIE)
        if token:
            state.accounts.close_session(token)
        response = RedirectResponse("/login", status_code=303)
        response.delete_cookie(COOKIE, path="/")
        return response

    def front_end() -> dict:
        held_back = any(settings.has(f) for f in HELD_BACK_WRITE_FAULTS)
        return {"holdWrites": held_back,
                "flushOn": "beforeunload" if settings.has("unload-write-lost") else "pagehide",
                "writeQueue": "latest-only" if settings.has("write-race") else "append",
                "flushBeforeLogout": not settings.has("sign-out-write-lost"),
                "titleByCharacters": not settings.has("title-splits-emoji"),
                "writeBatch": 0 if settings.has("many-facts-lost") else MAX_WRITE_ITEMS,
                "enterSendsWhileComposing": settings.has("ime-enter-sends"),
                "pauseWritesAfterError": settings.has("writes-stall-after-error"),
                "resendFailedSends": settings.has("failed-send-resent")}

    def memories_front_end() -> dict:
        return {"deleteOptimistically": settings.has("deleted-memory-returns"),
                "saveMemorySetting": not settings.has("memory-setting-not-saved")}

    def chat(request: Request) -> Response:
        user = current_user(request)
        if user is None:
            return RedirectResponse("/login", status_code=303)
        current, messages = None, []
        if "cid" in request.path_params:
            current = state.conversations.get(user.id, request.path_params["cid"])
            if current is None:  # an unknown, another user's or a deleted conversation alike
                return HTMLResponse("<!doctype html><title>Not found</title><h1 role=\"alert\">Conversation not found"
                                    "</h1>", status_code=404)
            messages = state.conversations.messages(current.id)
        page = html_pages.chat_page(user, state.conversations.list(user.id), current, messages, front_end(),
                                    memory_on=state.accounts.memory_enabled(user.id))
        return HTMLResponse(page)

    def memories(request: Request) -> Response:
        user = current_user(request)
        if user is None:
            return RedirectResponse("/login", status_code=303)
        listed = state.memories.list(user.id, state.clock.now())
        return HTMLResponse(html_pages.memories_page(user, listed, state.accounts.memory_enabled(user.id),
                                                     memories_front_end()))

    # -- API ---------------------------------------------------------------------------------------------------------
    def healthz(request: Request) -> Response:
        return JSONResponse({"app": "memchat", "version": __version__, **state.versions(),
                             "embedder": settings.embedder, "index": settings.index,
                             "assistant": assistant.described(settings), "faults": sorted(settings.faults)})

    def api_login(request: Request, _: None, body: bytes) -> Response:
        data = parse_json(body)
        user, refusal = sign_in(request, text_field(data, "email"), text_field(data, "password"))
        if user is None:
            return error(429, refusal) if refusal == LOCKED_OUT else error(401, "wrong email or password")
        response = JSONResponse({"user": user.as_json()})
        set_session(response, user)
        return response

    def api_logout(request: Request, user: User, body: bytes) -> Response:
        state.accounts.close_session(request.cookies.get(COOKIE, ""))
        response = JSONResponse({})
        response.delete_cookie(COOKIE, path="/")
        return response

    def api_me(request: Request, user: User, body: bytes) -> Response:
        return JSONResponse({"user": user.as_json()})

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
        remember = turn.remember if writes_allowed(memory_on) else []
        return JSONResponse({"message": message.as_json(), "reply": reply.as_json(),
                             "recalled": [r.as_json() for r in recalled], "remember": remember})

    def writes_allowed(memory_on: bool) -> bool:
        """Whether what a user tells may be written to memory: not while their memory is off."""
        return memory_on or settings.has("memory-off-still-writes")

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
        if not writes_allowed(state.accounts.memory_enabled(owner)):
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

    def delete_conversation(request: Request, user: User, body: bytes) -> Response:
        if not state.conversations.delete(user.id, request.path_params["cid"], state.clock.now()):
            return error(404, "conversation not found")
        return Response(status_code=204)

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

    routes = [
        Route("/healthz", healthz),
        Route("/login", login_form, methods=["GET"]),
        Route("/login", login_submit, methods=["POST"]),
        Route("/logout", logout, methods=["POST"]),
        Route("/", chat),
        Route("/c/{cid}", chat),
        Route("/memories", memories),
        Route("/api/login", api(api_login, auth=False), methods=["POST"]),
        Route("/api/logout", api(api_logout), methods=["POST"]),
        Route("/api/me", api(api_me)),
        Route("/api/conversations", api(list_conversations), methods=["GET"]),
        Route("/api/conversations", api(create_conversation), methods=["POST"]),
        Route("/api/conversations/{cid}", api(delete_conversation), methods=["DELETE"]),
        Route("/api/conversations/{cid}/messages", api(list_messages), methods=["GET"]),
        Route("/api/conversations/{cid}/messages", api(post_message), methods=["POST"]),
        Route("/api/memories", api(list_memories), methods=["GET"]),
        Route("/api/memories", api(write_memories), methods=["POST"]),
        Route("/api/memories", api(clear_memories), methods=["DELETE"]),
        Route("/api/memories/search", api(search_memories)),
        Route("/api/memories/{mid}", api(edit_memory), methods=["PUT"]),
        Route("/api/memories/{mid}", api(delete_memory), methods=["DELETE"]),
        Route("/api/settings", api(get_settings), methods=["GET"]),
        Route("/api/settings", api(put_settings), methods=["PUT"]),
        Route("/api/admin/users", api(admin_create_user, admin=True), methods=["POST"]),
        Route("/api/admin/users/import", api(admin_import_users, admin=True, max_body=MAX_IMPORT_BODY),
              methods=["POST"]),
        Route("/api/admin/users/{uid}", api(admin_delete_user, admin=True), methods=["DELETE"]),
        Route("/api/admin/clock", api(admin_clock, admin=True), methods=["POST"]),
        Mount("/static", StaticFiles(directory=Path(__file__).parent / "static"), name="static"),
    ]
    return Starlette(routes=routes)
