"""Open WebUI's life cycle: started offline on a fresh data folder (its first sign-up the admin) or again on an
earlier one, with the suite's model server and the misconfigurations the kill matrix switches on; attached,
described, upgraded from an older release, its embedding model changed as an admin does it."""

from __future__ import annotations

import json
import secrets
import shlex
import shutil
import tempfile
from pathlib import Path

import httpx

from harness.app.app_launcher import RunningApp, attach_app, free_port, start_process
from harness.app.changes import RELEASE_COMMAND
from harness.app.target import fill
from harness.drivers.base import DriverError, RestartApp, catalogue_of, faults_of
from harness.drivers.open_webui.api import (
    ADMIN_FILE,
    LEFT_BEHIND,
    OpenWebUIParts,
    admin_client,
    check,
    sign_in_admin,
)
from harness.services.http_clients import tls
from model_server.client import ModelServer, start_model_server

# The misconfigurations the kill matrix switches on: each is what an operator really gets wrong, applied the way
# Open WebUI really takes it (its environment, or its admin procedure).
MISCONFIGURATIONS: dict[str, dict[str, str]] = {
    "memories-off": {
        "bug_class": "memories left switched off (ENABLE_MEMORIES=false)",
        "user_sees": "nothing told in one conversation is known in the next",
        "env": "ENABLE_MEMORIES=false"},
    "review-interval-default": {
        "bug_class": "background memory review left at its default interval of 10 turns",
        "user_sees": "facts told in the last few turns are not remembered",
        "env": "MEMORIES_REVIEW_INTERVAL_TURNS=10"},
    "memory-permission-off": {
        "bug_class": "users not granted the memories feature (USER_PERMISSIONS_FEATURES_MEMORIES=false)",
        "user_sees": "a user's memories are never written or recalled",
        "env": "USER_PERMISSIONS_FEATURES_MEMORIES=false"},
    "embedding-change-without-reindex": {
        "bug_class": "embedding model changed in the admin settings without re-indexing the memories",
        "user_sees": "memories written under the old model are no longer found by search",
        "env": ""},
    "no-redis": {
        "bug_class": "run without Redis, so sign-out cannot revoke a token",
        "user_sees": "a signed-out session (a stolen token) still works",
        "env": "REDIS_URL="},
    "upgrade-leaves-vector-store-behind": {
        "bug_class": "the new release started on the old one's database but not on its vector store (the data "
                     "folder copied without vector_db; on PostgreSQL, VECTOR_DB left out of the new environment)",
        "user_sees": "after the upgrade every memory is still listed, and none is found by search or recalled",
        "env": ""},
}


