"""The users of a scenario, each an implementation of the one `harness.users.actor.Actor` protocol: in a browser,
through the page objects, where the target has a web page; else through the app's API (its driver)."""

from __future__ import annotations

from actors.api import ApiActor
from actors.base import AppStage, Stage
from actors.browser import BrowserActor
from harness.drivers.base import Account
from harness.users.actor import Actor


def actor_for(name: str, account: Account, stage: Stage, through_api: bool = False) -> Actor:
    """An actor of the account, acting on the stage's app: in a browser where its target has a web page (unless the
    user speaks through the app's API)."""
    return (BrowserActor if stage.app.target.has_pages and not through_api else ApiActor)(name, account, stage)


__all__ = ["ApiActor", "AppStage", "BrowserActor", "Stage", "actor_for"]
