"""Fault catalogues kept out of the features: each fault's scenarios named in the target file by feature file and
title, checked to exist, and found among collected node ids by the same naming pytest-bdd uses."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from harness.app.fault_catalogue import CatalogueError, fault_catalogue
from harness.app.target import load_target
from harness.drivers import load_driver
from harness.suite.scenarios import FEATURES, ScenarioRef, UnknownScenario, check_exist, node_title, scenario_tests

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize(("target", "size"), [("memchat", 46), ("open-webui", 6), ("open-webui-pgvector", 6)])
def test_every_shipped_catalogue_names_existing_scenarios_for_every_fault(target: str, size: int) -> None:
    faults = fault_catalogue(load_driver(load_target(target)))
    assert len(faults) == size
    for fault in faults:
        assert fault.scenarios and fault.bug_class and fault.user_sees, fault.name


def test_no_feature_file_names_a_fault_and_the_reference_app_names_no_suite_area() -> None:
    for path in FEATURES.glob("*.feature"):
        assert "@fault_" not in path.read_text(encoding="utf-8"), path.name
    listed = subprocess.run([sys.executable, "-m", "memchat", "faults", "--json"], capture_output=True, text=True,
                            check=True, cwd=ROOT).stdout
    assert "caught_by" not in listed and "in_session" not in listed


def test_test_names_are_pytest_bdds_and_a_node_id_leads_back_to_its_scenario() -> None:
    names = scenario_tests(FEATURES / "in_session_memory.feature")
    assert names["test_a_fact_told_earlier_in_the_conversation_is_recalled"] == (
        "A fact told earlier in the conversation is recalled")
    node = "features/in_session_memory.feature::test_a_fact_told_earlier_in_the_conversation_is_recalled[a-b]"
    assert node_title(node) == ScenarioRef("in_session_memory.feature",
                                           "A fact told earlier in the conversation is recalled")
    assert node_title("tests/test_x.py::test_y") is None


@pytest.mark.parametrize(("text", "says"), [
    ("in_session_memory.feature: No such scenario", "does not have"),
    ("no_such.feature: Anything", "there is no features/no_such.feature"),
    ("just a title", "is not '<file>.feature: <scenario title>'"),
])
def test_an_unknown_scenario_is_one_line_naming_it(text: str, says: str) -> None:
    with pytest.raises(UnknownScenario) as info:
        check_exist([ScenarioRef.parse(text, "x.toml [faults] 'f'")], "x.toml [faults] 'f'")
    assert says in str(info.value) and "\n" not in str(info.value)


def test_a_target_naming_a_fault_its_driver_lacks_or_a_title_no_feature_has_is_refused(tmp_path: Path) -> None:
    base = (ROOT / "targets" / "open-webui.toml").resolve()
    for extra, says in (('"no-such-fault" = ["in_session_memory.feature: A correction replaces the old fact"]',
                         "no-such-fault"),
                        ('"no-redis" = ["in_session_memory.feature: A correction replaced the old fact"]',
                         "A correction replaced the old fact")):
        path = tmp_path / "team.toml"
        path.write_text(f'extends = "{base}"\nname = "team"\n\n[faults]\n{extra}\n', encoding="utf-8")
        with pytest.raises(CatalogueError) as info:
            fault_catalogue(load_driver(load_target(path)))
        assert says in str(info.value) and "\n" not in str(info.value)


def test_a_scenario_named_with_an_example_selects_only_the_tests_of_that_example() -> None:
    ref = ScenarioRef.parse("replay_through_changes.feature: Every memory of a history is recalled after the change,"
                            " memory by memory [embedding-model-v1-to-v2]", "here")
    assert ref.example == "embedding-model-v1-to-v2" and str(ref).endswith(" [embedding-model-v1-to-v2]")
    base = ("features/replay_through_changes.feature::"
            "test_every_memory_of_a_history_is_recalled_after_the_change_memory_by_memory")
    assert ref.runs(f"{base}[embedding-model-v1-to-v2-1,000]")
    assert not ref.runs(f"{base}[redis-to-postgresql-1,000]")
    assert ScenarioRef(ref.feature, ref.title).runs(f"{base}[redis-to-postgresql-1,000]")
