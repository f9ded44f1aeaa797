"""memchat run by its operator on databases of its own (memchat/README.md: `serve` given no --pg and --redis starts
embedded PostgreSQL + pgvector and Redis, their data in --data-dir): an account added there on its command line, the
app started there and what it says as it starts, and how it ends when stopped."""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
from pathlib import Path

from harness.app.app_launcher import ROOT, RunningApp, free_port, get_health
from harness.app.target import fill
from harness.drivers.base import Account, AppDriver, DriverError, StoppedApp
from harness.vocabulary.polling import Timeout, wait_until

# memchat/README.md, Run it: `serve` stops on SIGTERM with exit status 0 and on Ctrl-C (SIGINT) with 130.
STOPS = {False: ("with SIGTERM", signal.SIGTERM, 0), True: ("with Ctrl-C", signal.SIGINT, 130)}
# The settings an operator's shell may hold that would give it databases: an operator starting it on its own has none.
GIVEN_DATABASES = ("MEMCHAT_PG", "MEMCHAT_REDIS", "MEMCHAT_DATA_DIR")


def _lines(path: Path) -> list[str]:
    return [line for line in path.read_text(encoding="utf-8", errors="replace").splitlines() if line.strip()] \
        if path.exists() else []


def running_in(folder: Path, but: int | None = None) -> tuple[str, ...]:
    """Each process but `but` whose command line names `folder` or whose working directory is in it ("pid command"):
    the servers memchat started there (its PostgreSQL runs with -D <folder>/pg, its Redis in the folder)."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == but:
            continue
        try:
            command = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
            cwd = os.readlink(proc / "cwd")
        except OSError:  # it ended meanwhile, or is no process of ours to read
            continue
        if command and (str(folder) in command or Path(cwd).is_relative_to(folder)):
            found.append(f"{proc.name} {command[:120]}")
    return tuple(found)


class MemchatOwnDatabases(AppDriver):
    def _operator_env(self) -> dict[str, str]:
        """The suite's environment as an operator's shell: no databases given, and its output not forced unbuffered
        (what it prints must reach a log or a journal as it is printed, not only once it ends)."""
        return {**{k: v for k, v in os.environ.items() if k not in (*GIVEN_DATABASES, "PYTHONUNBUFFERED")},
                **self.target.env}

    def _nothing_left_in(self, folder: Path, but: int | None = None) -> tuple[str, ...]:
        """What still runs in the folder once the servers had 10 s to end, ended by the suite then (so that no run
        leaves them behind)."""
        try:
            wait_until(lambda: running_in(folder, but), lambda found: not found, timeout=10,
                       what=f"the servers in {folder} ending")
            return ()
        except Timeout:
            left = running_in(folder, but)
        for entry in left:
            try:
                os.kill(int(entry.split()[0]), signal.SIGKILL)
            except OSError:
                pass
        return left

    def add_user_in_data_folder(self, folder: Path, name: str, email: str, password: str) -> Account:
        """`memchat users add EMAIL --data-dir FOLDER` (memchat/cli.py: its embedded servers, started for the tool
        and stopped as it ends), which says "added EMAIL (ID)" and leaves nothing running there."""
        command = self.target.tool("users_add_in_data_folder", email=email, password=password, data_dir=str(folder))
        run = subprocess.run(command, cwd=ROOT, env=self._operator_env(), capture_output=True, text=True, timeout=180)
        said = run.stdout.strip()
        if run.returncode != 0 or not said.startswith(f"added {email} (") or len(said.splitlines()) != 1:
            raise DriverError(f"memchat users add {email} --data-dir {folder} ended with exit status "
                              f"{run.returncode} and said {(said or run.stderr.strip())[-300:]!r}, not 'added {email} "
                              "(<id>)'")
        left = self._nothing_left_in(folder)
        if left:
            raise DriverError(f"memchat users add --data-dir {folder} ended and left running {list(left)}")
        return Account(said[len(f"added {email} ("):-1], email, password, name)

    def start_on_own_databases(self, folder: Path, log_path: Path, port: int | None = None,
                               pg_dsn: str | None = None) -> RunningApp:
        """`memchat serve --data-dir FOLDER` (with `pg_dsn`: `--pg DSN` too, its Redis alone its own), which names its
        data folder as it starts, before its databases run (memchat/README.md: "data folder printed on start"; a
        first start sets them up), then where it serves and, on its own PostgreSQL, how to add a user there, and
        nothing else; and its `--version` names the version it serves."""
        port = port or free_port()
        base_url = f"http://127.0.0.1:{port}"
        token = secrets.token_urlsafe(24)
        command = fill(self.target.app["own_databases_command"], port=str(port), data_dir=str(folder))
        command += ["--pg", pg_dsn] if pg_dsn else []  # memchat/README.md: --pg, "default: embedded"
        errors = log_path.with_suffix(".err.log")
        log_path.parent.mkdir(parents=True, exist_ok=True)
        with log_path.open("wb") as out, errors.open("wb") as err:
            process = subprocess.Popen(command, stdout=out, stderr=err, stdin=subprocess.DEVNULL, cwd=ROOT,
                                       env={**self._operator_env(), self.target.app["admin_token_env"]: token})
        folder_named = f"memchat: embedded {'Redis' if pg_dsn else 'PostgreSQL + pgvector and Redis'}, data in {folder}"
        databases_first: list[tuple[str, ...]] = []  # what ran in the folder at a look that found no such line yet

        def look() -> dict | None:
            running = running_in(folder, process.pid)  # first: a line printed before they ran is in the log by then
            if running and folder_named not in _lines(log_path) and not databases_first:
                databases_first.append(running)
            return get_health(base_url + self.target.health_path) if process.poll() is None else {}

        try:
            health = wait_until(look, lambda h: h is not None, timeout=120, interval=0.02,
                                what=f"memchat serve on its own databases in {folder} answering {base_url}")
        except Timeout as e:
            process.kill()
            process.wait()
            self._nothing_left_in(folder)
            raise DriverError(str(e)) from None
        if not health:
            self._nothing_left_in(folder)
            raise DriverError(f"memchat serve on its own databases in {folder} ended with exit status "
                              f"{process.returncode}: {(_lines(errors) or ['it said nothing'])[-1]}")
        app = RunningApp(base_url, health, token, pg_dsn, None, {}, True, log_path, process, data_dir=folder)
        promised = [folder_named, f"memchat {health.get('version')}: serving on {base_url} (faults: none)",
                    *([] if pg_dsn else [f"memchat: add a user with: python -m memchat users add you@example.com "
                                         f"--data-dir {folder}"])]
        wrong = "" if _lines(log_path) == promised else f"said {_lines(log_path)} as it served, not {promised}"
        version = subprocess.run(self.target.tool("version"), cwd=ROOT, env=self._operator_env(), capture_output=True,
                                 text=True, timeout=60)
        if not wrong and (version.returncode, version.stdout) != (0, f"memchat {health.get('version')}\n"):
            wrong = (f"serves version {health.get('version')!r}, while `--version` ended with exit status "
                     f"{version.returncode} and said {(version.stdout or version.stderr).strip()[-200:]!r}")
        if databases_first and not wrong:
            wrong = (f"named its data folder only once its databases there ran ({list(databases_first[0][:2])}): "
                     "nothing said where its data goes while it set them up")
        if wrong:
            self.stop_on_own_databases(app)
            raise DriverError(f"memchat serve on its own databases in {folder} {wrong}")
        return app

    def stop_on_own_databases(self, app: RunningApp, interrupt: bool = False) -> StoppedApp:
        how, sent, promised = STOPS[interrupt]
        assert app.process is not None and app.data_dir is not None and app.log_path is not None
        app.process.send_signal(sent)
        try:
            returncode = app.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            app.process.kill()
            returncode = app.process.wait()
        said = tuple(_lines(app.log_path.with_suffix(".err.log")))
        return StoppedApp(how, returncode, promised, said, self._nothing_left_in(app.data_dir))
