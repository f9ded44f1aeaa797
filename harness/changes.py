"""The changes an app declares for the replay: each one a way the app's operators change it, by name, of one kind.

A target file lists them under `[changes."<name>"]`; the replay scenarios run one test case per change, with its
name in the test id (`When the app goes through the change "<change>"`). The kinds:

- `migration`: the app's own tool moves its memories from the source store into the live one (the history is put in
  the source store; `batch_size`, `embedder` for the tool);
- `embedding-model`: the app restarts on the same data with another embedding model, through its own re-index
  procedure (`from` and `to`: the models; the history is imported while the app runs `from`);
- `upgrade`: an older release of the app holds the history (`release`, its version, started by `command`, a command
  line with `{port}`, embedding with `embedder`), then the target's own release is started on its data, as an
  operator upgrades.

How each is done is the driver's: its migration tool, its embedding-model procedure.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

KINDS = {"migration": ("batch_size", "embedder"), "embedding-model": ("from", "to"),
         "upgrade": ("release", "command", "embedder"), "store-upgrade": ("embedder",)}
CHANGE_PLACEHOLDER = '"<change>"'  # in a step: the scenario runs once per declared change
RELEASE_COMMAND = "release_command"  # a setting: start this older release's command instead of the target's


class ChangeError(ValueError):
    """One line: a change a target declares wrongly, or one a scenario names that the target does not declare."""


@dataclass(frozen=True)
class Change:
    name: str
    kind: str
    options: dict[str, str] = field(default_factory=dict)
    description: str = ""

    @property
    def embedder_before(self) -> str:
        """The embedding model the history is told under, and the app runs before the change."""
        return self.options["from" if self.kind == "embedding-model" else "embedder"]

    @property
    def embedder_after(self) -> str:
        return self.options["to"] if self.kind == "embedding-model" else self.embedder_before

    @property
    def before_settings(self) -> dict[str, str]:
        """The settings of the app that holds the history before the change (a migration's model too, so that the
        app searches with the model it is migrated with)."""
        if self.kind == "upgrade":
            return {"embedder": self.embedder_before, RELEASE_COMMAND: self.options["command"]}
        return {"embedder": self.embedder_before}


def parse_changes(tables: dict[str, Any], where: str) -> dict[str, Change]:
    """`[changes]` of a target file, each checked: a known kind with its options, or one line saying what to fix."""
    changes = {}
    for name, table in tables.items():
        if not isinstance(table, dict):
            raise ChangeError(f'{where}: [changes."{name}"] must be a table with a kind')
        kind = str(table.get("kind", ""))
        if kind not in KINDS:
            raise ChangeError(f'{where}: [changes."{name}"] kind = {kind!r} is not one of {", ".join(KINDS)}')
        options = {k: str(v) for k, v in table.items() if k not in ("kind", "description")}
        missing = [o for o in KINDS[kind] if o not in options]
        if missing:
            raise ChangeError(f'{where}: [changes."{name}"] ({kind}) needs {", ".join(missing)}')
        if kind == "upgrade" and "{port}" not in options["command"]:
            raise ChangeError(f'{where}: [changes."{name}"] command must listen on {{port}}, the port the suite '
                              "chooses")
        changes[str(name)] = Change(str(name), kind, options, str(table.get("description", "")))
    return changes
