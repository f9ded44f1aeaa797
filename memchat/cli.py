"""`python -m memchat ...`: serve, manage users, migrate, export, embed, re-embed, load the legacy store."""

from __future__ import annotations

import argparse
import getpass
import itertools
import json
import os
import re
import signal
import socket
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import IO
from zoneinfo import ZoneInfo

from memchat import __version__
from memchat.embedders import DEFAULT_EMBEDDER, EMBEDDERS, get_embedder
from memchat.faults import CATALOG, UnknownFault, markdown_table, parse_faults
from memchat.legacy_times import LegacyTimeError, zone_named
from memchat.records import ENCODINGS, RecordError, legacy_record, read_lines, vector_fields
from memchat.settings import DEFAULT_INDEX_BUILD_MEMORY, INDEX_KINDS, Settings


class CliError(Exception):
    """A one-line message for the person at the terminal; exit code 2."""


def _env(name: str, default: str | None = None) -> str | None:
    return os.environ.get(name, default)


def _add_store_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--pg", default=_env("MEMCHAT_PG"), help="PostgreSQL DSN (default: embedded server)")
    p.add_argument("--redis", default=_env("MEMCHAT_REDIS"), help="Redis URL (default: embedded server)")
    p.add_argument("--data-dir", default=_env("MEMCHAT_DATA_DIR"), help="data folder of the embedded servers")


def _add_model_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--faults", default=_env("MEMCHAT_FAULTS", ""), help="comma-separated faults to switch on")
    p.add_argument("--embedder", default=_env("MEMCHAT_EMBEDDER", DEFAULT_EMBEDDER), choices=sorted(EMBEDDERS))
    p.add_argument("--index", default=_env("MEMCHAT_INDEX", "hnsw"), choices=INDEX_KINDS)


def _add_index_build_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--index-build-memory", default=_env("MEMCHAT_INDEX_BUILD_MEMORY", DEFAULT_INDEX_BUILD_MEMORY),
                   help="maintenance_work_mem of the index build, e.g. 512MB, or auto: the room the HNSW graph of "
                        "the rows needs (a graph that fits builds ~7x faster; one that does not is warned of)")
    p.add_argument("--index-graph-rows", type=int, default=int(_env("MEMCHAT_INDEX_GRAPH_ROWS", "100000")),
                   help="rows a part of the HNSW index built after a bulk load (one graph over a million rows "
                        "builds 16x slower than one over 100,000; ten of 100,000, 10x)")


def _add_encoding_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--encoding", default="json", choices=ENCODINGS,
                   help='vectors as "embedding" (JSON numbers) or "embedding_f32" (base64 of float32 LE, fast)')


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m memchat", description="memchat, a chat app with long-term memory")
    ap.add_argument("--version", action="version", version=f"memchat {__version__}")
    sub = ap.add_subparsers(dest="command", required=True)

    s = sub.add_parser("serve", help="run the web app")
    _add_store_args(s)
    _add_model_args(s)
    s.add_argument("--host", default=_env("MEMCHAT_HOST", "127.0.0.1"))
    s.add_argument("--port", type=int, default=int(_env("MEMCHAT_PORT", "8000")))
    s.add_argument("--threshold", type=float, default=float(_env("MEMCHAT_THRESHOLD", "0.25")))
    s.add_argument("--top-k", type=int, default=int(_env("MEMCHAT_TOP_K", "5")))
    s.add_argument("--ann-min-rows", type=int, default=int(_env("MEMCHAT_ANN_MIN_ROWS", "100000")))
    s.add_argument("--ttl-days", type=float, default=float(_env("MEMCHAT_TTL_DAYS", "365")))
    s.add_argument("--clock", choices=("wall", "settable"), default=_env("MEMCHAT_CLOCK", "wall"))

    u = sub.add_parser("users", help="add or delete users")
    u.add_argument("action", choices=("add", "delete"))
    u.add_argument("email")
    u.add_argument("--password", help="(add) the password; asked for when omitted")
    _add_store_args(u)

    m = sub.add_parser("migrate", help="copy the legacy Redis memories into PostgreSQL + pgvector")
    m.add_argument("--from", dest="source", required=True, help="Redis URL of the legacy store")
    m.add_argument("--to", dest="target", required=True, help="PostgreSQL DSN")
    m.add_argument("--batch-size", type=int, default=500)
    _add_model_args(m)
    _add_index_build_args(m)

    e = sub.add_parser("export", help="write a store's memories as JSON Lines, with their embeddings")
    e.add_argument("--from", dest="source", required=True, help="postgresql://... or redis://... / unix://...")
    e.add_argument("--out", default="-", help="file to write (default: standard output)")
    _add_encoding_arg(e)

    b = sub.add_parser("embed", help='embed JSON Lines {"text": ...} from stdin, write them with "embedding"')
    b.add_argument("--embedder", default=_env("MEMCHAT_EMBEDDER", DEFAULT_EMBEDDER), choices=sorted(EMBEDDERS))
    _add_encoding_arg(b)

    r = sub.add_parser("reembed", help="re-embed rows written under another embedder")
    r.add_argument("--pg", default=_env("MEMCHAT_PG"), required=_env("MEMCHAT_PG") is None)
    _add_model_args(r)
    _add_index_build_args(r)

    lo = sub.add_parser("redis-load", help="write JSON Lines memories into the legacy Redis store")
    lo.add_argument("--to", dest="target", required=True, help="Redis URL")
    lo.add_argument("--embedder", default=DEFAULT_EMBEDDER, choices=sorted(EMBEDDERS),
                    help="model for records that carry no embedding")
    lo.add_argument("--file", default="-", help="JSON Lines file (default: standard input)")
    lo.add_argument("--timezone", default="", help="the IANA zone the legacy app wrote its naive local times in "
                    "(e.g. Europe/Berlin), declared in the store for the migration; default: what the store declares")

    f = sub.add_parser("faults", help="print the fault catalogue as a Markdown table")
    f.add_argument("--check", metavar="NAMES", help="only check that these comma-separated faults exist")
    f.add_argument("--json", action="store_true", help="the catalogue as JSON")
    return ap


