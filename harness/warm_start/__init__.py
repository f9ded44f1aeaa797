"""Warm starts of a Python app: its heavy libraries imported once per run, every start a fork of that interpreter.

A target may list, in its [app] table, libraries its app imports at every start that read no setting the suite
varies between starts (`preload = ["torch", "chromadb", ...]`): Open WebUI spends about 7 of its 13 seconds of
start importing them. The first start of such an app starts its own interpreter (the one its console script names)
with those libraries imported once (harness/warm_start/zygote.py); every start is then a fork of it that runs the
app's own script with the start's arguments, environment, folder and log, exactly as a new process would, so a
start costs the app's own work only. An app started as `python -m module ...` (the reference app) is forked the
same way, the module run as -m runs it. The process handle answers as a `subprocess.Popen` does, for the launcher.

Nothing else changes: the app's own modules, and everything that reads the start's settings, load in the fork.
`MEMTEST_WARM_START=0` starts every app as a new process.
"""

from __future__ import annotations

import atexit
import json
import os
import select
import signal
import socket
import subprocess
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

ZYGOTE = Path(__file__).with_name("zygote.py")
# Importing the libraries, compiling them the first time: Open WebUI's (torch, transformers, chromadb, ...) took over
# 120 s in CI on a fresh machine while the kill matrix and Letta ran beside it; a hung interpreter still ends.
READY_TIMEOUT_S = 600.0


class WarmStartError(Exception):
    """One line: why the warm interpreter could not start the app."""


@dataclass(frozen=True)
class WarmStart:
    """What a target's app preloads, and the environment its libraries are imported with (the target's own)."""

    preload: tuple[str, ...]
    env: tuple[tuple[str, str], ...]


def warm_start_for(preload: object, env: dict[str, str], where: str) -> WarmStart | None:
    """The warm start a target's [app] preload asks for, None without one (or with MEMTEST_WARM_START=0)."""
    if preload is None or os.environ.get("MEMTEST_WARM_START") == "0":
        return None
    if not isinstance(preload, list) or not all(isinstance(m, str) and m for m in preload):
        raise WarmStartError(f"{where}: [app] preload must be a list of module names, like [\"torch\"]")
    return WarmStart(tuple(preload), tuple(sorted(env.items()))) if preload else None


def _python_module(command: list[str]) -> str | None:
    """The module of a `python -m module ...` command, None for any other command."""
    name = Path(command[0]).name
    if len(command) > 2 and name.startswith("python") and command[1] == "-m":
        return command[2]
    return None


def interpreter_of(script: str) -> str | None:
    """The Python a console script runs with (its #! line), None when it is not a Python script."""
    try:
        with open(script, "rb") as f:
            first = f.readline(4096)
    except OSError:
        return None
    if not first.startswith(b"#!"):
        return None
    words = first[2:].decode(errors="replace").split()
    return words[0] if words and "python" in Path(words[0]).name else None


class Zygote:
    """One warm interpreter: started once, asked to fork a copy per start, ended with the run."""

    def __init__(self, interpreter: str, script_dir: str, warm: WarmStart, log_path: Path) -> None:
        self._lock = threading.Lock()
        env = {**os.environ, **dict(warm.env), "PYTHONUNBUFFERED": "1"}
        log_path.parent.mkdir(parents=True, exist_ok=True)
        self._fds, theirs = socket.socketpair()  # a tool's standard input and output go to its copy through this
        try:
            with log_path.open("wb") as log:  # what the libraries print as they load (warnings)
                self._process = subprocess.Popen(
                    [interpreter, str(ZYGOTE), str(theirs.fileno()), script_dir, *warm.preload], env=env,
                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, text=True, bufsize=1,
                    pass_fds=[theirs.fileno()])
        except OSError as e:
            raise WarmStartError(f"{interpreter} could not be started ({e.strerror})") from None
        finally:
            theirs.close()
        assert self._process.stdin is not None and self._process.stdout is not None  # both piped above
        self._stdin, self._stdout = self._process.stdin, self._process.stdout
        said = self._read(READY_TIMEOUT_S)
        if "error" in said:
            self._process.wait()
            raise WarmStartError(f"{interpreter} could not import its [app] preload: {said['error']}; fix the "
                                 f"target's preload list, or set MEMTEST_WARM_START=0 (log: {log_path})")

    def _read(self, timeout: float) -> dict:
        ready, _, _ = select.select([self._stdout], [], [], timeout)
        line = self._stdout.readline() if ready else ""
        if not line:
            self._process.kill()
            raise WarmStartError("the warm interpreter of the app stopped answering"
                                 + ("" if ready else f" within {timeout:g} s"))
        return json.loads(line)

    def ask(self, request: dict, fds: list[int] | None = None) -> dict:
        """One request and its answer; `fds` go with it over the socket (a start with "stdio")."""
        with self._lock:
            if self._process.poll() is not None:
                raise WarmStartError("the warm interpreter of the app has ended")
            self._stdin.write(json.dumps(request) + "\n")
            self._stdin.flush()
            if fds:
                socket.send_fds(self._fds, [b"."], fds)
            return self._read(30.0)

    def start(self, command: list[str], env: dict[str, str], cwd: Path, log_path: Path,
              module: str | None = None) -> ForkedProcess:
        said = self.ask({"op": "start", "argv": command, "env": env, "cwd": str(cwd), "log": str(log_path),
                         "module": module})
        return ForkedProcess(self, said["pid"], command)

    def run(self, command: list[str], env: dict[str, str], cwd: Path, stdio: tuple[int, int, int],
            module: str | None = None) -> ForkedProcess:
        """A copy whose standard input, output and error are the three file descriptors `stdio`."""
        said = self.ask({"op": "start", "argv": command, "env": env, "cwd": str(cwd), "module": module, "stdio": True},
                        list(stdio))
        return ForkedProcess(self, said["pid"], command)

    def close(self) -> None:
        self._fds.close()
        if self._process.poll() is None:
            self._stdin.close()
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()


