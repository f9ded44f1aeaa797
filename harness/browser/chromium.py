"""Finding a Chromium to drive: an explicit path, Playwright's own install, or Debian's real binary."""

from __future__ import annotations

import json
import os
import socket
import subprocess
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

DEBIAN_CHROMIUM = Path("/usr/lib/chromium/chromium")  # the real binary; /usr/bin/chromium is a wrapper script
# Debian's build of the headless shell (package chromium-headless-shell), what Playwright itself runs headless: the
# same engine without the browser's UI stack. Here the suite on memchat ran in 71 s with it and 110 s with the full
# binary, and Open WebUI's scenarios in 19 % less time; the kill matrix killed the same faults.
DEBIAN_HEADLESS_SHELL = Path("/usr/lib/chromium/chromium-headless-shell")
# Quiet and offline: no background downloads, sync, first-run UI or QUIC probes to hosts that cannot be reached.
QUIET_FLAGS = ["--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run",
               "--disable-quic", "--disable-dev-shm-usage"]
# StrykerJS (make mutation) switches its mutants of a page's script on by a global the script reads, or else by an
# environment variable, which a page does not have: the suite's browsers set the global before any script runs.
STRYKER_ACTIVE_MUTANT_ENV = "__STRYKER_ACTIVE_MUTANT__"
INSTALL_HINT = ("no Chromium found: run `make setup` (Debian: apt-get install chromium chromium-headless-shell; "
                "elsewhere: .venv/bin/playwright install chromium) or pass --browser-path")


def playwright_chromium() -> str | None:
    """Playwright's own Chromium of the installed version's revision, where Playwright looks for it:
    $PLAYWRIGHT_BROWSERS_PATH (the official Docker images keep browsers in /ms-playwright) or ~/.cache/ms-playwright.
    Another revision (an image of another Playwright version) does not count: this Playwright would not launch it."""
    import playwright

    manifest = Path(playwright.__file__).parent / "driver" / "package" / "browsers.json"
    revisions = {b["name"]: b["revision"] for b in json.loads(manifest.read_text())["browsers"]}
    root = Path(os.environ.get("PLAYWRIGHT_BROWSERS_PATH") or Path.home() / ".cache" / "ms-playwright")
    found = sorted(root.glob(f"chromium-{revisions['chromium']}/chrome-linux*/chrome"))
    found += sorted(root.glob(f"chromium_headless_shell-{revisions['chromium-headless-shell']}/*/headless_shell"))
    return str(found[0]) if found else None


class BrowserNotFound(Exception):
    pass


# Playwright opens a persistent profile only in a browser it launches itself (launch_persistent_context); a browser
# server hands out browsers, and its launchServer takes no profile folder.
REMOTE_PROFILE_SKIP = ("a remote browser (--browser-ws) cannot give a persistent profile: Playwright opens one only "
                       "in a browser it launches itself")


def check_browser_ws(url: str, timeout: float = 3.0) -> None:
    """A one-line error, before anything starts, for a --browser-ws URL where no server can answer."""
    parts = urlsplit(url)
    if parts.scheme not in ("ws", "wss") or not parts.hostname:
        raise BrowserNotFound(f"--browser-ws {url} is not a ws:// or wss:// URL; pass the wsEndpoint that a "
                              f"Playwright browser server prints (here: node tools/browser_server.mjs)")
    port = parts.port or (443 if parts.scheme == "wss" else 80)
    try:
        socket.create_connection((parts.hostname, port), timeout=timeout).close()
    except OSError as e:
        raise BrowserNotFound(f"--browser-ws {url}: nothing answers at {parts.hostname}:{port} ({e.strerror or e}); "
                              f"start a Playwright browser server there (here: node tools/browser_server.mjs) or "
                              f"drop --browser-ws") from None


@dataclass(frozen=True)
class BrowserChoice:
    executable: Path | None  # None: Playwright's own Chromium
    source: str

    def launch_args(self) -> dict:
        args: dict = {"args": list(QUIET_FLAGS)}
        if self.executable is not None:
            args["executable_path"] = str(self.executable)
        return args


def find_chromium(explicit: str | None, playwright_executable: str | None, headed: bool = False) -> BrowserChoice:
    """`playwright_executable`: where Playwright's own Chromium would be (BrowserType.executable_path). Debian's
    headless shell comes before its full browser, as Playwright's own does, unless the run shows its windows."""
    explicit = explicit or os.environ.get("MEMTEST_BROWSER_PATH")
    if explicit:
        path = Path(explicit)
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise BrowserNotFound(f"--browser-path {explicit} is not an executable file; {INSTALL_HINT}")
        return BrowserChoice(path, "--browser-path")
    if playwright_executable and Path(playwright_executable).is_file():
        return BrowserChoice(None, "playwright")
    if not headed and DEBIAN_HEADLESS_SHELL.is_file():
        return BrowserChoice(DEBIAN_HEADLESS_SHELL, "debian headless shell")
    if DEBIAN_CHROMIUM.is_file():
        return BrowserChoice(DEBIAN_CHROMIUM, "debian")
    raise BrowserNotFound(INSTALL_HINT)


def chromium_version(executable: Path | None) -> str:
    """For the report's environment; Playwright's own build reports through the browser object instead."""
    if executable is None:
        return "playwright"
    try:
        out = subprocess.run([str(executable), "--version"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return out.strip() or "unknown"


def page_init_scripts() -> list[str]:
    """Scripts every page of the suite runs before its own: StrykerJS's active mutant, when a mutation run set one."""
    mutant = os.environ.get(STRYKER_ACTIVE_MUTANT_ENV)
    if mutant is None:
        return []
    return [f"(globalThis.__stryker__ = globalThis.__stryker__ || {{}}).activeMutant = {json.dumps(mutant)};"]