def _settings(args: argparse.Namespace, pg: str, redis_url: str = "") -> Settings:
    try:
        faults = parse_faults(getattr(args, "faults", ""))
    except UnknownFault as e:
        raise CliError(str(e)) from None
    index = getattr(args, "index", "hnsw")
    if index not in INDEX_KINDS:  # argparse checks the choices of --index, not a default MEMCHAT_INDEX gave
        raise CliError(f"MEMCHAT_INDEX '{index}' is not an index kind; give one of {', '.join(INDEX_KINDS)}")
    return Settings(
        pg_dsn=pg, redis_url=redis_url, faults=faults,
        embedder=getattr(args, "embedder", DEFAULT_EMBEDDER), index=index,
        threshold=getattr(args, "threshold", 0.25), top_k=getattr(args, "top_k", 5),
        ann_min_rows=getattr(args, "ann_min_rows", 100_000), ttl_days=getattr(args, "ttl_days", 365.0),
        settable_clock=getattr(args, "clock", "wall") == "settable",
        index_build_memory=_index_build_memory(args),
        index_graph_rows=getattr(args, "index_graph_rows", 100_000),
        admin_token=_env("MEMCHAT_ADMIN_TOKEN") or None,
        llm_base_url=_env("MEMCHAT_LLM_BASE_URL") or None, llm_model=_env("MEMCHAT_LLM_MODEL") or None,
        llm_api_key=_env("MEMCHAT_LLM_API_KEY") or None,
    )


def _index_build_memory(args: argparse.Namespace) -> str:
    value = str(getattr(args, "index_build_memory", DEFAULT_INDEX_BUILD_MEMORY)).strip()
    if value != "auto" and not re.fullmatch(r"[1-9][0-9]*\s*(kB|MB|GB|TB)?", value):
        raise CliError(f"--index-build-memory '{value}' is not a size such as 512MB or 2GB, nor auto")
    return value


def _open_input(path: str) -> IO[str]:
    if path == "-":
        return sys.stdin
    try:
        return open(path, encoding="utf-8")
    except OSError as e:
        raise CliError(f"cannot read {path}: {e.strerror}") from None


def cmd_serve(args: argparse.Namespace) -> int:
    import uvicorn

    from memchat.app_state import AppState, RedisUnavailable
    from memchat.db import DatabaseUnavailable
    from memchat.embedded import EmbeddedServers
    from memchat.web import build_app

    settings = _settings(args, "")  # validate faults before starting anything
    embedded = None
    if not args.pg or not args.redis:
        embedded = EmbeddedServers(Path(args.data_dir) if args.data_dir else None)
        own = " and ".join(n for n, given in (("PostgreSQL + pgvector", args.pg), ("Redis", args.redis)) if not given)
        print(f"memchat: embedded {own}, data in {embedded.data_dir}", flush=True)
    try:
        pg = args.pg or embedded.postgres_dsn()
        redis_url = args.redis or embedded.redis_url()
        settings = _settings(args, pg, redis_url)
        try:
            state = AppState(settings)
        except (DatabaseUnavailable, RedisUnavailable) as e:
            raise CliError(str(e)) from None
        # IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY on accepted sockets only then (else ~40 ms per response)
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((args.host, args.port))
        except OSError as e:
            raise CliError(f"cannot listen on {args.host}:{args.port}: {e.strerror}; choose another --port") from None
        config = uvicorn.Config(build_app(state), log_level="warning", access_log=False, timeout_graceful_shutdown=3)
        host, port = sock.getsockname()[:2]
        faults = ",".join(sorted(settings.faults)) or "none"
        print(f"memchat {__version__}: serving on http://{host}:{port} (faults: {faults})", flush=True)
        if embedded and not args.pg:  # `users add --data-dir` reaches the embedded PostgreSQL, not one given by --pg
            print(f"memchat: add a user with: python -m memchat users add you@example.com --data-dir "
                  f"{embedded.data_dir}", flush=True)
        # uvicorn re-raises SIGTERM and SIGINT after its graceful shutdown; exit through Python so the finally blocks
        # below stop the embedded servers instead of leaving them running. Ctrl-C gets its own handler too: left to
        # Python's, asyncio.run takes it over, and whether the re-raised signal then ends the process with a
        # KeyboardInterrupt (130) or not at all (0) depended on when its handler ran (0 about once a run, on a loaded
        # machine).
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
        signal.signal(signal.SIGINT, lambda *_: sys.exit(130))
        try:
            uvicorn.Server(config).run(sockets=[sock])
        finally:
            state.close()
    finally:
        if embedded:
            embedded.stop()
    return 0


