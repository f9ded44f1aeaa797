"""--browser-ws: the suite drives browsers from a Playwright browser server instead of launching its own.

The server runs on loopback, started here by tools/browser_server.mjs (playwright-core's launchServer on this
machine's Chromium; `make browser-server` installs it). One real scenario runs through it in a pytest subprocess, and
one that needs a persistent browser profile says in its skip line why a remote browser cannot give it one.
"""

from __future__ import annotations

import os
import re
import selectors
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.browser.chromium import REMOTE_PROFILE_SKIP, BrowserNotFound, check_browser_ws

ROOT = Path(__file__).resolve().parent.parent
VENV_PYTHON = ROOT / ".venv" / "bin" / "python"
PYTHON = str(VENV_PYTHON if VENV_PYTHON.exists() else sys.executable)
PLAYWRIGHT_CORE = ROOT / ".tools" / "browser-server" / "node_modules" / "playwright-core"
IN_SESSION = "features/in_session_memory.feature::test_several_facts_told_in_one_conversation_are_all_recalled"
PERSISTENT = "features/cross_session_persistence.feature::test_a_fresh_browser_profile_has_to_sign_in_again"


def _first_line(proc: subprocess.Popen, timeout: float) -> str:
    with selectors.DefaultSelector() as sel:
        sel.register(proc.stdout, selectors.EVENT_READ)
        if not sel.select(timeout):
            proc.kill()
            pytest.fail(f"the browser server printed no endpoint within {timeout} s: {proc.communicate()[1]}")
    return proc.stdout.readline().strip()


@pytest.fixture(scope="module")
def browser_server() -> Iterator[str]:
    if shutil.which("node") is None or not PLAYWRIGHT_CORE.is_dir():
        pytest.fail("needs node and playwright-core in .tools/browser-server: run make browser-server")
    proc = subprocess.Popen(["node", str(ROOT / "tools" / "browser_server.mjs"), "--host", "127.0.0.1"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        endpoint = _first_line(proc, timeout=30)
        assert re.fullmatch(r"ws://127\.0\.0\.1:\d+/\S+", endpoint), endpoint
        yield endpoint
    finally:
        proc.terminate()
        proc.communicate(timeout=15)


def test_a_scenario_passes_on_a_browser_from_the_server(browser_server: str, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMTEST_") and k != "PYTEST_ADDOPTS"}
    # No browser the suite could launch itself: none of Playwright's own, and an explicit one that cannot run. Were
    # it to launch one instead of connecting to the server, the scenario would fail.
    env["PLAYWRIGHT_BROWSERS_PATH"] = str(tmp_path / "no-browsers")
    command = [PYTHON, "-m", "pytest", IN_SESSION, PERSISTENT, "-p", "no:cacheprovider", "-rs",
               "--browser-ws", browser_server, "--browser-path", "/bin/false",
               "--alluredir", str(tmp_path / "allure"), "--output", str(tmp_path / "playwright")]
    run = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    shown = f"exit {run.returncode}:\n{run.stdout}\n{run.stderr}"
    assert run.returncode == 0, shown
    assert f"browser: served by a Playwright browser server (--browser-ws {browser_server})" in run.stdout, shown
    assert re.search(r"\b1 passed, 1 skipped\b", run.stdout), shown
    skips = [line for line in run.stdout.splitlines() if line.startswith("SKIPPED")]
    assert len(skips) == 1 and REMOTE_PROFILE_SKIP in skips[0], shown


@pytest.mark.parametrize("url", ["http://127.0.0.1:9/x", "ws://", "127.0.0.1:9"])
def test_a_url_that_is_not_a_websocket_says_what_to_pass(url: str) -> None:
    with pytest.raises(BrowserNotFound, match=r"is not a ws:// or wss:// URL; pass the wsEndpoint"):
        check_browser_ws(url)
