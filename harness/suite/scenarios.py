"""The scenarios of the feature files, by file and title, and the pytest tests they become.

The feature files are read with the official Gherkin parser (`gherkin-official`, the one pytest-bdd reads them with),
never through pytest-bdd's internals. One scenario is one test function of its feature's module, named as pytest-bdd's
`scenarios()` names them (`bdd_test_name`: `test_<title as a Python name>`, with `_1`, `_2` for titles that name alike);
an outline's examples are that test's parametrizations, with ids made of their values. A scenario whose steps name a
parameter of the suite's own (`"<change>"`, `"<index kind>"`: `OWN_PARAMETERS`) runs once per value the target
declares, the value's id first in the test's id. features/conftest.py binds the modules by these rules, and whatever
finds a scenario by its title (the kill matrix, a target's fault catalogue and known defects) reads the same, so the
two can never disagree.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest
from gherkin.parser import Parser

from harness.app.changes import CHANGE_PLACEHOLDER
from harness.app.target import Target

FEATURES = Path(__file__).resolve().parents[2] / "features"


class UnknownScenario(ValueError):
    """One line: a scenario named somewhere that no feature file has, and where to look."""


# -- pytest-bdd's naming of a scenario's test --------------------------------------------------------------------------
def python_name(title: str) -> str:
    """A title as a Python name, as pytest-bdd makes it: spaces to underscores, every other non-word character
    dropped, leading digits (and the underscores after them) dropped, lower case."""
    name = re.sub(r"\W", "", title.replace(" ", "_"))
    return re.sub(r"^\d+_*", "", name).lower()


def bdd_test_name(title: str, taken: Iterable[str] = ()) -> str:
    """The test function `scenarios()` binds a scenario to: `test_<python name>`, or with `_1`, `_2`... when an
    earlier scenario of the module took that name."""
    taken = set(taken)
    base, n = f"test_{python_name(title)}", 0
    name = base
    while name in taken:
        n += 1
        name = f"{base}_{n}"
    return name


# -- the suite's own parameters ----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class OwnParameter:
    """A value a scenario runs once for, each value the target declares: named by `placeholder` in a step, given to
    the steps as the fixture `fixture` (the value's name; "" when the target declares none, in the one case that
    then says so by skipping with one line), its name the case's id."""

    placeholder: str  # as a step says it, quotes included
    fixture: str
    declares: str  # the Target attribute that holds the values, by name (a target file's table of the same name)
    none_declared: str  # the id of the one case when the target declares no value

    def declared(self, target: Target) -> list[str]:
        """The names the target declares, sorted: the cases, in order."""
        return sorted(getattr(target, self.declares))

    def ids(self, names: list[str]) -> list[str]:
        return names or [self.none_declared]


CHANGE = OwnParameter(CHANGE_PLACEHOLDER, "change_name", "changes", "no change declared")
INDEX_KIND = OwnParameter('"<index kind>"', "index_kind_name", "index_kinds", "no index kind declared")
OWN_PARAMETERS = (CHANGE, INDEX_KIND)  # in this order in a test's id, before its example's values


# -- the feature files, as written -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Example:
    """One row of an outline's Examples: its values by column, in order."""

    values: MappingProxyType[str, str]

    @property
    def id(self) -> str:
        """Its part of the test's id, as pytest-bdd gives it: the values joined by "-"."""
        return "-".join(self.values.values())


@dataclass(frozen=True)
class ScenarioText:
    title: str
    test_name: str
    steps: tuple[str, ...]  # the background's steps first, as pytest-bdd runs them; without their keywords
    examples: tuple[Example, ...] = ()

    @property
    def own_parameters(self) -> tuple[OwnParameter, ...]:
        """The suite's own parameters its steps name, in the order of their ids."""
        return tuple(p for p in OWN_PARAMETERS if any(p.placeholder in step for step in self.steps))


def _steps(node: dict[str, Any] | None) -> tuple[str, ...]:
    return tuple(step["text"] for step in (node or {}).get("steps", []))


def _examples(scenario: dict[str, Any]) -> tuple[Example, ...]:
    rows = []
    for table in scenario.get("examples", []):
        header = [cell["value"] for cell in (table.get("tableHeader") or {}).get("cells", [])]
        for row in table.get("tableBody") or []:
            values = [cell["value"] or "" for cell in row["cells"]]
            rows.append(Example(MappingProxyType(dict(zip(header, values, strict=True)))))
    return tuple(rows)


def _scenario_nodes(children: list[dict[str, Any]],
                    background: tuple[str, ...]) -> Iterable[tuple[dict[str, Any], tuple[str, ...]]]:
    """Each scenario of a feature (or of a rule in it) with the background steps that run before its own."""
    own = next((child["background"] for child in children if "background" in child), None)
    background = background + _steps(own)
    for child in children:
        if "scenario" in child:
            yield child["scenario"], background
        elif "rule" in child:
            yield from _scenario_nodes(child["rule"].get("children", []), background)


