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

Two options any change may have, for what the scenarios put through it: `history_sizes`, the sizes of history it is
replayed with (default: the target's [replay] history_sizes), and `index_kinds`, the names of the target's
[index_kinds] a scenario run once per index kind searches through with it (default: every kind the target declares).

A migration may also list the mistakes its operators are warned of, `[changes."<name>".mistakes]`: each by what it
is, one of the words an operator adds to the tool's command by mistake (`give`), a file of records given to the
loader of the store the change reads (`feed`, a path in the project, in the app's own record format), or the words
added to that loader's command (`load`, given no records), and what the tool's one-line refusal must name for the
operator to know what to fix (`named`), or the whole line it must be where the app documents its words (`said`), e.g.
`"a build memory that is not a size" = { give = ["--index-build-memory", "-1"], named = "--index-build-memory" }`.
And the settings at the edges of what its tool takes, `[changes."<name>".edges]`, each by what it is and the words an
operator adds to the tool's command (`give`), with which the tool must still end well and carry every memory over,
e.g. `"a graph of one row a part" = { give = ["--index-graph-rows", "1"] }`.
And, by index kind, a history past the limits of that index's parameters, `[changes."<name>".volumes]`: how many
memories it holds and the words an operator adds to the tool's command for it, with which the tool must build the
index the app promises, and that index answer as a full scan does, e.g.
`ivfflat = { memories = 32000 }` or `hnsw = { memories = 4200, give = ["--index-graph-rows", "2500"] }`.
And, by index kind, a history whose index needs much memory to build, `[changes."<name>".build_memory]`: how many
memories, the words for it (`give`, none to leave the build memory to the app) and the words that give its build less
memory than it needs (`short`): left to the app, the build must tell of no graph that outgrew its memory; short of
it, the tool must tell so, e.g. `hnsw = { memories = 12000, short = ["--index-build-memory", "18MB"] }`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from harness.suite.options import ROOT

KINDS = {"migration": ("batch_size", "embedder"), "embedding-model": ("from", "to"),
         "upgrade": ("release", "command", "embedder"), "store-upgrade": ("embedder",)}
CHANGE_PLACEHOLDER = '"<change>"'  # in a step: the scenario runs once per declared change
REPLAY_OPTIONS = ("history_sizes", "index_kinds")  # any kind's, each a list
MISTAKES = "mistakes"  # a migration's: what its operators may get wrong
EDGES = "edges"  # a migration's: the settings at the edges of what its tool takes
VOLUMES = "volumes"  # a migration's: by index kind, a history past the limits of that index's parameters
BUILD_MEMORY = "build_memory"  # a migration's: by index kind, a history whose index needs much memory to build
RELEASE_COMMAND = "release_command"  # a setting: start this older release's command instead of the target's


class ChangeError(ValueError):
    """One line: a change a target declares wrongly, or one a scenario names that the target does not declare."""


@dataclass(frozen=True)
class Mistake:
    """What an operator may get wrong running a change: the words added to its command, a file of records given to
    the loader of the store it reads, or words added to that loader's command; what the refusal names, or the whole
    line it is."""

    name: str
    give: tuple[str, ...]
    named: str
    feed: str = ""  # a path in the project: records for the source store's loader instead of words for the change
    load: tuple[str, ...] = ()  # words for the source store's loader's command (given no records) instead
    said: str = ""  # the whole refusal, where the app documents its words (then `named` is a part of it)

    @property
    def given(self) -> str:
        """What the operator got wrong, as a report names it."""
        return self.feed or " ".join(self.give or self.load)


@dataclass(frozen=True)
class Edge:
    """A setting at the edge of what a change's tool takes: the words an operator adds to its command."""

    name: str
    give: tuple[str, ...]


@dataclass(frozen=True)
class Volume:
    """A history past the limits of an index kind's parameters: how many memories, the words an operator adds to
    the change's command for it, and the share of what a full scan ranks that a search through that index promises
    for it (1: exactly what a full scan ranks; less for an index the app documents as approximate)."""

    index_kind: str
    memories: int
    give: tuple[str, ...] = ()
    short: tuple[str, ...] = ()  # build_memory's: the words that give its index's build less memory than it needs
    recall: float = 1.0


@dataclass(frozen=True)
class Change:
    name: str
    kind: str
    options: dict[str, str] = field(default_factory=dict)
    description: str = ""
    history_sizes: tuple[int, ...] = ()  # the sizes of history replayed through it (empty: every size)
    index_kinds: tuple[str, ...] = ()  # the index kinds searched through after it, by name
    mistakes: tuple[Mistake, ...] = ()  # what its operators may get wrong, each refused in one line
    edges: tuple[Edge, ...] = ()  # settings at the edges of what its tool takes, each run to a good end
    volumes: tuple[Volume, ...] = ()  # by index kind, a history past the limits of that index's parameters
    build_memory: tuple[Volume, ...] = ()  # by index kind, a history whose index needs much memory to build

    def volume_for(self, index_kind: str) -> Volume | None:
        return next((v for v in self.volumes if v.index_kind == index_kind), None)

    def build_volume_for(self, index_kind: str) -> Volume | None:
        return next((v for v in self.build_memory if v.index_kind == index_kind), None)

    def replays_history_of(self, size: int) -> bool:
        return not self.history_sizes or size in self.history_sizes

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


def parse_sizes(sizes: object, what: str) -> tuple[int, ...]:
    """A list of sizes of history (whole numbers of memories, at least 1), or one line saying what to fix."""
    if not isinstance(sizes, list) or any(isinstance(n, bool) or not isinstance(n, int) or n < 1 for n in sizes):
        raise ChangeError(f"{what} = {sizes!r} must be a list of whole numbers of memories, e.g. [1000, 100000]")
    return tuple(sizes)


def _index_kinds(kinds: object, what: str, declared: Sequence[str]) -> tuple[str, ...]:
    if not isinstance(kinds, list) or any(not isinstance(k, str) for k in kinds):
        raise ChangeError(f"{what} = {kinds!r} must be a list of names of the target's [index_kinds]")
    unknown = [k for k in kinds if k not in declared]
    if unknown:
        raise ChangeError(f"{what} names {unknown[0]!r}, which is not one of the target's [index_kinds]: "
                          f"{', '.join(declared) or 'none declared'}")
    return tuple(kinds)


def _mistakes(table: object, what: str) -> tuple[Mistake, ...]:
    if not isinstance(table, dict):
        raise ChangeError(f"{what} must be a table: each mistake by name = {{ give = [words], named = text }}")
    mistakes = []
    for name, mistake in table.items():
        entry = mistake if isinstance(mistake, dict) else {}
        give, feed, load = entry.get("give", []), entry.get("feed", ""), entry.get("load", [])
        said = entry.get("said", "")
        named = entry.get("named", said)
        words = (give, load)
        if (any(not isinstance(w, list) or any(not isinstance(x, str) for x in w) for w in words)
                or not isinstance(feed, str) or [bool(give), bool(feed), bool(load)].count(True) != 1
                or not isinstance(named, str) or not named.strip() or not isinstance(said, str)
                or (said and named not in said) or set(entry) - {"give", "feed", "load", "named", "said"}):
            raise ChangeError(f'{what} "{name}" needs one of give (the words added to the command, a list of strings), '
                              "feed (a file of records for the source store's loader) and load (the words added to "
                              "that loader's command), and named (what the refusal names, a string) or said (the "
                              "whole refusal, which holds named)")
        if feed and not (ROOT / feed).is_file():
            raise ChangeError(f'{what} "{name}" feed = {feed!r}: no such file in the project')
        mistakes.append(Mistake(str(name), tuple(give), named, feed, tuple(load), said))
    return tuple(mistakes)


def _edges(table: object, what: str) -> tuple[Edge, ...]:
    if not isinstance(table, dict):
        raise ChangeError(f"{what} must be a table: each setting by name = {{ give = [words] }}")
    edges = []
    for name, edge in table.items():
        give = edge.get("give") if isinstance(edge, dict) else None
        if not isinstance(give, list) or not give or any(not isinstance(w, str) for w in give) or set(edge) != {"give"}:
            raise ChangeError(f'{what} "{name}" needs give (the words added to the command, a list of strings) only')
        edges.append(Edge(str(name), tuple(give)))
    return tuple(edges)


def _volumes(table: object, what: str, declared: Sequence[str], short: bool = False) -> tuple[Volume, ...]:
    """Each index kind's history: `memories` and the words `give`n for it; with `short`, also the words that give
    its index's build less memory than it needs (build_memory's); without, the `recall` its index promises for it."""
    keys = {"memories", "give", "short"} if short else {"memories", "give", "recall"}
    if not isinstance(table, dict):
        raise ChangeError(f"{what} must be a table: each index kind by name = {{ memories = N, give = [words] }}")
    volumes = []
    for kind, volume in table.items():
        entry = volume if isinstance(volume, dict) else {}
        memories, words = entry.get("memories"), [entry.get(k, []) for k in ("give", "short")]
        recall = entry.get("recall", 1.0)
        if (isinstance(memories, bool) or not isinstance(memories, int) or memories < 1
                or any(not isinstance(w, list) or any(not isinstance(x, str) for x in w) for w in words)
                or isinstance(recall, bool) or not isinstance(recall, int | float) or not 0 < recall <= 1
                or set(entry) - keys or (short and not words[1])):
            raise ChangeError(f'{what} "{kind}" needs memories (a whole number, at least 1)'
                              + (", short (the words, a list of strings, that give its index's build less memory "
                                 "than it needs)" if short else "")
                              + " and may give words (a list of strings added to the command)"
                              + ("" if short else " and recall (the share, above 0 and at most 1, of what a full "
                                 "scan ranks that a search through the index promises)")
                              + ", nothing else")
        if kind not in declared:
            raise ChangeError(f"{what} names {kind!r}, which is not one of the target's [index_kinds]: "
                              f"{', '.join(declared) or 'none declared'}")
        volumes.append(Volume(str(kind), memories, tuple(words[0]), tuple(words[1]), float(recall)))
    return tuple(volumes)


def parse_changes(tables: dict[str, Any], where: str, *, history_sizes: tuple[int, ...] = (),
                  index_kinds: Sequence[str] = ()) -> dict[str, Change]:
    """`[changes]` of a target file, each checked: a known kind with its options, or one line saying what to fix. A
    change without sizes of its own is replayed at `history_sizes` (the target's), one without index kinds of its own
    through every one of `index_kinds` (the target's)."""
    changes = {}
    for name, table in tables.items():
        if not isinstance(table, dict):
            raise ChangeError(f'{where}: [changes."{name}"] must be a table with a kind')
        kind = str(table.get("kind", ""))
        if kind not in KINDS:
            raise ChangeError(f'{where}: [changes."{name}"] kind = {kind!r} is not one of {", ".join(KINDS)}')
        options = {k: str(v) for k, v in table.items()
                   if k not in ("kind", "description", MISTAKES, EDGES, VOLUMES, BUILD_MEMORY, *REPLAY_OPTIONS)}
        missing = [o for o in KINDS[kind] if o not in options]
        if missing:
            raise ChangeError(f'{where}: [changes."{name}"] ({kind}) needs {", ".join(missing)}')
        if kind == "upgrade" and "{port}" not in options["command"]:
            raise ChangeError(f'{where}: [changes."{name}"] command must listen on {{port}}, the port the suite '
                              "chooses")
        sizes = (parse_sizes(table["history_sizes"], f'{where}: [changes."{name}"] history_sizes')
                 if "history_sizes" in table else history_sizes)
        kinds = (_index_kinds(table["index_kinds"], f'{where}: [changes."{name}"] index_kinds', index_kinds)
                 if "index_kinds" in table else tuple(index_kinds))
        if MISTAKES in table and kind != "migration":
            raise ChangeError(f'{where}: [changes."{name}"] mistakes: only a migration\'s tool is run with them')
        mistakes = _mistakes(table[MISTAKES], f'{where}: [changes."{name}".mistakes]') if MISTAKES in table else ()
        if EDGES in table and kind != "migration":
            raise ChangeError(f'{where}: [changes."{name}"] edges: only a migration\'s tool is run with them')
        edges = _edges(table[EDGES], f'{where}: [changes."{name}".edges]') if EDGES in table else ()
        if VOLUMES in table and kind != "migration":
            raise ChangeError(f'{where}: [changes."{name}"] volumes: only a migration\'s tool is run with them')
        volumes = (_volumes(table[VOLUMES], f'{where}: [changes."{name}".volumes]', index_kinds) if VOLUMES in table
                   else ())
        if BUILD_MEMORY in table and kind != "migration":
            raise ChangeError(f'{where}: [changes."{name}"] build_memory: only a migration\'s tool is run with it')
        build_memory = (_volumes(table[BUILD_MEMORY], f'{where}: [changes."{name}".build_memory]', index_kinds, True)
                        if BUILD_MEMORY in table else ())
        changes[str(name)] = Change(str(name), kind, options, str(table.get("description", "")), sizes, kinds,
                                    mistakes, edges, volumes, build_memory)
    return changes
