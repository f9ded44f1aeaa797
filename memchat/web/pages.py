"""The pages a person opens: sign-in and sign-out, the chat (with the front end's settings), the memories page, and
the health check operators read."""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from memchat import __version__, assistant, html_pages
from memchat.conversations import PREVIEW_LENGTH
from memchat.sign_ins import LOCKED_OUT
from memchat.web.http import COOKIE, MAX_WRITE_ITEMS, Web

# Faults whose regressions live in the window of a write not sent yet hold the writes back until the page leaves the
# conversation (an event, not a timer: on a slow machine a timer's window closes before the test reaches it).
# context-dropped's too: a prompt without the conversation is covered by recall once the turn's memory has landed, so
# users see it while the memory is late, as in apps that write memories later (a background reviewer).
HELD_BACK_WRITE_FAULTS = ("write-held-back", "unload-write-lost", "write-race", "sign-out-write-lost",
                          "context-dropped")


def routes(web: Web) -> list[BaseRoute]:
    state, settings = web.state, web.settings

    def login_form(request: Request) -> Response:
        if web.current_user(request):
            return RedirectResponse("/", status_code=303)
        return HTMLResponse(html_pages.login_page())

    async def login_submit(request: Request) -> Response:
        form = await request.form()
        email, password = str(form.get("email", "")), str(form.get("password", ""))
        user, refusal = await run_in_threadpool(web.sign_in, request, email, password)
        if user is None:
            status = 429 if refusal == LOCKED_OUT else 401
            return HTMLResponse(html_pages.login_page(refusal, email), status_code=status)
        response = RedirectResponse("/", status_code=303)
        await run_in_threadpool(web.set_session, response, user)
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
                "resendFailedSends": settings.has("failed-send-resent"),
                "keepInputUntilAnswered": settings.has("message-kept-until-answered"),
                "newConversationAtOnce": settings.has("new-conversation-at-once"),
                "keepOfflineSends": settings.has("offline-send-kept-silently"),
                "previewLength": PREVIEW_LENGTH,
                "updatePreview": not settings.has("preview-set-on-load-only")}

    def memories_front_end() -> dict:
        return {"deleteOptimistically": settings.has("deleted-memory-returns"),
                "saveMemorySetting": not settings.has("memory-setting-not-saved")}

    def chat(request: Request) -> Response:
        user = web.current_user(request)
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
        user = web.current_user(request)
        if user is None:
            return RedirectResponse("/login", status_code=303)
        listed = state.memories.list(user.id, state.clock.now())
        return HTMLResponse(html_pages.memories_page(user, listed, state.accounts.memory_enabled(user.id),
                                                     memories_front_end()))

    def healthz(request: Request) -> Response:
        return JSONResponse({"app": "memchat", "version": __version__, **state.versions(),
                             "embedder": settings.embedder, "index": settings.index,
                             "assistant": assistant.described(settings), "faults": sorted(settings.faults)})

    return [
        Route("/healthz", healthz),
        Route("/login", login_form, methods=["GET"]),
        Route("/login", login_submit, methods=["POST"]),
        Route("/logout", logout, methods=["POST"]),
        Route("/", chat),
        Route("/c/{cid}", chat),
        Route("/memories", memories),
    ]
