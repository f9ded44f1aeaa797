"""Bad input to the suite as a whole: each run of `pytest features` must stop at once with ONE line starting with
"ERROR:", a non-zero exit and no Python traceback, before any browser or app starts.

An unknown scenario tag is the exception: pytest reports it as a collection error (checked on a feature file in a
temporary folder, under the repo's pytest.ini).

The runs are started together (each is mostly pytest's own start-up) and checked one by one. Runs about something
other than the browser pass `--browser-path /bin/true`, so their outcome does not depend on the host's Chromium.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from harness.suite.options import add_options

ROOT = Path(__file__).resolve().parent.parent
VENV_PYTHON = ROOT / ".venv" / "bin" / "python"
PYTHON = str(VENV_PYTHON if VENV_PYTHON.exists() else sys.executable)
TIMEOUT = 120
SECRET = "secretpw"
NO_BROWSER = ["--browser-path", "/bin/true"]  # an executable: the browser check passes, and nothing launches it


@dataclass
class Run:
    args: list[str]
    returncode: int | None = None
    output: str = ""

    @property
    def lines(self) -> list[str]:
        return [line for line in self.output.splitlines() if line.strip()]


# Where nothing listens, so that --db testcontainers fails the same with or without a real engine on this machine.
NO_ENGINE = {"DOCKER_HOST": "unix:///nonexistent/memtest/docker.sock"}


def _cases(tmp: Path) -> dict[str, list[str]]:
    bad_tag = tmp / "bad_tag"
    bad_tag.mkdir()
    shutil.copy(ROOT / "features" / "conftest.py", bad_tag / "conftest.py")  # collects .feature files, as features/
    (bad_tag / "typo.feature").write_text(
        "Feature: A scenario with a tag nobody registered\n"
        "  @no_such_tag\n"
        "  Scenario: Tagged with an unknown marker\n"
        "    Given Ana is signed in\n", encoding="utf-8")
    pageless = tmp / "pageless.toml"  # an app with no pages, and a driver that can only use them
    pageless.write_text('name = "pageless"\ndriver = "open-webui"\n[app]\ncommand = ["true"]\n', encoding="utf-8")
    cases = {
        "browser": ["--browser-path", "/nonexistent"],
        "pageless": [*NO_BROWSER, "--target", str(pageless)],
        "browser_ws": ["--browser-ws", "ws://127.0.0.1:1/playwright"],
        "base_url": [*NO_BROWSER, "--base-url", "http://127.0.0.1:1"],
        "dsn": [*NO_BROWSER, "--pg-dsn", f"postgresql://u:{SECRET}@127.0.0.1:1/x", "--redis-url",
                "redis://127.0.0.1:1"],
        "faults": [*NO_BROWSER, "--faults", "no-such-fault"],
        "target": [*NO_BROWSER, "--target", "/nonexistent.toml"],
        # Not `features/`: the scenario files live in tmp; the repo's pytest.ini (--strict-markers, markers) rules.
        "bad_tag": ["--rootdir", str(ROOT), "-c", str(ROOT / "pytest.ini"), str(bad_tag)],
        "testcontainers": [*NO_BROWSER, "--db", "testcontainers"],  # run with NO_ENGINE
    }
    return cases


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Run]]:
    tmp = tmp_path_factory.mktemp("bad_input")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMTEST_") and k != "PYTEST_ADDOPTS"}
    started: dict[str, tuple[Run, subprocess.Popen]] = {}
    for name, args in _cases(tmp).items():
        common = ["-q", "-p", "no:cacheprovider", "-p", "no:randomly",
                  "--alluredir", str(tmp / "allure" / name), "--output", str(tmp / "playwright" / name)]
        # features/ comes first so that the acceptance-suite wiring runs, unless the case names its own folder.
        where = [] if name.endswith("_tag") else ["features"]
        command = [PYTHON, "-m", "pytest", *where, *common, *args]
        case_env = env | NO_ENGINE if name == "testcontainers" else env
        proc = subprocess.Popen(command, cwd=ROOT, env=case_env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True)
        started[name] = (Run(command), proc)
    results: dict[str, Run] = {}
    for name, (run, proc) in started.items():
        try:
            run.output, _ = proc.communicate(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            proc.kill()
            run.output = proc.communicate()[0] + f"\n(killed after {TIMEOUT} s)"
        run.returncode = proc.returncode
        results[name] = run
    yield results


def _assert_one_error_line(run: Run, *expected: str) -> str:
    shown = f"command: {' '.join(run.args)}\nexit {run.returncode}, output:\n{run.output}"
    assert run.returncode not in (0, None), shown
    assert "Traceback" not in run.output and "INTERNALERROR" not in run.output, shown
    assert len(run.lines) == 1, shown
    line = run.lines[0]
    assert line.startswith("ERROR: "), shown
    for text in expected:
        assert text in line, shown
    return line


def test_browser_path_that_does_not_exist(runs: dict[str, Run]) -> None:
    _assert_one_error_line(runs["browser"], "--browser-path /nonexistent", "make setup", "playwright install")


def test_browser_server_that_does_not_answer(runs: dict[str, Run]) -> None:
    _assert_one_error_line(runs["browser_ws"], "--browser-ws ws://127.0.0.1:1/playwright", "nothing answers",
                           "tools/browser_server.mjs")


def test_testcontainers_without_docker(runs: dict[str, Run]) -> None:
    _assert_one_error_line(runs["testcontainers"], "Docker", "--db embedded")


def test_base_url_where_nothing_answers(runs: dict[str, Run]) -> None:
    _assert_one_error_line(runs["base_url"], "http://127.0.0.1:1/healthz", "--base-url")


def test_database_urls_where_nothing_answers_do_not_print_the_password(runs: dict[str, Run]) -> None:
    run = runs["dsn"]
    assert SECRET not in run.output, run.output
    _assert_one_error_line(run, "127.0.0.1:1", "--pg-dsn")


def test_unknown_fault(runs: dict[str, Run]) -> None:
    _assert_one_error_line(runs["faults"], "no-such-fault", "unload-write-lost")


def test_target_without_pages_for_a_driver_that_needs_them(runs: dict[str, Run]) -> None:
    _assert_one_error_line(runs["pageless"], "pageless.toml has no web page ([locators])",
                           "the open-webui driver does not chat through the app's API", "give it one of the two")


def test_target_file_that_does_not_exist(runs: dict[str, Run]) -> None:
    _assert_one_error_line(runs["target"], "/nonexistent.toml", "--target")


def test_unknown_tag_is_a_clear_collection_error_naming_the_tag_and_file(runs: dict[str, Run]) -> None:
    """pytest-bdd turns tags into marks and pytest.ini has --strict-markers: the run fails at collection.

    It is pytest's collection-error report (a few lines), not a one-line "ERROR:"; it names tag and file."""
    run = runs["bad_tag"]
    shown = f"exit {run.returncode}, output:\n{run.output}"
    assert run.returncode == pytest.ExitCode.INTERRUPTED, shown
    assert "Traceback" not in run.output and "INTERNALERROR" not in run.output, shown
    assert "'no_such_tag' not found in `markers` configuration option" in run.output, shown
    assert "ERROR collecting typo.feature" in run.output, shown
    assert "1 error during collection" in run.output, shown

class _Options:
    """Stands in for pytest's parser: add_options only calls getgroup(...).addoption(...)."""

    def __init__(self) -> None:
        self.defaults: dict[str, object] = {}

    def getgroup(self, *args: object) -> _Options:
        return self

    def addoption(self, name: str, **kw: object) -> None:
        self.defaults[name] = kw.get("default")


def test_seed_from_the_environment_that_is_not_a_number(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMTEST_SEED", "not-a-number")
    options = _Options()
    add_options(options)  # type: ignore[arg-type]
    assert "--seed" in options.defaults
