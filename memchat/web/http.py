"""What every resource of the HTTP face shares: its limits, a refusal as one line of JSON, a request's body and
fields read as the API promises, and the signed-in user (or the admin token) checked before a handler runs."""

from __future__ import annotations

import hmac
import json
from collections.abc import Callable

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from memchat.accounts import SESSION_DAYS, AccountError, User
from memchat.app_state import AppState
from memchat.sign_ins import LOCKED_OUT

COOKIE = "memchat_session"
MAX_BODY = 64 * 1024
MAX_IMPORT_BODY = 64 * 1024 * 1024  # 100,000 users of a long e-mail and password each
MAX_TEXT = 4000
MAX_WRITE_ITEMS = 50  # memories one write request may hold


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


class Web:
    """The app's state as its handlers reach it: the signed-in user of a request, sign-in and its throttling, the
    admin token, and `api`, which wraps a JSON handler in the body limit, the session or token check and a worker
    thread."""

    def __init__(self, state: AppState) -> None:
        self.state = state
        self.settings = state.settings

    # Sessions live on the app's clock, like memories: a test that moves the clock sees them end when they should.
    def current_user(self, request: Request) -> User | None:
        token = request.cookies.get(COOKIE)
        return self.state.accounts.user_for_session(token, self.state.clock.now()) if token else None

    def set_session(self, response: Response, user: User) -> None:
        token = self.state.accounts.open_session(user, self.state.clock.now())
        persistent = not self.settings.has("session-not-persistent")
        response.set_cookie(COOKIE, token, httponly=True, samesite="lax", path="/",
                            max_age=SESSION_DAYS * 24 * 3600 if persistent else None)

    def sign_in(self, request: Request, email: str, password: str) -> tuple[User | None, str]:
        """The user, or why not: throttled by account and client address (memchat.sign_ins) before the password is
        even checked, so that a locked-out address learns nothing from trying."""
        address = request.client.host if request.client else ""
        now = self.state.clock.now()
        if self.state.sign_ins.locked(email, address, now):
            return None, LOCKED_OUT
        user = self.state.accounts.authenticate(email, password)
        if user is None:
            self.state.sign_ins.failed(email, address, now)
            return None, "Wrong email or password."
        self.state.sign_ins.succeeded(email, address)
        return user, ""

    def writes_allowed(self, memory_on: bool) -> bool:
        """Whether what a user tells may be written to memory: not while their memory is off."""
        return memory_on or self.settings.has("memory-off-still-writes")

    def admin_denied(self, request: Request) -> JSONResponse | None:
        if not self.settings.admin_token:
            return error(404, "not found")
        given = request.headers.get("authorization", "")
        if not hmac.compare_digest(given.encode(), f"Bearer {self.settings.admin_token}".encode()):
            return error(401, "admin token required")
        return None

    def api(self, handler: Callable[..., Response], admin: bool = False, auth: bool = True,
            max_body: int = MAX_BODY) -> Callable[[Request], object]:
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
                    return self.admin_denied(request) or handler(request, None, body)
                user = self.current_user(request) if auth else None
                if auth and user is None:
                    return error(401, "log in first")
                return handler(request, user, body)
            except BadRequest as e:
                return error(e.status, str(e))
            except AccountError as e:
                return error(409 if "exists" in str(e) else 400, str(e))
        return endpoint
