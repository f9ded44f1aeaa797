"""Khoj's life cycle: its database made a copy of a migrated template, started offline on the suite's model server
with the faults a team could ship it with, attached, described."""

from __future__ import annotations

import hashlib
import secrets
import subprocess
import tempfile
from pathlib import Path

import psycopg

from harness.app.app_launcher import ROOT, AppLaunchError, RunningApp, free_port
from harness.drivers.base import (
    AppDriver,
    DriverError,
    attached_as,
    catalogue_of,
    faults_of,
    start_in_folder,
    started_on_model_server,
)
from harness.drivers.khoj.api import (
    CHAT_MODEL_NAME,
    EMBEDDER,
    MISCONFIGURATIONS,
    PINS,
    PREPARE_TIMEOUT,
    SEED,
    TEMPLATE_LOCK,
    postgres_env,
)
from harness.services.databases import copy_of_template, scalar
from model_server.client import start_model_server


class KhojLifecycle(AppDriver):
    @property
    def _python(self) -> Path:
        return ROOT / str(self.target.app.get("python", ".tools/khoj/bin/python"))

    def _env(self, folder: Path, pg_dsn: str, model_url: str) -> dict[str, str]:
        # The target's environment first: the database and the model server are the driver's to set.
        return {**self.target.env, **postgres_env(pg_dsn), "HOME": str(folder / "home"), "OPENAI_BASE_URL": model_url,
                "KHOJ_DEFAULT_CHAT_MODEL": CHAT_MODEL_NAME, "DJANGO_SETTINGS_MODULE": "khoj.app.settings"}

    def _run(self, args: list[str], env: dict[str, str], log: Path, what: str) -> None:
        try:
            done = subprocess.run([str(self._python), *args], env=env, cwd=ROOT, capture_output=True, text=True,
                                  timeout=PREPARE_TIMEOUT)
        except FileNotFoundError:
            raise AppLaunchError(f"{self._python} does not exist: install Khoj with `make khoj`") from None
        except subprocess.TimeoutExpired:
            raise AppLaunchError(f"{what} took over {PREPARE_TIMEOUT:g} s") from None
        with log.open("a", encoding="utf-8") as out:
            out.write(done.stdout + done.stderr)
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or [f"exit code {done.returncode}"])[-1]
            raise AppLaunchError(f"{what} failed: {last} (log: {log})")

    def _template_name(self) -> str:
        made_of = PINS.read_bytes() + SEED.read_bytes()
        return f"memtest_khoj_{hashlib.sha1(made_of).hexdigest()[:10]}"

    def _prepare_database(self, pg_dsn: str, env: dict[str, str], model_url: str, log: Path) -> None:
        """A fresh database becomes a copy of the template (built first if the server has none); then the rows that
        keep Khoj offline point at this start's model server."""
        with psycopg.connect(pg_dsn, connect_timeout=10, autocommit=True) as conn:
            migrated = scalar(conn, "SELECT to_regclass('public.database_khojuser') IS NOT NULL")
        if not migrated:
            copy_of_template(pg_dsn, self._template_name(), TEMPLATE_LOCK,
                             lambda building: self._build_template(building, env, model_url, log))
        if not (self._cross_encoder / "config.json").exists():  # Khoj's environment made again since the template
            self._run([str(SEED), model_url, str(self._cross_encoder)], env, log, "seeding Khoj's offline model rows")
        with psycopg.connect(pg_dsn, connect_timeout=10, autocommit=True) as conn:
            conn.execute("UPDATE database_searchmodelconfig SET embeddings_inference_endpoint = %s", [model_url])
            conn.execute("UPDATE database_aimodelapi SET api_base_url = %s", [model_url])

    @property
    def _cross_encoder(self) -> Path:
        """The local folder Khoj's rows name as its cross-encoder and tokenizer (made by tools/khoj_seed.py)."""
        return self._python.parent.parent / "memtest-cross-encoder"

    def _build_template(self, dsn: str, env: dict[str, str], model_url: str, log: Path) -> None:
        """Khoj's migrations, its offline rows and its static files (the template's build)."""
        env = {**env, **postgres_env(dsn)}
        self._run(["-m", "django", "migrate", "--noinput"], env, log, "Khoj's migrations")
        self._run([str(SEED), model_url, str(self._cross_encoder)], env, log, "seeding Khoj's offline model rows")
        self._run(["-m", "django", "collectstatic", "--noinput"], env, log, "collecting Khoj's static files")

    @staticmethod
    def _set_faults_in_rows(pg_dsn: str, faults: list[str]) -> None:
        """The faults that are a setting in the app's rows, set (anonymous-mode is a word of the command line)."""
        with psycopg.connect(pg_dsn, connect_timeout=10, autocommit=True) as conn:
            if "memory-off-by-default" in faults:
                conn.execute("INSERT INTO database_serverchatsettings (created_at, updated_at, memory_mode) "
                             "VALUES (now(), now(), 'enabled_default_off')")
            if "small-context-window" in faults:
                conn.execute("UPDATE database_chatmodel SET max_prompt_size = 1500")

    def start(self, *, pg_dsn: str, redis_url: str, settings: dict[str, str], log_path: Path,
              data_dir: Path | None = None, port: int | None = None) -> RunningApp:
        unknown = sorted(k for k, v in settings.items() if v and k != "faults")
        if unknown:
            raise DriverError(f"the khoj driver takes no settings but faults, not {', '.join(unknown)}")
        faults = faults_of(settings)
        self.check_faults(faults)
        folder = data_dir or Path(tempfile.mkdtemp(prefix="memtest-khoj-", dir="/tmp"))
        (folder / "home").mkdir(parents=True, exist_ok=True)
        log_path.parent.mkdir(parents=True, exist_ok=True)
        model = start_model_server(log_path.with_suffix(".model.log"), chat_models=(CHAT_MODEL_NAME,))
        try:
            env = self._env(folder, pg_dsn, model.base_url)
            if "secret-key-per-start" in faults:
                env["KHOJ_DJANGO_SECRET_KEY"] = secrets.token_urlsafe(32)
            self._prepare_database(pg_dsn, env, model.base_url, log_path.with_suffix(".prepare.log"))
            if data_dir is None:  # a fresh start; a restart keeps what its data already holds
                self._set_faults_in_rows(pg_dsn, faults)
            extra = ["--anonymous-mode"] if "anonymous-mode" in faults else []
            port = port or free_port()
            process, health = start_in_folder(self.target, port=port, env=env, log_path=log_path, cwd=folder,
                                              extra=extra, default_timeout=240,
                                              log=str(log_path.with_suffix(".khoj.log")))
        except BaseException:
            model.stop()
            raise
        return started_on_model_server(port, health, process, model, pg_dsn=pg_dsn, redis_url=redis_url,
                                       settings=settings, log_path=log_path, data_dir=folder, app="Khoj",
                                       embedder=EMBEDDER)

    def attach(self, base_url: str, admin_token: str | None) -> RunningApp:
        return attached_as(self.target, base_url, admin_token, app="Khoj", embedder=EMBEDDER)

    def describe(self, app: RunningApp) -> dict[str, str]:
        return {"app": f"Khoj {self.version}", "version": self.version, "database": "PostgreSQL + pgvector"}

    @property
    def version(self) -> str:
        return str(self.target.app.get("version", ""))

    def fault_catalogue(self) -> list[dict[str, str]]:
        return catalogue_of(MISCONFIGURATIONS)
