"""A scenario's browsers: signed-in contexts from a cached storage_state, persistent profiles that can be closed and
opened again, the pages they hold (for the failure report), and their evidence (harness.browser.evidence)."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import cast

import pytest
from playwright.sync_api import Browser, BrowserContext, BrowserType, Page, StorageState

from harness.browser.chromium import REMOTE_PROFILE_SKIP, page_init_scripts
from harness.browser.evidence import BrowserEvidence


class BrowserSessions:
    def __init__(self, browser: Callable[[], Browser], browser_type: BrowserType, launch_args: dict,
                 context_args: dict, evidence: BrowserEvidence, remote: bool = False) -> None:
        self._browser = browser  # the run's shared browser, launched on first use (persistent profiles need none)
        self._browser_type = browser_type
        self._launch_args = launch_args
        self._context_args = {k: v for k, v in context_args.items() if k != "base_url"}
        self.evidence = evidence
        self.traced = True  # see trace_nothing()
        self._remote = remote  # browsers from a browser server (--browser-ws): no persistent profiles
        self._storage_states: dict[str, StorageState] = {}
        self._profiles: list[Path] = []
        self._recorded: list[BrowserContext] = []  # contexts whose evidence is recorded
        self.contexts: list[BrowserContext] = []

    # -- plain contexts --------------------------------------------------------------------------------------------
    def trace_nothing(self) -> None:
        """Open the next contexts without a trace or screenshots. A trace's DOM snapshots keep a closing page running
        that a real browser would cut off (measured: a page busy for 1 s when its tab closes still sends its late
        writes when traced, never when not), so scenarios about closing busy pages must not be traced."""
        self.traced = False

    def _opened(self, context: BrowserContext) -> BrowserContext:
        for script in page_init_scripts():
            context.add_init_script(script=script)
        if self.traced:
            self.evidence.started(context)
            self._recorded.append(context)
        self.contexts.append(context)
        return context

    def signed_in(self, user_key: str, make_storage_state: Callable[[], dict]) -> Page:
        """A new browser context already signed in as the user, from the user's cached storage_state."""
        if user_key not in self._storage_states:
            self._storage_states[user_key] = cast(StorageState, make_storage_state())  # the driver's, of that shape
        context = self._browser().new_context(**self._context_args, storage_state=self._storage_states[user_key])
        return self._opened(context).new_page()

    def anonymous(self) -> Page:
        return self._opened(self._browser().new_context(**self._context_args)).new_page()

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
        self._opened(context)
        return context.pages[0] if context.pages else context.new_page()

    # -- closing ---------------------------------------------------------------------------------------------------
    def close_browser(self, context: BrowserContext) -> None:
        """Close like a person closing the browser: every tab is put away (pagehide), then the browser quits. Its
        evidence is taken first, kept aside until the scenario's outcome is known."""
        if context in self._recorded:
            self.evidence.closing(context)
            self._recorded.remove(context)
        self._close(context)

    def _close(self, context: BrowserContext) -> None:
        for page in list(context.pages):
            page.close()
        context.close()
        self.contexts.remove(context)

    def pages(self) -> list[Page]:
        return [p for c in self.contexts for p in c.pages]

    def close_all(self, failed: bool) -> list[tuple[str, Path]]:
        """At the end of a scenario: every context closed, and the evidence its outcome keeps (kind, path). A passed
        scenario whose evidence is kept only on failure drops its traces unsaved and takes no screenshots (writing a
        trace costs a few hundred ms per browser)."""
        options = self.evidence.options
        keeps = any(options.keeps(o, failed) for o in (options.tracing, options.screenshot, options.video))
        for context in list(self.contexts):
            if context in self._recorded:
                (self.evidence.closing if keeps else self.evidence.dropping)(context)
                self._recorded.remove(context)
            context.close()  # the scenario is over: no page needs its pagehide now
        self.contexts.clear()
        for profile in self._profiles:
            shutil.rmtree(profile, ignore_errors=True)
        return self.evidence.keep(failed)
