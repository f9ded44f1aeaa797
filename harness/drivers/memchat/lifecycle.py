"""memchat's life cycle: started on the suite's databases and model server, attached, described, refused at a start with
a mistake, its clock moved, its embedding model changed."""

from __future__ import annotations

import json
import secrets
import socket
import subprocess
import tempfile
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import psycopg

from harness.app.app_launcher import (
    ROOT,
    AppLaunchError,
    RunningApp,
    attach_app,
    free_port,
    start_process,
    stop_process,
)
from harness.app.app_tools import run_tool
from harness.app.target import fill
from harness.drivers.base import (
    AppDriver,
    DriverError,
    RefusedStart,
    RestartApp,
)
from harness.drivers.memchat.api import (
    CLOCK_SET_WITHIN,
    NOWHERE_PG,
    NOWHERE_REDIS,
    REFUSED,
    admin_client,
    check,
)
from harness.services.databases import scalar
from harness.suite import report
from harness.warm_start import popen
from model_server.client import ModelServer, start_model_server


class MemchatLifecycle(AppDriver):
    def start(self, *, pg_dsn: str, redis_url: str, settings: dict[str, str], log_path: Path,
              data_dir: Path | None = None, port: int | None = None) -> RunningApp:
        port = port or free_port()
        command = fill(self.target.start_command, port=str(port), pg_dsn=pg_dsn, redis_url=redis_url)
        for name, value in settings.items():
            command += [f"--{name}", value]
        token = secrets.token_urlsafe(24)
        base_url = f"http://127.0.0.1:{port}"
        env = {**self.target.env, self.target.app["admin_token_env"]: token}
        model = self._model_server(log_path)
        if model:  # its model client (memchat/README.md: MEMCHAT_LLM_*) asks the suite's model server, with a key
            env |= {"MEMCHAT_LLM_BASE_URL": model.base_url, "MEMCHAT_LLM_MODEL": self.target.app["chat_model"],
                    "MEMCHAT_LLM_API_KEY": model.api_key or ""}
        try:
            process, health = start_process(self.target.name, command, log_path=log_path, env=env,
                                            health_url=base_url + self.target.health_path,
                                            warm=self.target.warm_start)
        except BaseException:
            if model:
                model.stop()
            raise
        # What its operator reads as it starts (memchat/cli.py, serve), first: where it serves, and which faults are
        # on (given its databases, it starts none of its own, and says nothing of them).
        banner = (f"memchat {health.get('version')}: serving on {base_url} (faults: "
                  f"{','.join(sorted(health.get('faults', []))) or 'none'})")
        said = [line for line in log_path.read_text(encoding="utf-8", errors="replace").splitlines()
                if line.startswith("memchat")]
        if said[:1] != [banner]:
            for started in (process, *(model.processes if model else [])):
                stop_process(started)
            raise DriverError(f"memchat serve, given its databases, started saying {said[:2]}, not {banner!r} first "
                              f"(log: {log_path})")
        # Given a model, its health names it and where it is asked (memchat/README.md, GET /healthz): an app that
        # answers with its built-in assistant instead (the same words) would pass every scenario untested.
        answering = f"{env['MEMCHAT_LLM_MODEL']} at {model.base_url}" if model else "built-in"
        if health.get("assistant") != answering:
            for started in (process, *(model.processes if model else [])):
                stop_process(started)
            raise AppLaunchError(f"memchat, started with {'the model ' + answering if model else 'no model'}, says "
                                 f"its assistant is {health.get('assistant')!r} (GET /healthz; log: {log_path})")
        return RunningApp(base_url, health, token, pg_dsn, redis_url, dict(settings), True, log_path, process,
                          companions=model.processes if model else [], model_url=model.base_url if model else None)

    def _model_server(self, log_path: Path) -> ModelServer | None:
        """The suite's model server for its model client, where the target names the chat model memchat is to ask
        (memchat-model.toml): started as the app's companion, answering that model only, for a fresh random key,
        and as a chat model that calls no tools (memchat offers none: the memory under test is memchat's own)."""
        name = self.target.app.get("chat_model")
        if not name:
            return None
        return start_model_server(log_path.with_suffix(".model.log"), use_tools=False, chat_models=(str(name),),
                                  api_key=secrets.token_urlsafe(24))

    def attach(self, base_url: str, admin_token: str | None) -> RunningApp:
        return attach_app(self.target.name, base_url, self.target.health_path, admin_token)

    def describe(self, app: RunningApp) -> dict[str, str]:
        h = app.health
        return {"app": f"{h.get('app', self.target.name)} {h.get('version', '')}".strip(),
                "postgres": h.get("postgres", ""), "pgvector": h.get("pgvector", ""), "redis": h.get("redis", "")}

    def refused_starts(self, app: RunningApp) -> list[RefusedStart]:
        """memchat serve as an operator may start it wrongly (memchat/cli.py: each a CliError, one line "memchat: ..."
        and exit status 2): on a port another program listens on (it names the address and --port), with a
        database or a Redis nobody answers at (a socket in a folder that does not exist: it names the one it cannot
        reach), with a fault it does not know (it names it)."""
        with socket.socket() as holder:
            holder.bind(("127.0.0.1", 0))
            holder.listen()
            taken = holder.getsockname()[1]
            return [self._refused_start(app, what, named, **values) for what, named, values in (
                ("a port another program listens on", f"memchat: cannot listen on 127.0.0.1:{taken}: ",
                 {"port": str(taken)}),
                ("a database nobody answers at", f"memchat: cannot connect to PostgreSQL at {NOWHERE_PG}: ",
                 {"pg_dsn": NOWHERE_PG}),
                ("a Redis nobody answers at", f"memchat: cannot connect to Redis at {NOWHERE_REDIS}: ",
                 {"redis_url": NOWHERE_REDIS}),
                ("a fault it does not know", "no-such-fault", {"faults": "no-such-fault"}))]

    def _refused_start(self, app: RunningApp, what: str, named: str, **values: str) -> RefusedStart:
        given = {"port": str(free_port()), "pg_dsn": str(app.pg_dsn), "redis_url": str(app.redis_url)}
        settings = {**app.settings, **{k: v for k, v in values.items() if k not in given}}
        command = fill(self.target.start_command, **{**given, **{k: v for k, v in values.items() if k in given}})
        for name, value in settings.items():
            command += [f"--{name}", value]
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            process = popen(self.target.warm_start, command, cwd=ROOT, stdout=out, stderr=err)
            try:
                returncode = process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
                raise DriverError(f"memchat serve with {what} did not end within 60 s: it must refuse to "
                                  "start") from None
            err.seek(0)
            said = tuple(line for line in err.read().decode(errors="replace").splitlines() if line.strip())
        if returncode not in (0, REFUSED):
            raise DriverError(f"memchat serve with {what} ended with exit status {returncode}, where a refusal ends "
                              f"with {REFUSED}; it said {list(said[-3:])}")
        return RefusedStart(what, named, returncode, said)

    def fault_catalogue(self) -> list[dict[str, str]]:
        return json.loads(run_tool(self.target, "list_faults", timeout=60))

    def advance_clock(self, app: RunningApp, days: float) -> None:
        """Moved on by `days`; then set to the time it answered, as a naive time and as the same time at another
        offset: memchat/README.md, POST /api/admin/clock `{"now": ISO-8601}` answers `{"now": ...}`, the time set
        (time keeps running from there: a moment later at most), a naive time taken as UTC (memchat/clock.py)."""
        path = self.target.api["admin_clock"]
        with admin_client(app) as admin:
            moved = datetime.fromisoformat(check(admin.post(path, json={"advance_days": days}),
                                                  "moving the app's clock")["now"])
            for sent in (moved.astimezone(UTC).replace(tzinfo=None), moved.astimezone(timezone(timedelta(hours=2)))):
                answer = check(admin.post(path, json={"now": sent.isoformat()}), "setting the app's clock")["now"]
                now = datetime.fromisoformat(answer)
                if now.tzinfo is None or not moved <= now <= moved + CLOCK_SET_WITHIN:
                    raise DriverError(f"setting memchat's clock to {sent.isoformat()!r} (the {moved.isoformat()} it "
                                      f"had just answered{', a naive time: UTC' if sent.tzinfo is None else ''}), it "
                                      f"answered {answer!r}, not that time")

    def change_embedding_model(self, app: RunningApp, model: str, restart: RestartApp) -> RunningApp:
        """The documented upgrade: stop, re-embed every memory with the new model, start on it."""
        def reembed() -> None:
            with psycopg.connect(str(app.pg_dsn), connect_timeout=10) as conn:
                other = scalar(conn, "SELECT count(*) FROM memories WHERE embedder IS DISTINCT FROM %s", (model,))
            output = run_tool(self.target, "reembed", pg_dsn=str(app.pg_dsn), embedder=model,
                              index=str(app.health.get("index", "hnsw")), faults=app.settings.get("faults", ""))
            report.attach_text("re-embedding output", output)
            # An operator reads this count: every memory the store held under another model, as memchat/README.md
            # says (reembed: "re-embed rows written under another embedder").
            if output != f"re-embedded {other} memories with {model}\n":
                raise DriverError(f"memchat reembed, on a store of {other} memories written under another model than "
                                  f"{model}, said {output.strip()[-200:]!r}, not 're-embedded {other} memories with "
                                  f"{model}'")
        return restart(app, {**app.settings, "embedder": model}, reembed)
