"""What drivers share to start or attach an app: a process in its folder, an app on the suite's model server, the
faults and misconfigurations of a target."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from harness.app.app_launcher import ROOT, RunningApp, attach_app, start_process
from harness.app.target import Target, fill
from model_server.client import ModelServer


def faults_of(settings: dict[str, str]) -> list[str]:
    """The faults an app's settings switch on (the kill matrix's `faults`, comma-separated)."""
    return [name for name in settings.get("faults", "").split(",") if name]


def catalogue_of(misconfigurations: dict[str, dict[str, str]]) -> list[dict[str, str]]:
    """A driver's misconfigurations by name as its `fault_catalogue`: name, bug_class, what the user sees."""
    return [{"name": name, "bug_class": m["bug_class"], "user_sees": m["user_sees"]}
            for name, m in misconfigurations.items()]


def start_in_folder(target: Target, *, port: int, env: dict[str, str], log_path: Path, cwd: Path,
                    extra: Sequence[str] = (), healthy: Callable[[dict], bool] = lambda _: True,
                    default_timeout: float = 180.0, **values: str) -> tuple[Any, dict]:
    """The target's start command ({port} and `values` filled in, then `extra`) started in the app's own folder,
    a relative program path taken from the project's root; the process and its health once it answers."""
    command = fill(target.start_command, port=str(port), **values)
    if "/" in command[0] and not Path(command[0]).is_absolute():
        command[0] = str(ROOT / command[0])
    return start_process(target.name, [*command, *extra], env=env, log_path=log_path,
                         health_url=f"http://127.0.0.1:{port}{target.health_path}", cwd=cwd,
                         timeout=float(target.app.get("start_timeout", default_timeout)), healthy=healthy,
                         warm=target.warm_start)


def started_on_model_server(port: int, health: dict, process: Any, model: ModelServer, *, pg_dsn: str,
                            redis_url: str, settings: dict[str, str], log_path: Path, data_dir: Path,
                            **described: str) -> RunningApp:
    """An app the suite started in its own folder against its own model server (the app's companion, stopped with
    it); `described`: what its health is told besides (its name, its embedder)."""
    return RunningApp(f"http://127.0.0.1:{port}", {**health, **described}, None, pg_dsn, redis_url, dict(settings),
                      True, log_path, process, data_dir=data_dir, companions=model.processes,
                      model_url=model.base_url)


def attached_as(target: Target, base_url: str, admin_token: str | None, **described: str) -> RunningApp:
    """A running app of the target's, checked to answer, its health told what the driver knows of it."""
    app = attach_app(target.name, base_url, target.health_path, admin_token)
    app.health = {**app.health, **described}
    return app
