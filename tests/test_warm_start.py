"""Warm starts (harness.warm_start): an app whose target preloads libraries starts as a fork of an interpreter that
imported them once, and is still started, watched and stopped as a new process is: its own environment, folder,
arguments and log, its exit code, and one-line errors."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from harness.app.app_launcher import AppLaunchError, free_port, start_process, stop_process
from harness.app.target import TargetError, load_target
from harness.warm_start import ForkedProcess, WarmStart, popen, warm_start_for

APP = f"""#!{sys.executable}
import json, os, signal, sys
from http.server import BaseHTTPRequestHandler, HTTPServer
import heavy_library  # preloaded: already imported when the app's script runs in a warm start

if os.environ.get("EXIT_AT_ONCE"):
    print("the app refuses to start: EXIT_AT_ONCE is set", flush=True)
    sys.exit(3)


class Health(BaseHTTPRequestHandler):
    def do_GET(self):
        body = json.dumps({{"status": True, "marker": os.environ.get("MARKER"), "pid": os.getpid(),
                            "library_pid": heavy_library.IMPORTED_IN, "library_saw": heavy_library.SAW,
                            "argv": sys.argv, "cwd": os.getcwd(), "path0": sys.path[0]}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


# A server says how it stops, as uvicorn does: a shell's background job inherits SIGINT ignored, and Python then
# installs no KeyboardInterrupt (a new process and a fork alike).
signal.signal(signal.SIGINT, signal.default_int_handler)
print("serving", os.environ.get("MARKER"), flush=True)
try:
    HTTPServer(("127.0.0.1", int(sys.argv[1])), Health).serve_forever()
except KeyboardInterrupt:
    print("stopped on SIGINT", flush=True)
"""
LIBRARY = "import os\nIMPORTED_IN = os.getpid()\nSAW = os.environ.get('MARKER')\n"


@pytest.fixture
def app_script(tmp_path: Path) -> Path:
    """A Python console script that serves its health and imports a 'heavy library' beside it."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "heavy_library.py").write_text(LIBRARY)
    script = bin_dir / "tiny-app"
    script.write_text(APP)
    script.chmod(0o755)
    return script


def start(script: Path, tmp_path: Path, warm: WarmStart | None, marker: str, **env: str):
    port = free_port()
    return start_process("the tiny app", [str(script), str(port)], env={"MARKER": marker, **env},
                         log_path=tmp_path / f"{marker}.log", health_url=f"http://127.0.0.1:{port}/health",
                         timeout=30, cwd=tmp_path, warm=warm)


def test_starts_fork_the_warm_interpreter_each_with_its_own_environment_and_log(app_script: Path,
                                                                                tmp_path: Path) -> None:
    warm = WarmStart(("heavy_library",), (("MARKER", "the target's"),))
    first, health = start(app_script, tmp_path, warm, "first")
    second, second_health = start(app_script, tmp_path, warm, "second")
    try:
        assert isinstance(first, ForkedProcess) and isinstance(second, ForkedProcess)
        assert health["marker"] == "first" and second_health["marker"] == "second"
        # imported once, by the same warm interpreter, with the target's environment: not in either app process
        assert health["library_pid"] == second_health["library_pid"] not in (first.pid, second.pid)
        assert health["library_saw"] == "the target's"
        assert health["argv"][0] == str(app_script) and health["cwd"] == str(tmp_path)
        assert health["path0"] == str(app_script.parent)
        assert first.poll() is None
    finally:
        stop_process(first)
        stop_process(second)
    assert first.returncode == 0 and second.returncode == 0
    assert (tmp_path / "first.log").read_text().splitlines() == ["serving first", "stopped on SIGINT"]
    assert (tmp_path / "second.log").read_text().splitlines() == ["serving second", "stopped on SIGINT"]


def test_python_dash_m_forks_the_warm_interpreter_and_runs_the_module_as_dash_m_does(app_script: Path,
                                                                                      tmp_path: Path) -> None:
    """The reference app starts as `python -m memchat serve ...`: the module runs as __main__, argv[0] its file,
    the command's folder first on the path, and the preload is imported from that folder."""
    package = tmp_path / "tinyapp"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "__main__.py").write_text(APP.split("\n", 1)[1])  # the same app, without its #! line
    (tmp_path / "heavy_library.py").write_text(LIBRARY)
    port = free_port()
    warm = WarmStart(("heavy_library",), ())
    process, health = start_process("the tiny module", [sys.executable, "-m", "tinyapp", str(port)],
                                    env={"MARKER": "dash-m"}, log_path=tmp_path / "m.log",
                                    health_url=f"http://127.0.0.1:{port}/health", timeout=30, cwd=tmp_path, warm=warm)
    try:
        assert isinstance(process, ForkedProcess)
        assert health["marker"] == "dash-m" and health["pid"] == process.pid
        assert health["library_pid"] != process.pid  # imported once, in the warm interpreter
        assert health["argv"] == [str(package / "__main__.py"), str(port)]
        assert health["path0"] == str(tmp_path) and health["cwd"] == str(tmp_path)
    finally:
        stop_process(process)
    assert process.returncode == 0


def test_a_tool_forked_warm_reads_its_input_and_writes_its_output_through_pipes_as_popen_gives_them(
        tmp_path: Path) -> None:
    """An app's tool (python -m ...) forked from the warm interpreter: its standard input and output are the suite's
    pipes, its error a file, its exit code its own."""
    (tmp_path / "upper.py").write_text("import sys, heavy_library\nsys.stdout.write(sys.stdin.read().upper())\n"
                                       "sys.stderr.write('done')\nsys.exit(4)\n")
    (tmp_path / "heavy_library.py").write_text(LIBRARY)
    with (tmp_path / "err").open("w+b") as err:
        process = popen(WarmStart(("heavy_library",), ()), [sys.executable, "-m", "upper"], cwd=tmp_path,
                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err)
        assert isinstance(process, ForkedProcess) and process.stdin and process.stdout
        process.stdin.write(b"every line\n")
        process.stdin.close()
        assert process.stdout.read() == b"EVERY LINE\n"
        assert process.wait(timeout=30) == 4
        err.seek(0)
        assert err.read() == b"done"


def test_a_killed_warm_start_reports_the_signal_as_popen_does(app_script: Path, tmp_path: Path) -> None:
    process, _ = start(app_script, tmp_path, WarmStart(("heavy_library",), ()), "killed")
    process.kill()
    assert process.wait(timeout=10) == -signal.SIGKILL


def test_an_app_that_exits_at_once_is_said_in_one_line_with_its_last_words(app_script: Path,
                                                                          tmp_path: Path) -> None:
    with pytest.raises(AppLaunchError) as failed:
        start(app_script, tmp_path, WarmStart(("heavy_library",), ()), "refused", EXIT_AT_ONCE="1")
    message = str(failed.value)
    assert "\n" not in message
    assert "the tiny app did not start: the app refuses to start: EXIT_AT_ONCE is set" in message


def test_a_preload_that_does_not_import_is_one_line_naming_it(app_script: Path, tmp_path: Path) -> None:
    with pytest.raises(AppLaunchError) as failed:
        start(app_script, tmp_path, WarmStart(("no_such_library_anywhere",), ()), "missing")
    message = str(failed.value)
    assert "\n" not in message
    assert "could not import its [app] preload: ModuleNotFoundError: No module named 'no_such_library_anywhere'" \
        in message
    assert "MEMTEST_WARM_START=0" in message


def test_a_command_that_is_not_a_python_script_starts_as_a_new_process(app_script: Path, tmp_path: Path) -> None:
    port = free_port()
    process, health = start_process(
        "a shell-started app", ["/bin/sh", "-c", f"exec {app_script} {port}"], env={"MARKER": "sh"},
        log_path=tmp_path / "sh.log", health_url=f"http://127.0.0.1:{port}/health", timeout=30,
        cwd=tmp_path, warm=WarmStart(("heavy_library",), ()))
    stop_process(process)
    assert not isinstance(process, ForkedProcess)
    assert health["library_pid"] == health["pid"] == process.pid  # exec: the shell became the app


def test_without_warm_start_the_same_app_is_a_new_process(app_script: Path, tmp_path: Path) -> None:
    process, health = start(app_script, tmp_path, None, "cold")
    try:
        assert not isinstance(process, ForkedProcess)
        assert health["library_pid"] == health["pid"] == process.pid
    finally:
        stop_process(process)


def test_a_preload_of_the_wrong_shape_is_refused_when_the_target_loads(tmp_path: Path) -> None:
    target = tmp_path / "app.toml"
    target.write_text('name = "x"\ndriver = "memchat"\n[app]\ncommand = ["x"]\npreload = "torch"\n')
    with pytest.raises(TargetError) as failed:
        load_target(str(target))
    assert str(failed.value) == f"{target}: [app] preload must be a list of module names, like [\"torch\"]"


def test_memtest_warm_start_0_turns_it_off(monkeypatch: pytest.MonkeyPatch) -> None:
    assert warm_start_for(["torch"], {}, "t.toml") == WarmStart(("torch",), ())
    monkeypatch.setenv("MEMTEST_WARM_START", "0")
    assert warm_start_for(["torch"], {}, "t.toml") is None


def test_open_webui_preloads_only_libraries_and_not_its_own_modules() -> None:
    """Its own modules read the start's settings (DATA_DIR, DATABASE_URL) as they load: they must load in the fork."""
    warm = load_target("open-webui").warm_start
    assert warm is not None and warm.preload
    assert not [m for m in warm.preload if m.split(".")[0] == "open_webui"]
    # the libraries are imported with the target's own environment, and nothing a start chooses (DATA_DIR, ports)
    assert dict(warm.env) == load_target("open-webui").env and "DATA_DIR" not in dict(warm.env)


@pytest.mark.parametrize("target, own", [("memchat", "memchat"), ("letta", "letta")])
def test_the_reference_app_and_letta_preload_only_libraries_and_not_their_own_modules(target: str, own: str) -> None:
    """Their own modules read the start's settings as they load (memchat its arguments, Letta its database)."""
    warm = load_target(target).warm_start
    assert warm is not None and warm.preload
    assert not [m for m in warm.preload if m.split(".")[0] == own]


def test_the_health_of_a_warm_app_is_its_own(app_script: Path, tmp_path: Path) -> None:
    process, health = start(app_script, tmp_path, WarmStart(("heavy_library",), ()), "own")
    try:
        assert health["pid"] == process.pid
        port = int(health["argv"][1])
        assert httpx.get(f"http://127.0.0.1:{port}/health").json()["pid"] == process.pid
    finally:
        stop_process(process)
