"""Run a command against a PostgreSQL+pgvector container started through testcontainers: its DSN is given to the
command in MEMCHAT_TEST_PG_DSN (memchat's tests use it instead of starting pgserver). The image is $MEMTEST_PG_IMAGE
(e.g. `make engine`'s pgvector 0.8.0 build), else the pinned public one. The container is removed afterwards.

    python tools/on_container_postgres.py -- .venv/bin/python -m pytest memchat/tests/test_recall_exactness.py
"""

from __future__ import annotations

import os
import subprocess
import sys

from harness.services.databases import PG_IMAGE, PG_IMAGE_ENV, ProviderError, _probe_docker


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    command = argv[argv.index("--") + 1:] if "--" in argv else argv
    if not command:
        print("usage: on_container_postgres.py -- COMMAND ...", file=sys.stderr)
        return 2
    problem = _probe_docker()
    if problem is not None:
        raise SystemExit(f"on_container_postgres: no Docker engine answers ({problem}); run `make engine` and its "
                         "exports first")
    from testcontainers.community.postgres import PostgresContainer

    image = os.environ.get(PG_IMAGE_ENV) or PG_IMAGE
    try:
        with PostgresContainer(image, username="memtest", password="memtest", dbname="memtest", driver=None) as pg:
            dsn = pg.get_connection_url(driver=None)
            print(f"on_container_postgres: {image} at {dsn.split('@')[-1]}", flush=True)
            return subprocess.run(command, env={**os.environ, "MEMCHAT_TEST_PG_DSN": dsn}).returncode
    except ProviderError as e:
        raise SystemExit(f"on_container_postgres: {e}") from None


if __name__ == "__main__":
    sys.exit(main())
