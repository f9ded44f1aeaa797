"""What a migration from an app's legacy store is given and what it reports: the records a legacy store holds, and
the counts the app's migration tool prints."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass


@dataclass(frozen=True)
class LegacyMemory:
    id: str
    user_id: str
    text: str
    created_at: str

    def as_record(self, embedder: str) -> str:
        """One line of the loading tool's JSON Lines input."""
        return json.dumps({"id": self.id, "user_id": self.user_id, "text": self.text, "created_at": self.created_at,
                           "embedder": embedder}, ensure_ascii=False) + "\n"


@dataclass(frozen=True)
class MigrationCounts:
    read: int
    written: int
    skipped: int
    already_present: int
    output: str
    reembedded: int | None = None  # memories it embedded again with its model, where it says ("re-embedded N")
    # Why it skipped what it did not find already there, where it says so ("N deleted by their owner", "N with an
    # unknown owner")
    deleted_by_owner: int | None = None
    unknown_owner: int | None = None
    # What it told its operators of index builds that outgrew the memory it gave them (a graph built partly on disk,
    # several times slower), one line each, where its driver reads it (None: the tool does not say)
    outgrown_builds: tuple[str, ...] | None = None

    @classmethod
    def parse(cls, output: str) -> MigrationCounts:
        """From the tool's summary line: "read N, written N, skipped N (N already present, ...)", and why it skipped
        the others and "re-embedded N" where it says so."""
        m = re.search(r"read (\d+), written (\d+), skipped (\d+) \((\d+) already present", output)
        if not m:
            raise AssertionError(f"the migration printed no counts; it said: {output.strip()[-300:]!r}")
        read, written, skipped, present = (int(g) for g in m.groups())
        rest = output[m.end():]
        said = {what: re.search(rf"(\d+) {what}", rest) for what in ("deleted by their owner", "with an unknown owner")}
        reembedded = re.search(r"re-embedded (\d+)", rest)
        deleted, unknown = (int(n[1]) if n else None for n in said.values())
        return cls(read, written, skipped, present, output=output,
                   reembedded=int(reembedded[1]) if reembedded else None, deleted_by_owner=deleted,
                   unknown_owner=unknown)