def _open_pool(dsn: str):
    from memchat.db import DatabaseUnavailable, Pool, create_schema

    try:
        create_schema(dsn)
        return Pool(dsn, size=2)
    except DatabaseUnavailable as e:
        raise CliError(str(e)) from None


def cmd_users(args: argparse.Namespace) -> int:
    embedded = None
    if not args.pg:
        if not args.data_dir:
            raise CliError("give the database with --pg (or MEMCHAT_PG), or the embedded servers' --data-dir")
        from memchat.embedded import EmbeddedServers

        embedded = EmbeddedServers(Path(args.data_dir))
        args.pg = embedded.postgres_dsn()
    try:
        return _users(args)
    finally:
        if embedded:
            embedded.stop()


def _users(args: argparse.Namespace) -> int:
    from memchat.accounts import AccountError, Accounts

    accounts = Accounts(_open_pool(args.pg))
    if args.action == "add":
        password = args.password or getpass.getpass("password: ")
        try:
            user = accounts.create(args.email, password)
        except AccountError as e:
            raise CliError(str(e)) from None
        print(f"added {user.email} ({user.id})")
    else:
        user = accounts.by_email(args.email)
        if user is None or not accounts.delete(user.id):
            raise CliError(f"no user {args.email}")
        print(f"deleted {user.email} ({user.id}) with all their conversations and memories")
    return 0


def _warn(lines: list[str]) -> None:
    """What the operator should know of a run that still ended well (an index graph that outgrew its build memory),
    one line each on the error stream."""
    for line in lines:
        print(f"memchat: warning: {line}", file=sys.stderr, flush=True)


def cmd_migrate(args: argparse.Namespace) -> int:
    import redis

    from memchat.memory_store import IndexBuildError
    from memchat.migration import MigrationError, migrate

    client = redis.Redis.from_url(args.source, socket_connect_timeout=5)
    try:
        client.ping()
    except (redis.RedisError, OSError) as e:
        raise CliError(f"cannot connect to Redis at {args.source}: {e}") from None
    settings = _settings(args, args.target, args.source)
    try:
        counts = migrate(client, _open_pool(args.target), settings, batch_size=args.batch_size)
    except (MigrationError, IndexBuildError) as e:
        raise CliError(str(e)) from None
    _warn(counts.outgrown)
    print(f"migrated: {counts.summary()}")
    return 0


def _pg_rows(dsn: str) -> Iterator[tuple]:
    """Every memory row, streamed through a server-side cursor: 100,000 rows never sit in memory at once."""
    pool = _open_pool(dsn)
    try:
        with pool.connection() as conn, conn.transaction(), conn.cursor(name="memchat_export") as cur:
            cur.itersize = 2000
            # binary: a vector arrives as its float32 bytes, not as text to parse (100k rows: 10.5 s -> 5.5 s)
            cur.execute("SELECT id, user_id, conversation_id, text, embedding, embedder, created_at, expires_at"
                        " FROM memories ORDER BY id", binary=True)
            yield from cur
    finally:
        pool.close()


def cmd_export(args: argparse.Namespace) -> int:
    from memchat import legacy_store

    out = sys.stdout if args.out == "-" else open(args.out, "w", encoding="utf-8")
    n = 0
    with out:
        if args.source.startswith(("postgres://", "postgresql://")):
            for r in _pg_rows(args.source):
                out.write(json.dumps({
                    "id": r[0], "user_id": r[1], "conversation_id": r[2], "text": r[3],
                    **vector_fields(r[4].to_numpy() if r[4] is not None else None, args.encoding),
                    "embedder": r[5], "created_at": r[6].isoformat(),
                    "expires_at": r[7].isoformat() if r[7] else None}) + "\n")
                n += 1
        else:
            for rec in legacy_store.iter_all(legacy_store.connect(args.source)):
                rec.pop(legacy_store.NO_VECTOR)
                rec.update(vector_fields(rec.pop("embedding"), args.encoding))
                out.write(json.dumps(rec) + "\n")
                n += 1
    print(f"exported {n} memories", file=sys.stderr)
    return 0


