"""harness.browser.chromium.find_chromium: an explicit path, Playwright's own Chromium, Debian's binary, or how to get
one."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from harness.browser import chromium as browser
from harness.browser.chromium import QUIET_FLAGS, BrowserChoice, BrowserNotFound, find_chromium

TRUE = Path("/bin/true")


@pytest.fixture(autouse=True)
def _no_environment_choice(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("MEMTEST_BROWSER_PATH", raising=False)
    monkeypatch.setattr(browser, "DEBIAN_CHROMIUM", tmp_path / "no-debian-chromium")
    monkeypatch.setattr(browser, "DEBIAN_HEADLESS_SHELL", tmp_path / "no-debian-headless-shell")


def _says_how_to_install(message: str) -> None:
    assert "\n" not in message
    assert "make setup" in message
    assert "apt-get install chromium chromium-headless-shell" in message
    assert "playwright install chromium" in message
    assert "--browser-path" in message


def test_explicit_path_that_is_not_executable(tmp_path: Path) -> None:
    plain = tmp_path / "chromium"
    plain.write_text("#!/bin/sh\n")
    plain.chmod(stat.S_IRUSR | stat.S_IWUSR)
    with pytest.raises(BrowserNotFound) as info:
        find_chromium(str(plain), None)
    message = str(info.value)
    assert message.startswith(f"--browser-path {plain} is not an executable file; ")
    _says_how_to_install(message)


@pytest.mark.parametrize("bad", ["/nonexistent/chromium", "/tmp"])
def test_explicit_path_that_is_missing_or_a_directory(bad: str, tmp_path: Path) -> None:
    playwright_own = tmp_path / "chrome"
    playwright_own.write_text("")
    with pytest.raises(BrowserNotFound) as info:
        find_chromium(bad, str(playwright_own))  # an explicit choice is never silently replaced
    _says_how_to_install(str(info.value))


def test_explicit_executable_is_chosen(tmp_path: Path) -> None:
    playwright_own = tmp_path / "chrome"
    playwright_own.write_text("")
    choice = find_chromium(str(TRUE), str(playwright_own))
    assert choice == BrowserChoice(TRUE, "--browser-path")


def test_environment_variable_counts_as_explicit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMTEST_BROWSER_PATH", str(TRUE))
    assert find_chromium(None, None) == BrowserChoice(TRUE, "--browser-path")
    monkeypatch.setenv("MEMTEST_BROWSER_PATH", "/nonexistent/chromium")
    with pytest.raises(BrowserNotFound, match="/nonexistent/chromium"):
        find_chromium(None, None)


def test_playwright_own_chromium_when_it_exists(tmp_path: Path) -> None:
    playwright_own = tmp_path / "chrome"
    playwright_own.write_text("")
    assert find_chromium(None, str(playwright_own)) == BrowserChoice(None, "playwright")


def test_debian_binary_when_playwright_has_none(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    debian = tmp_path / "chromium"
    debian.write_text("")
    monkeypatch.setattr(browser, "DEBIAN_CHROMIUM", debian)
    assert find_chromium(None, str(tmp_path / "missing-chrome")) == BrowserChoice(debian, "debian")


def test_debian_headless_shell_first_unless_headed(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    debian, shell = tmp_path / "chromium", tmp_path / "chromium-headless-shell"
    debian.write_text("")
    shell.write_text("")
    monkeypatch.setattr(browser, "DEBIAN_CHROMIUM", debian)
    monkeypatch.setattr(browser, "DEBIAN_HEADLESS_SHELL", shell)
    assert find_chromium(None, None) == BrowserChoice(shell, "debian headless shell")
    assert find_chromium(None, None, headed=True) == BrowserChoice(debian, "debian")
    playwright_own = tmp_path / "chrome"
    playwright_own.write_text("")
    assert find_chromium(None, str(playwright_own)) == BrowserChoice(None, "playwright")


def test_headed_run_without_a_full_browser_says_how_to_install(monkeypatch: pytest.MonkeyPatch,
                                                               tmp_path: Path) -> None:
    shell = tmp_path / "chromium-headless-shell"
    shell.write_text("")
    monkeypatch.setattr(browser, "DEBIAN_HEADLESS_SHELL", shell)
    with pytest.raises(BrowserNotFound) as info:
        find_chromium(None, None, headed=True)
    _says_how_to_install(str(info.value))


@pytest.mark.parametrize("playwright_path", [None, "/nonexistent/ms-playwright/chrome"])
def test_nothing_found_says_how_to_install(playwright_path: str | None) -> None:
    with pytest.raises(BrowserNotFound) as info:
        find_chromium(None, playwright_path)
    _says_how_to_install(str(info.value))


def test_launch_args_with_an_executable() -> None:
    args = BrowserChoice(TRUE, "--browser-path").launch_args()
    assert args["executable_path"] == "/bin/true"
    for flag in ("--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--no-first-run", "--disable-quic"):
        assert flag in args["args"]
    assert args["args"] == QUIET_FLAGS
    args["args"].append("--mutated")
    assert "--mutated" not in QUIET_FLAGS, "each call gets its own list"


def test_launch_args_for_playwright_own_chromium_name_no_executable() -> None:
    args = BrowserChoice(None, "playwright").launch_args()
    assert "executable_path" not in args
    assert args["args"] == QUIET_FLAGS


def test_playwright_chromium_is_looked_for_under_playwright_browsers_path(monkeypatch: pytest.MonkeyPatch,
                                                                          tmp_path: Path) -> None:
    """As in Playwright's Docker images (/ms-playwright); a browser of another Playwright's revision does not count."""
    import json

    import playwright

    manifest = Path(playwright.__file__).parent / "driver" / "package" / "browsers.json"
    revision = next(b["revision"] for b in json.loads(manifest.read_text())["browsers"] if b["name"] == "chromium")
    monkeypatch.setenv("PLAYWRIGHT_BROWSERS_PATH", str(tmp_path))
    other = tmp_path / "chromium-1" / "chrome-linux64" / "chrome"
    other.parent.mkdir(parents=True)
    other.write_text("")
    assert browser.playwright_chromium() is None
    own = tmp_path / f"chromium-{revision}" / "chrome-linux64" / "chrome"
    own.parent.mkdir(parents=True)
    own.write_text("")
    assert browser.playwright_chromium() == str(own)