class ForkedProcess:
    """A started app that is the warm interpreter's child: the part of `subprocess.Popen` the launcher uses."""

    def __init__(self, zygote: Zygote, pid: int, args: list[str]) -> None:
        self.zygote, self.pid, self.args = zygote, pid, args
        self.returncode: int | None = None
        self.stdin: IO[bytes] | None = None  # the ends of its pipes, as Popen's (popen)
        self.stdout: IO[bytes] | None = None
        self._exited = os.pidfd_open(pid)  # readable once the process has ended, though it is not our child

    def poll(self) -> int | None:
        if self.returncode is None:
            ended, _, _ = select.select([self._exited], [], [], 0)
            if ended:
                self.returncode = self.zygote.ask({"op": "status", "pid": self.pid})["returncode"]
                if self.returncode is not None:
                    os.close(self._exited)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            ended, _, _ = select.select([self._exited], [], [], timeout)
            if not ended:
                raise subprocess.TimeoutExpired(self.args, timeout or 0)
        code = self.poll()
        if code is None:  # a pidfd is readable once its process has ended: its parent can reap it at once
            raise WarmStartError(f"process {self.pid} ended but its warm interpreter does not know its exit code")
        return code

    def send_signal(self, sig: int) -> None:
        if self.returncode is None:
            signal.pidfd_send_signal(self._exited, sig)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


_zygotes: dict[tuple[str, str, WarmStart], Zygote] = {}
_zygotes_lock = threading.Lock()


def _zygote_for(warm: WarmStart, command: list[str], cwd: Path, log_path: Path) -> tuple[Zygote, str | None] | None:
    """The warm interpreter `command` forks from, and its -m module; None when it is neither a Python console script
    nor `python -m module ...`. Its libraries are imported as the command would find them: from the script's folder
    first, or (for -m) from the command's folder."""
    module = _python_module(command)
    interpreter = command[0] if module else interpreter_of(command[0])
    if interpreter is None:
        return None
    first_on_path = str(cwd.resolve()) if module else str(Path(command[0]).resolve().parent)
    key = (interpreter, first_on_path, warm)
    with _zygotes_lock:
        if key not in _zygotes:
            _zygotes[key] = Zygote(interpreter, first_on_path, warm, log_path.with_suffix(".warm-start.log"))
        return _zygotes[key], module


def start_warm(warm: WarmStart, command: list[str], env: dict[str, str], cwd: Path,
               log_path: Path) -> ForkedProcess | None:
    """Start `command` as a fork of its warm interpreter, its output in `log_path`; None when it is neither a Python
    console script nor `python -m module ...`."""
    found = _zygote_for(warm, command, cwd, log_path)
    return found[0].start(command, env, cwd, log_path, found[1]) if found else None


Stdio = int | IO[Any] | None  # subprocess.PIPE, an open file, or None (nothing in; out and err: the suite's own)


def popen(warm: WarmStart | None, command: list[str], *, cwd: Path, stdin: Stdio = None, stdout: Stdio = None,
          stderr: Stdio = None) -> subprocess.Popen | ForkedProcess:
    """`command` as `subprocess.Popen` runs it (the suite's environment, binary pipes for PIPE), forked from its warm
    interpreter when `warm` is given and it is a Python command: an app's tool then costs its own work only."""
    found = _zygote_for(warm, command, cwd, Path(tempfile.gettempdir()) / f"memtest-{os.getpid()}.log") \
        if warm else None
    if found is None:
        return subprocess.Popen(command, stdin=stdin if stdin is not None else subprocess.DEVNULL, stdout=stdout,
                                stderr=stderr, cwd=cwd)
    ours: dict[int, IO[bytes]] = {}
    theirs: list[int] = []
    opened: list[int] = []
    for number, given in enumerate((stdin, stdout, stderr)):
        if given == subprocess.PIPE:
            read, write = os.pipe()
            ours[number] = os.fdopen(write if number == 0 else read, "wb" if number == 0 else "rb")
            theirs.append(read if number == 0 else write)
            opened.append(theirs[-1])
        elif given is None:
            theirs.append(os.open(os.devnull, os.O_RDONLY) if number == 0 else number)
            if number == 0:
                opened.append(theirs[-1])
        else:
            theirs.append(given if isinstance(given, int) else given.fileno())
    try:
        process = found[0].run(command, dict(os.environ), cwd, (theirs[0], theirs[1], theirs[2]), found[1])
    except BaseException:
        for end in ours.values():
            end.close()
        raise
    finally:
        for fd in opened:  # the copy has its own: ours would keep its input open, or its output from ending
            os.close(fd)
    process.stdin, process.stdout = ours.get(0), ours.get(1)
    return process


@atexit.register
def close_all() -> None:
    """End every warm interpreter of this process (the apps they started were stopped by their fixtures)."""
    with _zygotes_lock:
        for zygote in _zygotes.values():
            zygote.close()
        _zygotes.clear()
