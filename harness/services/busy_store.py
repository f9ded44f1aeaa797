"""A table of an app's database held busy for a few seconds, as an operator's index build holds it (CREATE INDEX takes
a SHARE lock: reads go on, every write waits): the generated sessions' "tell while the store is busy" talks meanwhile,
and a write that waited must still be kept."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

import psycopg
from psycopg import sql

from harness.services.databases import PG_CONNECT_TIMEOUT

LOOK_EVERY_S = 0.1  # how often the holder looks for a write waiting on the table
# How long the holder waits for a write to come once the block is done (a page writes a turn's memories after its
# reply), before it lets go without one; and the most it holds at all, whatever happens.
WRITE_COMES_WITHIN_S = 10.0  # (as long as the generated sessions wait for a memory to be listed)
MOST_HELD_S = 60.0
LOCK_WITHIN_S = 10  # how long the holder may wait for the table itself (another client's long transaction)


class StoreNotHeld(RuntimeError):
    """The table could not be locked (no such table, or the database refused): said in one line."""


@dataclass
class BusyTable:
    """What the hold saw: whether a write waited on the table, and for how long the table was held."""

    table: str
    write_waited: bool = False
    held_s: float = 0.0
    _done: threading.Event = field(default_factory=threading.Event, repr=False)


def _waiting_on(watcher: psycopg.Connection, table: str) -> bool:
    """Whether another client waits for a lock on the table now (pg_locks: not granted)."""
    row = watcher.execute("SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation"
                          " WHERE NOT l.granted AND c.relname = %s", (table,)).fetchone()
    return bool(row and row[0])


def _hold(dsn: str, table: str, seconds: float, busy: BusyTable, ready: threading.Event,
          failed: list[BaseException]) -> None:
    """Lock the table, then hold it until a write has waited `seconds` on it (or, without one, until the block is
    done and no write came within WRITE_COMES_WITHIN_S)."""
    started = time.monotonic()
    try:
        with psycopg.connect(dsn, connect_timeout=PG_CONNECT_TIMEOUT) as conn, \
                psycopg.connect(dsn, connect_timeout=PG_CONNECT_TIMEOUT, autocommit=True) as watcher:
            conn.execute("SELECT set_config('lock_timeout', %s, true)", (f"{LOCK_WITHIN_S}s",))  # never hang here
            conn.execute(sql.SQL("LOCK TABLE {} IN SHARE MODE").format(sql.Identifier(table)))
            ready.set()
            give_up = started + MOST_HELD_S
            while time.monotonic() < give_up and not _waiting_on(watcher, table):
                if busy._done.is_set():
                    give_up = min(give_up, time.monotonic() + WRITE_COMES_WITHIN_S)
                time.sleep(LOOK_EVERY_S)  # the interval between two looks
            if time.monotonic() < give_up:
                busy.write_waited = True
                time.sleep(seconds)  # the store stays busy this long for the write that waits: the move's point
            conn.rollback()
    except BaseException as e:  # (said by table_busy, in the suite's thread)
        failed.append(e)
        ready.set()
    finally:
        busy.held_s = time.monotonic() - started


@contextlib.contextmanager
def table_busy(dsn: str, table: str, seconds: float) -> Iterator[BusyTable]:
    """The table held as an index build holds it while the block acts, and after it until a write has waited
    `seconds` on it: the block's writes to it wait meanwhile, then go on once it is free. Returns once it is free."""
    busy, ready, failed = BusyTable(table), threading.Event(), list[BaseException]()
    holder = threading.Thread(target=_hold, args=(dsn, table, seconds, busy, ready, failed), daemon=True,
                              name=f"holding {table}")
    holder.start()
    if not ready.wait(PG_CONNECT_TIMEOUT * 2 + LOCK_WITHIN_S + 5) and not failed:
        raise StoreNotHeld(f"the table {table!r} of the app's database was not held within "
                           f"{PG_CONNECT_TIMEOUT * 2 + LOCK_WITHIN_S + 5} s")
    if failed:
        raise StoreNotHeld(f"could not hold the table {table!r} of the app's database: {failed[0]}") from failed[0]
    try:
        yield busy
    finally:
        busy._done.set()
        holder.join(MOST_HELD_S + PG_CONNECT_TIMEOUT)
    if failed:
        raise StoreNotHeld(f"holding the table {table!r} of the app's database failed: {failed[0]}") from failed[0]
