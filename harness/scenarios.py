"""The scenarios of the feature files, by file and title, and the pytest tests they become.

One scenario is one test function of its feature's module, named as pytest-bdd's `scenarios()` names them
(`test_<title as a Python name>`, with `_1`, `_2` for titles that name alike); an outline's examples are that test's
parametrizations. features/conftest.py builds the modules from this, and whatever finds a scenario by its title (the
kill matrix, a target's fault catalogue) reads the same, so the two can never disagree.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from pytest_bdd.feature import get_feature
from pytest_bdd.scenario import get_python_name_generator

FEATURES = Path(__file__).resolve().parent.parent / "features"


class UnknownScenario(ValueError):
    """One line: a scenario named somewhere that no feature file has, and where to look."""


@cache
def scenario_tests(path: Path) -> dict[str, str]:
    """Each scenario of the feature file as its test function's name -> the scenario's title, in file order."""
    names: dict[str, str] = {}
    for title in get_feature(str(path.parent), path.name).scenarios:
        names[next(n for n in get_python_name_generator(title) if n not in names)] = title
    return names


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
    path, _, name = nodeid.partition("::")
    if not path.endswith(".feature"):
        return None
    title = scenario_tests(features / Path(path).name).get(name.partition("[")[0])
    return ScenarioRef(Path(path).name, title) if title is not None else None


def nodes_of(refs: Iterable[ScenarioRef], collected: Iterable[str], features: Path = FEATURES) -> list[str]:
    """The collected node ids that run the named scenarios (every example of an outline, or the named ones), in
    collection order."""
    wanted = list(refs)
    return [nodeid for nodeid in collected if any(ref.runs(nodeid, features) for ref in wanted)]
