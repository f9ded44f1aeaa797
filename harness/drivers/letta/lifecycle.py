"""Letta's life cycle: its tables created, started offline on the suite's database and model server with the faults
of its catalogue, attached, described."""

from __future__ import annotations

import hashlib
import subprocess
import tempfile
from pathlib import Path
from urllib.parse import urlsplit

import psycopg

from harness.app.app_launcher import ROOT, AppLaunchError, RunningApp, free_port
from harness.drivers.base import (
    DriverError,
    attached_as,
    catalogue_of,
    faults_of,
    start_in_folder,
    started_on_model_server,
)
from harness.drivers.letta.api import EMBEDDER, SCHEMA_TIMEOUT, TEMPLATE_LOCK, letta_pg_uri
from harness.drivers.letta.common import LettaBase
from harness.services.databases import copy_of_template, scalar
from model_server.client import start_model_server

SCHEMA_SCRIPT = ROOT / "tools" / "letta_schema.py"

# Letta as a team could ship it wrongly: how its documented defaults and a deployment's shortcuts fail users. Each
# switched on by the setting `faults` (the kill matrix's); targets/letta.toml names the scenarios that must catch it.
MISCONFIGURATIONS: dict[str, dict[str, str]] = {
    "default-actor-on": {
        "bug_class": "run as Letta ships, without LETTA_NO_DEFAULT_ACTOR=true",
        "user_sees": "requests as a deleted account or a made-up user id are served, as Letta's default user"},
    "one-organization": {
        "bug_class": "every user put in one organization (Letta's tenant), as its default organization does, and a "
                     "deleted account's user removed from it",
        "user_sees": "a deleted account's agent, conversations and memories stay in the store, the organization's to "
                     "read (each agent still recalls only its own archive)"},
    "agent-without-archival-tools": {
        "bug_class": "agents created as Letta's default agent, whose tools do not include the archival memory",
        "user_sees": "nothing told in one conversation is known in the next"},
}


class LettaLifecycle(LettaBase):
    def _env(self, folder: Path, pg_dsn: str, model_url: str, faults: list[str]) -> dict[str, str]:
        # The target's environment first: what isolation and offline running rest on is the driver's to set.
        env = {**self.target.env, "OPENAI_BASE_URL": model_url, "LETTA_PG_URI": letta_pg_uri(pg_dsn),
               "HOME": str(folder / "home"), "LETTA_DIR": str(folder / "letta"), "ORT_DISABLE_TELEMETRY": "1",
               "LETTA_NO_DEFAULT_ACTOR": "true"}
        if "default-actor-on" in faults:
            del env["LETTA_NO_DEFAULT_ACTOR"]
        return env

    def _prepare_schema(self, pg_dsn: str, env: dict[str, str], log_path: Path) -> None:
        """Letta's tables: a fresh database becomes a copy of a template that holds them (made first, with Letta's
        own ORM, if the server has none): each creation imported all of Letta, about 10 CPU-seconds a fresh app."""
        with psycopg.connect(pg_dsn, connect_timeout=10) as conn:
            if scalar(conn, "SELECT to_regclass('public.organizations') IS NOT NULL"):
                return
        copy_of_template(pg_dsn, self._template_name(), TEMPLATE_LOCK,
                         lambda building: self._create_tables(building, env, log_path))

    @staticmethod
    def _template_name() -> str:
        made_of = (ROOT / "targets" / "letta.pins.txt").read_bytes() + SCHEMA_SCRIPT.read_bytes()
        return f"memtest_letta_{hashlib.sha1(made_of).hexdigest()[:10]}"

    def _create_tables(self, dsn: str, env: dict[str, str], log_path: Path) -> None:
        """Letta's tables, created with Letta's own ORM (the template's build)."""
        python = ROOT / str(self.target.app.get("python", ".tools/letta/bin/python"))
        log = log_path.with_suffix(".schema.log")
        try:
            done = subprocess.run([str(python), str(SCHEMA_SCRIPT)], env={**env, "LETTA_PG_URI": letta_pg_uri(dsn)},
                                  cwd=ROOT, capture_output=True, text=True, timeout=SCHEMA_TIMEOUT)
        except FileNotFoundError:
            raise AppLaunchError(f"{python} does not exist: install Letta with `make letta`") from None
        except subprocess.TimeoutExpired:
            raise AppLaunchError(f"creating Letta's tables took over {SCHEMA_TIMEOUT:g} s") from None
        log.write_text(done.stdout + done.stderr, encoding="utf-8")
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or [f"exit code {done.returncode}"])[-1]
            raise AppLaunchError(f"Letta's tables could not be created: {last} (log: {log})")

    def start(self, *, pg_dsn: str, redis_url: str, settings: dict[str, str], log_path: Path,
              data_dir: Path | None = None, port: int | None = None) -> RunningApp:
        unknown = sorted(k for k, v in settings.items() if v and k != "faults")
        if unknown:
            raise DriverError(f"the letta driver takes no settings but faults, not {', '.join(unknown)}")
        faults = faults_of(settings)
        self.check_faults(faults)
        folder = data_dir or Path(tempfile.mkdtemp(prefix="memtest-letta-", dir="/tmp"))
        (folder / "home").mkdir(parents=True, exist_ok=True)
        (folder / "letta").mkdir(exist_ok=True)
        # Letta stores the model server's address in every agent's model settings: a restart keeps the port.
        model_port = folder / "model-port"
        # The model server answers the chat model the agents are configured with (a handle: provider/name).
        model = start_model_server(log_path.with_suffix(".model.log"),
                                   int(model_port.read_text()) if model_port.exists() else None,
                                   chat_models=(self.model.partition("/")[2] or self.model,))
        model_port.write_text(str(urlsplit(model.base_url).port))
        try:
            env = self._env(folder, pg_dsn, model.base_url, faults)
            self._prepare_schema(pg_dsn, env, log_path)
            port = port or free_port()
            process, health = start_in_folder(self.target, port=port, env=env, log_path=log_path, cwd=folder,
                                              healthy=lambda h: h.get("status") == "ok")
        except BaseException:
            model.stop()
            raise
        return started_on_model_server(port, health, process, model, pg_dsn=pg_dsn, redis_url=redis_url,
                                       settings=settings, log_path=log_path, data_dir=folder, app="Letta",
                                       embedder=EMBEDDER)

    def attach(self, base_url: str, admin_token: str | None) -> RunningApp:
        return attached_as(self.target, base_url, admin_token, app="Letta", embedder=EMBEDDER)

    def describe(self, app: RunningApp) -> dict[str, str]:
        return {"app": f"Letta {app.health.get('version', '')}".strip(), "version": str(app.health.get("version", "")),
                "database": "PostgreSQL + pgvector"}

    def fault_catalogue(self) -> list[dict[str, str]]:
        return catalogue_of(MISCONFIGURATIONS)