@cache
def feature_scenarios(path: Path) -> tuple[ScenarioText, ...]:
    """The scenarios of a feature file in file order, each with its test's name. Titles are unique in a feature (a
    repeated title is one scenario, the last written, in the place of the first, as pytest-bdd reads it)."""
    document: dict[str, Any] = dict(Parser().parse(path.read_text(encoding="utf-8")))  # the Gherkin AST, as JSON
    feature = document.get("feature") or {}
    nodes: dict[str, tuple[dict[str, Any], tuple[str, ...]]] = {}
    for node, background in _scenario_nodes(feature.get("children", []), ()):
        nodes[node["name"]] = (node, background)
    scenarios: list[ScenarioText] = []
    for title, (node, background) in nodes.items():
        name = bdd_test_name(title, (s.test_name for s in scenarios))
        scenarios.append(ScenarioText(title, name, background + _steps(node), _examples(node)))
    return tuple(scenarios)


def scenario_tests(path: Path) -> dict[str, str]:
    """Each scenario of the feature file as its test function's name -> the scenario's title, in file order."""
    return {s.test_name: s.title for s in feature_scenarios(path)}


def _scenario_of(nodeid: str, features: Path = FEATURES) -> ScenarioText | None:
    path, _, name = nodeid.partition("::")
    if not path.endswith(".feature"):
        return None
    return next((s for s in feature_scenarios(features / Path(path).name) if s.test_name == name.partition("[")[0]),
                None)


def example_of(item: pytest.Item) -> MappingProxyType[str, str] | None:
    """The values of the outline example a collected test runs (by column, as the Examples give them), from its
    public parts: its name's parameter id, less the ids of the suite's own parameters before it. None for a test that
    runs no example."""
    scenario = _scenario_of(item.nodeid)
    name, original = item.name, getattr(item, "originalname", item.name)
    if scenario is None or not scenario.examples or name == original:
        return None
    case = name[len(original) + 1:-1]
    params = getattr(getattr(item, "callspec", None), "params", {})
    own = [p.ids([params[p.fixture]] if params.get(p.fixture) else [])[0]
           for p in scenario.own_parameters if p.fixture in params]
    prefix = "".join(f"{value}-" for value in own)
    return next((e.values for e in scenario.examples if case in (e.id, prefix + e.id)), None)


# -- naming scenarios elsewhere (a target's [faults] and [known_defects]) ----------------------------------------------
@dataclass(frozen=True)
class ScenarioRef:
    """A scenario named by its feature file (under features/) and its title; an outline means all its examples, or
    those whose test id holds `example` (`"... : <title> [embedding-model-v1-to-v2]"`)."""

    feature: str
    title: str
    example: str = ""

    @classmethod
    def parse(cls, text: str, where: str) -> ScenarioRef:
        """`"cross_session_persistence.feature: Signing out ends the session on the server"`."""
        feature, sep, title = text.partition(":")
        if not sep or not feature.strip().endswith(".feature") or not title.strip():
            raise UnknownScenario(f"{where}: {text!r} is not '<file>.feature: <scenario title>'")
        title, example = title.strip(), ""
        if title.endswith("]") and " [" in title:
            title, _, example = title[:-1].rpartition(" [")
        return cls(feature.strip(), title.strip(), example.strip())

    def __str__(self) -> str:
        return f"{self.feature}: {self.title}" + (f" [{self.example}]" if self.example else "")

    def runs(self, nodeid: str, features: Path = FEATURES) -> bool:
        """Whether the collected test `nodeid` is (an example of) this scenario."""
        ref = node_title(nodeid, features)
        if ref is None or (ref.feature, ref.title) != (self.feature, self.title):
            return False
        return not self.example or self.example in nodeid.partition("[")[2].removesuffix("]")


def check_exist(refs: Iterable[ScenarioRef], where: str, features: Path = FEATURES) -> None:
    """Every named scenario is in its feature file, or one line naming the first that is not."""
    titles: dict[str, set[str]] = {}
    for ref in refs:
        path = features / ref.feature
        if ref.feature not in titles:
            if not path.is_file():
                known = ", ".join(sorted(p.name for p in features.glob("*.feature")))
                raise UnknownScenario(f"{where} names {ref}, but there is no {path.relative_to(features.parent)}; "
                                      f"the feature files are: {known}")
            titles[ref.feature] = set(scenario_tests(path).values())
        if ref.title not in titles[ref.feature]:
            raise UnknownScenario(f"{where} names the scenario {ref.title!r}, which {ref.feature} does not have "
                                  "(a title is matched exactly)")


def node_title(nodeid: str, features: Path = FEATURES) -> ScenarioRef | None:
    """The scenario a collected node id (`features/x.feature::test_y[example]`) runs, or None for another test."""
    scenario = _scenario_of(nodeid, features)
    return ScenarioRef(Path(nodeid.partition("::")[0]).name, scenario.title) if scenario is not None else None


def nodes_of(refs: Iterable[ScenarioRef], collected: Iterable[str], features: Path = FEATURES) -> list[str]:
    """The collected node ids that run the named scenarios (every example of an outline, or the named ones), in
    collection order."""
    wanted = list(refs)
    return [nodeid for nodeid in collected if any(ref.runs(nodeid, features) for ref in wanted)]