class OpenWebUILifecycle(OpenWebUIParts):
    def _env(self, app_port: int, model: ModelServer, data_dir: Path, secret: str, pg_dsn: str, redis_url: str,
             settings: dict[str, str]) -> dict[str, str]:
        # STATIC_DIR in the data folder: each start empties its static folder and copies the page's assets back, and
        # the default one is inside the installed package, shared by every app running at once (two configurations'
        # starts overlapping served a 500 for /static/loader.js, and a sign-in page that never came).
        env = {**self.target.env, "DATA_DIR": str(data_dir), "STATIC_DIR": str(data_dir / "static"),
               "WEBUI_SECRET_KEY": secret, "PORT": str(app_port),
               "OPENAI_API_BASE_URL": model.base_url, "RAG_OPENAI_API_BASE_URL": model.base_url,
               "REDIS_URL": redis_url}
        if self.postgresql:
            env |= {"DATABASE_URL": pg_dsn}
            if LEFT_BEHIND not in settings:
                env |= {"VECTOR_DB": "pgvector", "PGVECTOR_DB_URL": pg_dsn}
        if "embedder" in settings:
            env["RAG_EMBEDDING_MODEL"] = settings["embedder"]
        for fault in faults_of(settings):
            for assignment in filter(None, MISCONFIGURATIONS[fault]["env"].split()):
                name, _, value = assignment.partition("=")
                env[name] = value
        return env

    def start(self, *, pg_dsn: str, redis_url: str, settings: dict[str, str], log_path: Path,
              data_dir: Path | None = None, port: int | None = None) -> RunningApp:
        # Open WebUI 0.12 offers its builtin tools (add_memory, search_memories, ...) in every browser chat. The memory
        # proven here is its background reviewer's, as in the configurations the kill matrix proved; a model that
        # also wrote memories through those tools left corrections unapplied (both the reviewer's and the tools'
        # memories), a configuration of its own not yet covered.
        model = start_model_server(log_path.with_suffix(".model.log"), use_tools=False)
        try:
            fresh = data_dir is None
            data_dir = data_dir or Path(tempfile.mkdtemp(prefix="memtest-owui-", dir="/tmp"))
            admin = self._admin_record(data_dir)
            port = port or free_port()
            command = fill(self._command(settings), port=str(port))
            process, health = start_process(
                self.target.name, command, log_path=log_path, timeout=float(self.target.app.get("start_timeout", 120)),
                env=self._env(port, model, data_dir, admin["secret"], pg_dsn, redis_url, settings),
                health_url=f"http://127.0.0.1:{port}{self.target.health_path}",
                healthy=lambda h: h.get("status") is True,
                # an older release a change starts forks from a warm interpreter of its own (its environment's
                # libraries): started cold, its imports went past the start timeout in CI under load
                warm=self.target.warm_start)
        except BaseException:
            model.stop()
            raise
        app = RunningApp(f"http://127.0.0.1:{port}", health, None, pg_dsn, redis_url, dict(settings), True, log_path,
                         process, data_dir=data_dir, companions=model.processes, model_url=model.base_url)
        try:
            app.admin_token = self._sign_up_admin(app, admin) if fresh else sign_in_admin(app, admin)
            app.health = {**health, **self._versions(app)}
        except BaseException:
            app.stop()
            raise
        return app

    def _command(self, settings: dict[str, str]) -> list[str]:
        """The target's release, or the older release a change starts first (its command line in the settings)."""
        if RELEASE_COMMAND not in settings:
            return self.target.start_command
        command = shlex.split(settings[RELEASE_COMMAND])
        if not Path(command[0]).exists():
            raise DriverError(f"the older release's command {command[0]} does not exist: `make open-webui` "
                              "installs it")
        return command

    @staticmethod
    def _admin_record(data_dir: Path) -> dict[str, str]:
        path = data_dir / ADMIN_FILE
        if path.exists():
            return json.loads(path.read_text(encoding="utf-8"))
        record = {"email": f"admin+{secrets.token_hex(4)}@memtest.test", "password": secrets.token_urlsafe(16),
                  "secret": secrets.token_urlsafe(32)}
        path.write_text(json.dumps(record), encoding="utf-8")
        return record

    @staticmethod
    def _sign_up_admin(app: RunningApp, admin: dict[str, str]) -> str:
        resp = httpx.post(app.base_url + "/api/v1/auths/signup", verify=tls(), timeout=30,
                          json={"name": "Suite Admin", "email": admin["email"], "password": admin["password"]})
        data = check(resp, "signing up the first user (the admin) of a fresh Open WebUI")
        if data.get("role") != "admin":
            raise DriverError(f"the first sign-up became {data.get('role')!r}, not admin: the data folder was not "
                              "fresh")
        return str(data["token"])

    def _versions(self, app: RunningApp) -> dict[str, str]:
        with admin_client(app) as admin:
            resp = admin.get("/api/version")
        return {"app": "Open WebUI", "version": str(resp.json().get("version", "")) if resp.status_code == 200
                else ""}

    def attach(self, base_url: str, admin_token: str | None) -> RunningApp:
        if not admin_token:
            raise DriverError("an Open WebUI given by --base-url needs an admin's token: pass --admin-token "
                              "(Settings > Account > API keys, or the token of an admin's sign-in)")
        app = attach_app(self.target.name, base_url, self.target.health_path, admin_token)
        app.health = {**app.health, **self._versions(app)}
        return app

    def describe(self, app: RunningApp) -> dict[str, str]:
        return {"app": f"Open WebUI {app.health.get('version', '')}".strip(),
                "database": "PostgreSQL + pgvector" if self.postgresql else "SQLite + Chroma"}

    def fault_catalogue(self) -> list[dict[str, str]]:
        return catalogue_of(MISCONFIGURATIONS)

    def upgrade(self, app: RunningApp, settings: dict[str, str], restart: RestartApp) -> RunningApp:
        """As an operator upgrades: the older release stopped, the target's release started on the same data folder
        and database (it migrates the schema on start)."""
        before = app.health.get("version", "")
        between = None
        if "upgrade-leaves-vector-store-behind" in app.settings.get("faults", ""):
            if self.postgresql:
                settings = {**settings, LEFT_BEHIND: "1"}
            else:
                def between() -> None:  # the data folder carried over without its vector_db
                    assert app.data_dir is not None
                    shutil.rmtree(app.data_dir / "vector_db")
        upgraded = restart(app, settings, between)
        if upgraded.health.get("version", "") == before:
            raise DriverError(f"Open WebUI still runs {before} after the upgrade: the target's command starts the same "
                              "release as the change's")
        return upgraded

    def change_embedding_model(self, app: RunningApp, model: str, restart: RestartApp) -> RunningApp:
        """As an admin does it: the embedding model in the admin settings, then the memories re-indexed."""
        with admin_client(app) as admin:
            config = check(admin.get("/api/v1/retrieval/embedding"), "reading the embedding settings")
            config = {**config, "RAG_EMBEDDING_MODEL": model, "RAG_EMBEDDING_ENGINE": "openai"}
            check(admin.post("/api/v1/retrieval/embedding/update", json=config), "changing the embedding model")
            now = check(admin.get("/api/v1/retrieval/embedding"), "reading the embedding settings")
            if now.get("RAG_EMBEDDING_MODEL") != model:
                raise DriverError(f"Open WebUI still embeds with {now.get('RAG_EMBEDDING_MODEL')!r} after the change "
                                  f"to {model!r}")
            if "embedding-change-without-reindex" not in app.settings.get("faults", ""):
                check(admin.post("/api/v1/memories/reindex"), "re-indexing the memories")
        app.settings = {**app.settings, "embedder": model}
        return app
