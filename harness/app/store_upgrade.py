"""A store upgraded as an operator upgrades PostgreSQL + pgvector: the app stopped, its database dumped with pg_dump
and restored with psql into a database of the newer server, whose `CREATE EXTENSION vector` is its own pgvector
version; the app is then started on the new database.

pg_dump must be at least as new as the server it dumps: the embedded provider's own (PostgreSQL 16) dumps the
embedded server, the one with the older pgvector; `PATH`'s is used where there is no embedded provider.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import psycopg

from harness.app.app_factory import AppFactory
from harness.services.databases import ProviderError


def pgvector_default_version(admin_dsn: str) -> str:
    """The pgvector version a new database of this server gets."""
    with psycopg.connect(admin_dsn, connect_timeout=10) as conn:
        row = conn.execute("SELECT default_version FROM pg_available_extensions WHERE name = 'vector'").fetchone()
    if row is None:
        raise ProviderError("the PostgreSQL server has no pgvector extension to upgrade")
    return str(row[0])


@dataclass(frozen=True)
class Server:
    apps: AppFactory
    version: str  # the pgvector version a new database of its gets


def by_pgvector_version(factories: list[AppFactory]) -> list[Server]:
    """The apps' database servers, the one with the oldest pgvector first."""
    servers = [Server(f, pgvector_default_version(f.pg_admin_dsn)) for f in factories]
    return sorted(servers, key=lambda s: tuple(int(n) for n in s.version.split(".") if n.isdigit()))


def _client(name: str) -> str:
    try:
        import pgserver
    except ImportError:
        shipped = None
    else:
        shipped = Path(pgserver.__file__).parent / "pginstall" / "bin" / name
    if shipped is not None:
        if shipped.exists():
            return str(shipped)
    found = shutil.which(name)
    if found is None:
        raise ProviderError(f"{name} is needed to move a database to another server: install PostgreSQL's client "
                            "tools, or `pip install pgserver`")
    return found


def dump_and_restore(source_dsn: str, target_dsn: str, timeout: float = 900) -> str:
    """Every table, row and index of the source database into the (empty) target one; psql stops at the first
    error. Returns what psql reported, for the report."""
    dump = subprocess.run([_client("pg_dump"), "--no-owner", "--no-privileges", f"--dbname={source_dsn}"],
                          capture_output=True, timeout=timeout)
    if dump.returncode != 0:
        raise ProviderError(f"pg_dump failed: {dump.stderr.decode(errors='replace').strip().splitlines()[-1:]}")
    restore = subprocess.run([_client("psql"), "--quiet", "--set=ON_ERROR_STOP=1", f"--dbname={target_dsn}"],
                             input=dump.stdout, capture_output=True, timeout=timeout)
    if restore.returncode != 0:
        raise ProviderError(f"restoring the dump failed: "
                            f"{restore.stderr.decode(errors='replace').strip().splitlines()[-1:]}")
    return f"{len(dump.stdout):,} bytes dumped and restored\n{restore.stderr.decode(errors='replace')}"
