"""Starting the app under test as a separate process, waiting until it is healthy, stopping it cleanly.

The suite reaches the app only through HTTP, the browser and its databases, so the reference app and a team's app are
started the same way: a command line from the target file.
"""

from __future__ import annotations

import os
import secrets
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from harness.target import Target, fill


class AppLaunchError(Exception):
    """One line: why the app could not be started or reached, and what to do."""


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
    process: subprocess.Popen | None = field(default=None, repr=False)

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)  # uvicorn's graceful shutdown; the app closes its pools
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get_health(url: str) -> dict | None:
    try:
        resp = httpx.get(url, timeout=2)
    except httpx.HTTPError:
        return None
    if resp.status_code != 200:
        return None
    try:
        return resp.json()
    except ValueError:
        return {"status": resp.text[:200]}


def start_app(target: Target, *, pg_dsn: str, redis_url: str, settings: dict[str, str], log_path: Path,
              timeout: float = 60.0) -> RunningApp:
    """Start the app with `settings` as `--name value` options and wait until its health answers."""
    port = free_port()
    command = fill(target.start_command, port=str(port), pg_dsn=pg_dsn, redis_url=redis_url)
    for name, value in settings.items():
        command += [f"--{name}", value]
    token = secrets.token_urlsafe(24)
    env = {**os.environ, **target.env, "MEMCHAT_ADMIN_TOKEN": token, "PYTHONUNBUFFERED": "1"}
    log_path.parent.mkdir(parents=True, exist_ok=True)
    log = log_path.open("wb")
    process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env,
                               cwd=Path(__file__).resolve().parent.parent)
    log.close()
    base_url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        health = _get_health(base_url + target.health_path)
        if health is not None:
            return RunningApp(base_url, health, token, pg_dsn, redis_url, dict(settings), True, log_path, process)
        if process.poll() is not None:
            lines = [ln for ln in log_path.read_text(errors="replace").splitlines() if ln.strip()]
            last = lines[-1] if lines else f"exit code {process.returncode}"
            raise AppLaunchError(f"{target.name} did not start: {last} (log: {log_path})")
        time.sleep(0.1)  # polling interval while the server boots
    process.kill()
    raise AppLaunchError(f"{target.name} did not answer {target.health_path} within {timeout:g} s (log: {log_path})")


def attach_app(target: Target, base_url: str, admin_token: str | None) -> RunningApp:
    """An app that is already running (--base-url): check that it answers, start nothing."""
    base_url = base_url.rstrip("/")
    health = _get_health(base_url + target.health_path)
    if health is None:
        raise AppLaunchError(f"no app answers at {base_url}{target.health_path}; start it or fix --base-url")
    return RunningApp(base_url, health, admin_token, started_by_suite=False)
