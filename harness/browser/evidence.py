"""A scenario's browser evidence, recorded through Playwright's own API and kept as pytest-playwright's options say
(`--tracing`, `--screenshot`, `--video`, `--output`): a trace of every browser context (`context.tracing`), a
screenshot of each of its pages as it closes, and its pages' videos; kept in the scenario's folder of `--output`
when it failed (or always, with `on`), dropped unsaved when it passed.

Traces hold DOM snapshots and the network but no screencast frames, unless `--trace-screencast`: the frames cost
about a quarter of a browser scenario's time, and a failing scenario still gets its screenshots and a trace whose
snapshots show every step's page.
"""

from __future__ import annotations

import hashlib
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from playwright.sync_api import BrowserContext, Error, Video
from slugify import slugify

SCREENSHOT_TIMEOUT_MS = 5000  # a page too busy to be drawn in this time is left without one


@dataclass(frozen=True)
class EvidenceOptions:
    """pytest-playwright's options for what to keep, and this suite's for the trace's frames."""

    tracing: str = "off"  # on | off | retain-on-failure
    screenshot: str = "off"  # on | off | only-on-failure
    video: str = "off"  # on | off | retain-on-failure
    full_page: bool = False
    screencast: bool = False

    @property
    def traces(self) -> bool:
        return self.tracing != "off"

    @property
    def screenshots(self) -> bool:
        return self.screenshot != "off"

    def keeps(self, option: str, failed: bool) -> bool:
        return option == "on" or (failed and option in ("retain-on-failure", "only-on-failure"))


def folder_for(output: Path, nodeid: str) -> Path:
    """The scenario's folder of evidence, named as pytest-playwright names its own (the test id, slugified)."""
    name = slugify(nodeid)
    if len(name) >= 256:
        name = f"{name[:100]}-{hashlib.sha256(name.encode()).hexdigest()[:7]}-{name[-100:]}"
    return output / name


class BrowserEvidence:
    def __init__(self, options: EvidenceOptions, folder: Path, title: str) -> None:
        self.options = options
        self.folder = folder
        self.title = title
        self._scratch = Path(tempfile.mkdtemp(prefix="memtest-evidence-"))
        self._traces: list[Path] = []
        self._screenshots: list[Path] = []
        self._videos: list[Video] = []

    def _scratch_file(self, suffix: str) -> Path:
        return self._scratch / f"{len(list(self._scratch.iterdir())) + 1}{suffix}"

    def started(self, context: BrowserContext) -> None:
        """A context the scenario opened: traced from now on."""
        if self.options.traces:
            context.tracing.start(title=self.title, screenshots=self.options.screencast, snapshots=True,
                                  sources=False)

    def closing(self, context: BrowserContext) -> None:
        """A traced context about to close while the scenario goes on: its trace and its pages' screenshots are
        taken now and kept aside (the outcome is not known yet)."""
        if self.options.traces:
            trace = self._scratch_file(".zip")
            context.tracing.stop(path=trace)
            self._traces.append(trace)
        for page in context.pages:
            if self.options.screenshots:
                try:
                    shot = self._scratch_file(".png")
                    page.screenshot(path=shot, timeout=SCREENSHOT_TIMEOUT_MS, full_page=self.options.full_page)
                    self._screenshots.append(shot)
                except Error:
                    pass  # a page that closed or hung meanwhile has nothing to show
            if page.video is not None:
                self._videos.append(page.video)

    def dropping(self, context: BrowserContext) -> None:
        """A traced context closing at the end of a scenario whose evidence is not kept: its trace unsaved."""
        if self.options.traces:
            context.tracing.stop()

    def keep(self, failed: bool) -> list[tuple[str, Path]]:
        """What the options keep of the scenario's evidence, moved into its folder: (kind, path) each."""
        kept: list[tuple[str, Path]] = []
        status = "failed" if failed else "finished"
        for kind, option, files, name in (
                ("trace", self.options.tracing, self._traces, "trace{n}.zip"),
                ("screenshot", self.options.screenshot, self._screenshots, f"test-{status}-{{i}}.png")):
            if not self.options.keeps(option, failed):
                continue
            for i, source in enumerate(files, 1):
                n = "" if len(files) == 1 else f"-{i}"
                path = self.folder / name.format(n=n, i=i)
                path.parent.mkdir(parents=True, exist_ok=True)
                shutil.move(source, path)
                kept.append((kind, path))
        if self.options.keeps(self.options.video, failed):
            for i, video in enumerate(self._videos, 1):
                path = self.folder / ("video.webm" if len(self._videos) == 1 else f"video-{i}.webm")
                try:
                    video.save_as(path)
                    kept.append(("video", path))
                except Error:
                    continue  # an empty video (a page closed before it drew)
        shutil.rmtree(self._scratch, ignore_errors=True)
        return kept
