"""memchat's operators' tools: export, the legacy Redis store and its load, migrate, the history import."""

from __future__ import annotations

import base64
import dataclasses
import json
import time
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

import numpy as np
import psycopg
import redis

from harness.app.app_launcher import (
    RunningApp,
)
from harness.app.app_tools import ToolFailed, ToolRun, run_tool_fed, try_tool
from harness.app.legacy_store import MigrationCounts
from harness.drivers.base import (
    AppDriver,
    DriverError,
)
from harness.drivers.memchat.api import (
    EXPORTED_FIELDS,
    LEGACY_CHECKED_UP_TO,
    OUTGREW,
    check_refusal,
    check_summary,
)
from harness.services.databases import scalar


class MemchatTools(AppDriver):
    def export_memories(self, app: RunningApp, path: Path) -> None:
        self._export(str(app.pg_dsn), str(path))
        self._check_json_export(path, self._export(str(app.pg_dsn), "-", ("--encoding", "json")))

    # memchat/records.py: its JSON export writes each float32 of a vector rounded to 7 decimals (the default encoding,
    # the one an operator gets without --encoding): read back, each is within half a unit of the 7th decimal.
    JSON_EXPORT_DECIMALS = 7

    def _check_json_export(self, exact: Path, json_lines: str) -> None:
        """The export in memchat's default encoding (JSON numbers) holds the records of the exact one (base64 of the
        stored float32 values), each vector as the store holds it to the decimals it is rounded to."""
        exact_records = {r["id"]: r for r in map(json.loads, exact.read_text(encoding="utf-8").splitlines())}
        worst: tuple[float, str] = (0.0, "")
        for record in map(json.loads, json_lines.splitlines()):
            other = exact_records.pop(record.get("id"), None)
            numbers, packed = record.pop("embedding", None), other.pop("embedding_f32", None) if other else None
            if other is None or record != other or (numbers is None) != (packed is None):
                raise DriverError(f"memchat export --encoding json wrote {str(record)[:300]} where its base64 export "
                                  f"wrote {str(other)[:300]} (the same record, its vector as numbers)")
            if numbers is not None and packed is not None:
                gap = float(np.max(np.abs(np.asarray(numbers, dtype=np.float64)
                                          - np.frombuffer(base64.b64decode(packed), dtype="<f4"))))
                worst = max(worst, (gap, record["id"]))
        if exact_records:
            raise DriverError(f"memchat export --encoding json left out {len(exact_records)} records its base64 export "
                              f"wrote (first: {sorted(exact_records)[:2]})")
        if worst[0] > 0.5 * 10.0 ** -self.JSON_EXPORT_DECIMALS * (1 + 1e-6):
            raise DriverError(f"memchat export --encoding json wrote the vector of {worst[1]} {worst[0]:.1e} away from "
                              f"the float32 values its store holds (its base64 export), where rounding to "
                              f"{self.JSON_EXPORT_DECIMALS} decimals keeps each within "
                              f"{0.5 * 10.0 ** -self.JSON_EXPORT_DECIMALS:.0e}")

    def _export(self, store: str, file: str, extra: Sequence[str] = ()) -> str:
        """memchat export of a store to a file ("-": its standard output, returned), which then holds as many records
        as it says it exported ("exported N memories", on its error stream: the records are its output)."""
        run = try_tool(self.target, "export", extra=extra, store=store, file=file, timeout=600)
        if run.returncode != 0:
            said = [line for line in run.stderr.splitlines() if line.strip()]
            raise DriverError(f"memchat export of {store.split('@')[-1]} failed (exit status {run.returncode}): "
                              f"{said[-1:] or 'it said nothing'}")
        out = run.stdout if file == "-" else Path(file).read_text(encoding="utf-8")
        written = out.count("\n")
        if file != "-" and run.stdout:
            raise DriverError(f"memchat export to {file} also wrote {run.stdout.strip()[-100:]!r} on its output")
        if run.stderr != f"exported {written} memories\n":
            raise DriverError(f"memchat export wrote {written} records and said {run.stderr.strip()[-200:]!r}, not "
                              f"'exported {written} memories'")
        return out

    # -- the app's own tools -------------------------------------------------------------------------------------
    def load_legacy_store(self, app: RunningApp, records: Iterable[str], embedder: str,
                          timezone: str | None = None) -> None:
        # The worker's Redis db belongs to the running scenario (a worker runs one scenario at a time). Emptied at
        # once, freed on Redis's own thread: a synchronous FLUSHDB of the million memories an earlier scenario left
        # took longer than the client's 5 s socket timeout.
        client = redis.Redis.from_url(str(app.redis_url), socket_connect_timeout=5)
        try:
            client.flushdb(asynchronous=True)
        finally:
            client.close()
        # From its standard input, as the records are made: the tool checks each chunk before it writes it.
        fed = 0
        given: set[tuple[str, str, str]] = set()  # (id, owner, text) of each record, up to LEGACY_CHECKED_UP_TO

        def counted() -> Iterator[str]:
            nonlocal fed
            for line in records:
                fed += 1
                if fed <= LEGACY_CHECKED_UP_TO:
                    record = json.loads(line)
                    given.add((record["id"], record["user_id"], record["text"]))
                yield line

        said = run_tool_fed(self.target, "redis_load", counted(), redis_url=str(app.redis_url), file="-",
                            embedder=embedder, timezone=timezone or "", timeout=900)
        if said != f"loaded {fed} memories into {app.redis_url}\n":  # an operator reads this count: the records given
            raise DriverError(f"memchat's legacy loader was given {fed} records and said {said.strip()[-200:]!r}, not "
                              f"'loaded {fed} memories into {app.redis_url}'")
        if fed <= LEGACY_CHECKED_UP_TO:
            self._check_legacy_store(app, given)

    def legacy_memory_ids(self, app: RunningApp) -> set[str]:
        """Through memchat's export of its legacy store, as an operator checks a load."""
        return {json.loads(line)["id"] for line in self._export(str(app.redis_url), "-").splitlines()}

    def _check_legacy_store(self, app: RunningApp, given: set[tuple[str, str, str]]) -> None:
        """The legacy store, as memchat's export reads it (as an operator checks a load), holds the records given:
        a replay that fails after the change is then the change's, not the load's."""
        exported = self._export(str(app.redis_url), "-")  # to its standard output, where an operator reads it
        records = [json.loads(line) for line in exported.splitlines()]
        odd = next((r for r in records if set(r) != EXPORTED_FIELDS), None)
        if odd is not None:
            raise DriverError(f"memchat's export of its legacy store wrote a record with the fields {sorted(odd)}, "
                              f"where memchat/README.md promises {sorted(EXPORTED_FIELDS)}")
        held = {(r["id"], r["user_id"], r["text"]) for r in records}
        if held != given:
            missing, other = sorted(given - held), sorted(held - given)
            raise DriverError(f"memchat's export of its legacy store holds {len(held)} records where {len(given)} were "
                              f"loaded: {len(missing)} missing (first: {missing[:2]}), {len(other)} not given "
                              f"(first: {other[:2]})")

    def migrate(self, app: RunningApp, batch_size: int, embedder: str, extra: Sequence[str] = ()) -> MigrationCounts:
        started = time.perf_counter()
        run = try_tool(self.target, "migrate", extra=extra, **self._migration(app, batch_size, embedder), timeout=900)
        if run.returncode != 0:
            said = (run.stderr.strip() or run.stdout.strip() or f"exit code {run.returncode}").splitlines()[-1]
            raise ToolFailed(f"{self.target.name} migrate failed: {said}")
        output = run.stdout
        check_summary(output, time.perf_counter() - started)
        # memchat/README.md, migrate: into an empty table it drops the owner index (memories_user) "and builds each
        # once after loading": a migration that ended well leaves it, or every owner's read scans the whole table.
        with psycopg.connect(str(app.pg_dsn), connect_timeout=10) as conn:
            if not scalar(conn, "SELECT count(*) FROM pg_indexes WHERE indexname = 'memories_user'"):
                raise DriverError("memchat migrate ended well and left the store without its owner index "
                                  "(memories_user)")
        outgrown = tuple(line for line in run.stderr.splitlines() if line.startswith(OUTGREW))
        return dataclasses.replace(MigrationCounts.parse(output), outgrown_builds=outgrown)

    def try_load_legacy_store(self, app: RunningApp, records: str, embedder: str,
                              extra: Sequence[str] = ()) -> ToolRun:
        return check_refusal("redis-load", try_tool(self.target, "redis_load", extra=extra, stdin=records,
                                                     redis_url=str(app.redis_url), file="-", embedder=embedder,
                                                     timezone="", timeout=300))

    def try_migrate(self, app: RunningApp, batch_size: int, embedder: str, extra: Sequence[str]) -> ToolRun:
        started = time.perf_counter()
        run = check_refusal("migrate", try_tool(self.target, "migrate", extra=extra,
                                                 **self._migration(app, batch_size, embedder), timeout=900))
        if run.returncode == 0:
            check_summary(run.stdout, time.perf_counter() - started)
        return run

    def _migration(self, app: RunningApp, batch_size: int, embedder: str) -> dict[str, str]:
        return {"redis_url": str(app.redis_url), "pg_dsn": str(app.pg_dsn), "batch_size": str(batch_size),
                "embedder": embedder, "index": str(app.health.get("index", "hnsw")),
                "faults": app.settings.get("faults", "")}

    def import_history(self, app: RunningApp, records: Path, embedder: str,
                       user_ids: dict[str, str]) -> dict[str, str]:
        """memchat's documented bulk load: its legacy loader, then its migration, in batches of 5,000 (ids kept)."""
        with records.open(encoding="utf-8") as lines:
            self.load_legacy_store(app, lines, embedder)
        counts = self.migrate(app, 5000, str(app.health.get("embedder", embedder)))
        if counts.written + counts.already_present != counts.read:
            raise DriverError(f"memchat's bulk load wrote {counts.written} of the {counts.read} memories it read")
        return {}
