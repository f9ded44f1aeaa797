"""The HTTP face of the app, one module a resource: the pages (pages), signing in and the user's setting
(sessions), conversations and their turns (conversations), memories (memories), the operators' API (admin), and
what they share (http): limits, refusals, the signed-in user."""

from __future__ import annotations

from pathlib import Path

from starlette.applications import Starlette
from starlette.routing import Mount
from starlette.staticfiles import StaticFiles

from memchat.app_state import AppState
from memchat.web import admin, conversations, memories, pages, sessions
from memchat.web.http import Web
from memchat.web.pages import HELD_BACK_WRITE_FAULTS

__all__ = ["HELD_BACK_WRITE_FAULTS", "build_app"]


def build_app(state: AppState) -> Starlette:
    web = Web(state)
    routes = [*pages.routes(web), *sessions.routes(web), *conversations.routes(web), *memories.routes(web),
              *admin.routes(web)]
    static = Path(__file__).resolve().parent.parent / "static"
    return Starlette(routes=[*routes, Mount("/static", StaticFiles(directory=static), name="static")])
