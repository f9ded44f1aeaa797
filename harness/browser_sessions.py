"""A scenario's browsers: signed-in contexts from a cached storage_state, persistent profiles that can be closed and
opened again, and the pages they hold (for the failure report)."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import BrowserContext, BrowserType, Page

from harness.browser import REMOTE_PROFILE_SKIP


class BrowserSessions:
    def __init__(self, new_context: Callable[..., BrowserContext], browser_type: BrowserType,
                 launch_args: dict, context_args: dict, recorder: Any | None, remote: bool = False,
                 untraced_context: Callable[..., BrowserContext] | None = None) -> None:
        self._new_context = new_context
        self._untraced_context = untraced_context or new_context
        self._untraced: list[BrowserContext] = []
        self.traced = True  # see trace_nothing()
        self._browser_type = browser_type
        self._launch_args = launch_args
        self._context_args = {k: v for k, v in context_args.items() if k != "base_url"}
        self._recorder = recorder  # pytest-playwright's artifacts recorder: traces and screenshots on failure
        self._remote = remote  # browsers from a browser server (--browser-ws): no persistent profiles
        self._storage_states: dict[str, dict] = {}
        self._profiles: list[Path] = []
        self._persistent: list[BrowserContext] = []
        self.contexts: list[BrowserContext] = []

    # -- plain contexts --------------------------------------------------------------------------------------------
    def trace_nothing(self) -> None:
        """Open the next contexts without Playwright's trace. Its DOM snapshots keep a closing page running that a
        real browser would cut off (measured: a page busy for 1 s when its tab closes still sends its late writes
        when traced, never when not), so scenarios about closing busy pages must not be traced."""
        self.traced = False

    def _context(self, **kwargs: Any) -> BrowserContext:
        if self.traced:
            context = self._new_context(**self._context_args, **kwargs)
        else:
            context = self._untraced_context(**self._context_args, **kwargs)
            self._untraced.append(context)
        self.contexts.append(context)
        return context

    def signed_in(self, user_key: str, make_storage_state: Callable[[], dict]) -> Page:
        """A new browser context already signed in as the user, from the user's cached storage_state."""
        if user_key not in self._storage_states:
            self._storage_states[user_key] = make_storage_state()
        return self._context(storage_state=self._storage_states[user_key]).new_page()

    def anonymous(self) -> Page:
        return self._context().new_page()

    # -- persistent profiles ---------------------------------------------------------------------------------------
    def new_profile(self) -> Path:
        if self._remote:
            pytest.skip(REMOTE_PROFILE_SKIP)
        profile = Path(tempfile.mkdtemp(prefix="memtest-profile-", dir="/tmp"))
        self._profiles.append(profile)
        return profile

    def open_profile(self, profile: Path) -> Page:
        """Launch the browser on a profile folder, as a person opening their browser."""
        context = self._browser_type.launch_persistent_context(str(profile), **self._launch_args,
                                                               **self._context_args)
        if self._recorder is not None and self.traced:
            self._recorder.on_did_create_browser_context(context)
        self._persistent.append(context)
        self.contexts.append(context)
        return context.pages[0] if context.pages else context.new_page()

    def close_browser(self, context: BrowserContext) -> None:
        """Close like a person closing the browser: every tab is put away (pagehide), then the browser quits."""
        if self._recorder is not None and context in self._persistent:
            self._recorder.on_will_close_browser_context(context)
        for page in list(context.pages):
            page.close()
        context.close()
        self.contexts.remove(context)
        for held in (self._persistent, self._untraced):
            if context in held:
                held.remove(context)

    def pages(self) -> list[Page]:
        return [p for c in self.contexts for p in c.pages]

    def close_all(self, keep_evidence: bool = True) -> None:
        """At the end of a scenario. Without `keep_evidence` (it passed, and traces are kept only on failure) the
        traces are dropped unsaved: writing them costs a few hundred ms per browser."""
        for context in list(self._persistent):
            if not keep_evidence:
                context.tracing.stop()
                self._persistent.remove(context)
            self.close_browser(context)
        for context in self._untraced:  # pytest-playwright closes only the contexts it opened
            context.close()
        for profile in self._profiles:
            shutil.rmtree(profile, ignore_errors=True)