def cmd_embed(args: argparse.Namespace) -> int:
    embedder = get_embedder(args.embedder)
    out = sys.stdout
    try:
        for n, rec in read_lines(sys.stdin, "-"):
            if not isinstance(rec.get("text"), str):
                raise CliError(f'-:{n}: each line must be an object with a "text" string')
            vec = embedder.embed(rec["text"])
            if args.encoding == "base64":
                rec["embedder"] = embedder.name
                rec.update(vector_fields(vec, "base64"))
            else:  # today's key order: the record, "embedding", "embedder"
                rec.update(vector_fields(vec, "json"))
                rec["embedder"] = embedder.name
            out.write(json.dumps(rec) + "\n")
    except RecordError as e:
        raise CliError(str(e)) from None
    finally:
        out.flush()
    return 0


def cmd_reembed(args: argparse.Namespace) -> int:
    from memchat.memory_store import IndexBuildError, MemoryStore

    settings = _settings(args, args.pg)
    store = MemoryStore(_open_pool(args.pg), settings)
    store.drop_hnsw()  # the app is stopped; the index is built again below, once
    changed = store.reembed()
    try:
        _warn(store.build_index())
    except IndexBuildError as e:
        raise CliError(str(e)) from None
    print(f"re-embedded {changed} memories with {settings.embedder}")
    return 0


LOAD_CHUNK = 2000  # records a Redis pipeline carries: memory stays flat, round trips few


def _legacy_chunks(path: str, default_embedder: str, zone: ZoneInfo | None) -> Iterator[list[dict]]:
    """The file's records, checked, in chunks; a bad one raises CliError naming file, line and field."""
    stream = _open_input(path)
    with stream:
        lines = read_lines(stream, path)
        while True:
            chunk = []
            try:
                for n, rec in itertools.islice(lines, LOAD_CHUNK):
                    try:
                        chunk.append(legacy_record(rec, default_embedder, zone))
                    except RecordError as e:
                        raise CliError(f"{path}:{n}: {e}") from None
            except RecordError as e:  # read_lines: the line is not a JSON object
                raise CliError(str(e)) from None
            if not chunk:
                return
            yield chunk


def cmd_redis_load(args: argparse.Namespace) -> int:
    from memchat import legacy_store

    client = legacy_store.connect(args.target)
    name = args.timezone or legacy_store.declared_zone(client)
    try:
        zone = zone_named(name) if name else None
    except LegacyTimeError as e:
        raise CliError(f"--timezone: {e}") from None
    if args.file != "-" and os.path.isfile(args.file):
        # A regular file can be read twice (a pipe cannot): check all of it first, so a refused file leaves nothing
        # half-loaded.
        for _ in _legacy_chunks(args.file, args.embedder, zone):
            pass
    if args.timezone:
        legacy_store.declare_zone(client, args.timezone)
    loaded = 0
    # Each chunk is written by a thread while the next one is read and checked: Redis works as the loader parses.
    with ThreadPoolExecutor(max_workers=1) as writer:
        writing = None
        try:
            for chunk in _legacy_chunks(args.file, args.embedder, zone):
                loaded += writing.result() if writing else 0
                writing = writer.submit(legacy_store.put, client, chunk, args.embedder)
            loaded += writing.result() if writing else 0
        except CliError as e:  # only a pipe gets here: each chunk is checked before it is written
            loaded += writing.result() if writing else 0
            if loaded:
                raise CliError(f"{e} ({loaded} records were loaded before it)") from None
            raise
    print(f"loaded {loaded} memories into {args.target}")
    return 0


def cmd_faults(args: argparse.Namespace) -> int:
    if args.check is not None:
        try:
            parse_faults(args.check)
        except UnknownFault as e:
            raise CliError(str(e)) from None
        return 0
    if args.json:
        print(json.dumps([f.__dict__ for f in CATALOG.values()], indent=1))
        return 0
    print(markdown_table())
    return 0


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    commands = {"serve": cmd_serve, "users": cmd_users, "migrate": cmd_migrate, "export": cmd_export,
                "embed": cmd_embed, "reembed": cmd_reembed, "redis-load": cmd_redis_load,
                "faults": cmd_faults}
    try:
        return commands[args.command](args)
    except CliError as e:
        print(f"memchat: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
