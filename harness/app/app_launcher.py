"""Starting an app (or a process that serves it) as a separate process, waiting until it is healthy, and stopping
it cleanly. The suite reaches apps only through HTTP, the browser and their databases, so every app is started the
same way: a command line, an environment and a health address, given by its driver from the target file."""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from harness.services.http_clients import tls
from harness.warm_start import ForkedProcess, WarmStart, WarmStartError, start_warm

ROOT = Path(__file__).resolve().parents[2]


class AppLaunchError(Exception):
    """One line: why the app could not be started or reached, and what to do."""


def install_command(program: str, cwd: Path = ROOT) -> str:
    """What installs a program the suite starts: the make target of its folder under .tools/ (an older release's
    folder carries its version: `make open-webui` installs .tools/open-webui-0.11.4 too), `make setup` for the
    project's own environment; otherwise the target file's command to correct."""
    path = Path(os.path.abspath(cwd / program))
    parts = path.relative_to(ROOT).parts if path.is_relative_to(ROOT) else ()
    if parts[:1] == (".venv",):
        return "make setup"
    if parts[:1] == (".tools",) and len(parts) > 2:
        makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
        for name in (parts[1], re.sub(r"-[0-9][0-9A-Za-z.]*$", "", parts[1])):
            if re.search(rf"^{re.escape(name)}:", makefile, re.MULTILINE):
                return f"make {name}"
    return ""


def not_installed(name: str, program: str, cwd: Path = ROOT) -> str | None:
    """One line naming the command that installs `program`, where it does not exist; None where it does."""
    if (cwd / program).exists() if "/" in program else shutil.which(program) is not None:
        return None
    command = install_command(program, cwd)
    how = f"install it with `{command}`" if command else "install it, or correct [app] command in its target file"
    return f"{name} is not installed ({program} does not exist): {how}"


@dataclass
class RunningApp:
    base_url: str
    health: dict
    admin_token: str | None = field(default=None, repr=False)
    pg_dsn: str | None = field(default=None, repr=False)
    redis_url: str | None = field(default=None, repr=False)
    settings: dict[str, str] = field(default_factory=dict)
    started_by_suite: bool = False
    log_path: Path | None = None
    process: subprocess.Popen | ForkedProcess | None = field(default=None, repr=False)
    data_dir: Path | None = None  # the app's own data folder, where its driver gives it one
    companions: list[subprocess.Popen | ForkedProcess] = field(default_factory=list, repr=False)  # its model server
    model_url: str | None = None  # the deterministic model server the suite started for it
    started_in_s: float | None = None  # how long its start took, where the suite started it

    @property
    def running(self) -> bool:
        return self.process is None or self.process.poll() is None

    def stop(self) -> None:
        for process in [self.process, *self.companions]:
            stop_process(process)


def stop_process(process: subprocess.Popen | ForkedProcess | None) -> None:
    if process and process.poll() is None:
        process.send_signal(signal.SIGINT)  # a graceful shutdown: servers close their pools and children
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get_health(url: str) -> dict | None:
    try:
        resp = httpx.get(url, verify=tls(), timeout=2)
    except httpx.HTTPError:
        return None
    if resp.status_code != 200:
        return None
    try:
        data = resp.json()
    except ValueError:
        return None  # an app that answers every address with its HTML page is not saying it is healthy
    return data if isinstance(data, dict) else None


def start_process(name: str, command: list[str], *, env: dict[str, str], log_path: Path, health_url: str,
                  timeout: float = 60.0, healthy: Callable[[dict], bool] = lambda _: True,
                  cwd: Path = ROOT, warm: WarmStart | None = None) -> tuple[subprocess.Popen | ForkedProcess, dict]:
    """Start `command` with its output in `log_path`; return it and its health once `health_url` answers. With
    `warm` (the target's [app] preload), a Python console script starts as a fork of its warm interpreter."""
    missing = not_installed(name, command[0], cwd)
    if missing:  # before a warm start, whose own error would not say how to install it
        raise AppLaunchError(missing)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    full_env = {**os.environ, **env, "PYTHONUNBUFFERED": "1"}
    process: subprocess.Popen | ForkedProcess | None
    try:
        process = start_warm(warm, command, full_env, cwd, log_path) if warm else None
    except WarmStartError as e:
        raise AppLaunchError(f"{name} could not be started warm: {e}") from None
    if process is None:
        with log_path.open("wb") as log:
            try:
                process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, cwd=cwd, env=full_env)
            except OSError as e:
                raise AppLaunchError(f"{name} could not be started ({command[0]}: {e.strerror})") from None
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        health = get_health(health_url)
        if health is not None and healthy(health):
            return process, health
        if process.poll() is not None:
            lines = [ln for ln in log_path.read_text(errors="replace").splitlines() if ln.strip()]
            last = lines[-1] if lines else f"exit code {process.returncode}"
            raise AppLaunchError(f"{name} did not start: {last} (log: {log_path})")
        time.sleep(0.1)  # polling interval while the server boots
    stop_process(process)
    raise AppLaunchError(f"{name} did not answer {health_url} within {timeout:g} s (log: {log_path})")


def attach_app(name: str, base_url: str, health_path: str, admin_token: str | None) -> RunningApp:
    """An app that is already running (--base-url): check that it answers, start nothing."""
    base_url = base_url.rstrip("/")
    health = get_health(base_url + health_path)
    if health is None:
        raise AppLaunchError(f"no {name} answers at {base_url}{health_path}; start it or fix --base-url")
    return RunningApp(base_url, health, admin_token, started_by_suite=False)
