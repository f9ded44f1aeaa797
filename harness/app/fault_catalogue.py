"""An app's fault catalogue: the regressions or misconfigurations its driver can switch on (name, bug class, what
users see), each with the scenarios that must catch it, named in the app's target file under [faults]:

    [faults]
    "unload-write-lost" = ["cross_session_persistence.feature: A memory is stored even when the page closes ..."]

The kill matrix switches each fault on and checks that every scenario named for it fails (an outline: every example
the run selects). Nothing in features/ names a fault, so a team proves its own catalogue without touching them.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.drivers.base import AppDriver
from harness.suite.scenarios import ScenarioRef, UnknownScenario, check_exist


class CatalogueError(ValueError):
    """One line: what is wrong with a fault catalogue, and where."""


@dataclass(frozen=True)
class Fault:
    name: str
    bug_class: str
    user_sees: str
    scenarios: tuple[ScenarioRef, ...]  # every one must fail with the fault on


def fault_catalogue(driver: AppDriver) -> list[Fault]:
    """The driver's catalogue with the scenarios its target names for each fault, checked to exist."""
    target = driver.target
    entries = driver.fault_catalogue()
    known = [e["name"] for e in entries]
    unknown = sorted(set(target.fault_scenarios) - set(known))
    if unknown:
        raise CatalogueError(f"{target.path.name} [faults] names {', '.join(unknown)}, which the {driver.name} "
                             f"driver's catalogue does not have; it has: {', '.join(known) or 'nothing'}")
    faults = []
    try:
        for entry in entries:
            where = f"{target.path.name} [faults] {entry['name']!r}"
            refs = tuple(ScenarioRef.parse(text, where) for text in target.fault_scenarios.get(entry["name"], []))
            check_exist(refs, where)
            faults.append(Fault(entry["name"], entry.get("bug_class", ""),
                                entry.get("user_sees") or entry.get("effect", ""), refs))
    except UnknownScenario as e:
        raise CatalogueError(str(e)) from None
    return faults
