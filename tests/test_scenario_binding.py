"""The feature files bound by pytest-bdd's public API (features/conftest.py), read by the official Gherkin parser,
and their tests named by one rule (harness.suite.scenarios) that gives the node ids pytest-bdd's `scenarios()` gave
before."""

from __future__ import annotations

from pathlib import Path
from types import MappingProxyType, SimpleNamespace
from typing import Any

import pytest

from features.conftest import scenario_module
from harness.suite.scenarios import (
    CHANGE,
    FEATURES,
    INDEX_KIND,
    bdd_test_name,
    example_of,
    feature_scenarios,
    python_name,
)

# Titles as written, and the test names pytest-bdd gave them (collected with pytest-bdd 9.0.1's scenarios() and its
# name generator, before the suite named them itself): apostrophes, hyphens, commas, digits, placeholders.
NAMED_BEFORE = {
    "A fact told earlier in the conversation is recalled": "test_a_fact_told_earlier_in_the_conversation_is_recalled",
    "Users with near-colliding e-mail addresses stay apart": "test_users_with_nearcolliding_email_addresses_stay_apart",
    "A sign-in lasts at least a working day and is kept out of reach of the page":
        "test_a_signin_lasts_at_least_a_working_day_and_is_kept_out_of_reach_of_the_page",
    "A first message with an emoji across its 80th character starts its conversation":
        "test_a_first_message_with_an_emoji_across_its_80th_character_starts_its_conversation",
    "Another user's conversation cannot be opened by its address":
        "test_another_users_conversation_cannot_be_opened_by_its_address",
    "A team's own memories, imported from outside, are recalled after the migration":
        "test_a_teams_own_memories_imported_from_outside_are_recalled_after_the_migration",
    "A vector lost after the migration is named, among <size> memories":
        "test_a_vector_lost_after_the_migration_is_named_among_size_memories",
    "The golden snapshot recalls the same on both pgvector versions through <index>":
        "test_the_golden_snapshot_recalls_the_same_on_both_pgvector_versions_through_index",
    "Every memory of a history is recalled after the change, memory by memory":
        "test_every_memory_of_a_history_is_recalled_after_the_change_memory_by_memory",
}


@pytest.mark.parametrize(("title", "name"), NAMED_BEFORE.items())
def test_a_title_names_its_test_as_pytest_bdd_named_it(title: str, name: str) -> None:
    assert bdd_test_name(title) == name


def test_titles_that_name_alike_take_a_number_and_leading_digits_are_dropped() -> None:
    assert python_name("2 users, 1 secret!") == "users_1_secret"
    assert bdd_test_name("A, b") == "test_a_b"
    assert bdd_test_name("A b", ["test_a_b"]) == "test_a_b_1"
    assert bdd_test_name("A b?", ["test_a_b", "test_a_b_1"]) == "test_a_b_2"
    assert bdd_test_name("A  b") == "test_a__b"  # each space is an underscore


@pytest.mark.parametrize("path", sorted(FEATURES.glob("*.feature")), ids=lambda p: p.name)
def test_every_feature_is_bound_through_pytest_bdd_under_the_names_of_the_rule(path: Path) -> None:
    """scenario_module refuses a feature whose tests pytest-bdd names otherwise; here, the order is the file's too."""
    module = scenario_module(path)
    tests = [name for name in vars(module) if name.startswith("test_")]
    assert tests == [s.test_name for s in feature_scenarios(path)]
    assert all(callable(getattr(module, name)) for name in tests)


def test_a_scenario_with_a_change_or_an_index_kind_in_its_steps_runs_once_per_declared_one(tmp_path: Path) -> None:
    path = tmp_path / "x.feature"
    path.write_text('Feature: x\n  Background:\n    Given the "<index kind>" index\n\n'
                    '  Scenario Outline: Through <what>\n    When the app goes through the change "<change>"\n\n'
                    '    Examples:\n      | what | size |\n      | a    | 1    |\n      | b    | 2,0  |\n\n'
                    '  Scenario: Plain\n    When nothing happens\n', encoding="utf-8")
    outline, plain = feature_scenarios(path)
    assert outline.own_parameters == (CHANGE, INDEX_KIND) and plain.own_parameters == (INDEX_KIND,)
    assert [e.id for e in outline.examples] == ["a-1", "b-2,0"] and outline.test_name == "test_through_what"


def _item(nodeid: str, **params: str) -> Any:  # what example_of reads of a collected item
    name = nodeid.partition("::")[2]
    return SimpleNamespace(nodeid=nodeid, name=name, originalname=name.partition("[")[0],
                           callspec=SimpleNamespace(params=params))


def test_an_example_is_read_from_the_test_id_past_the_suites_own_parameters() -> None:
    base = "features/in_session_memory.feature::test_a_fact_told_earlier_in_the_conversation_is_recalled"
    assert example_of(_item(f"{base}[order number-4417]")) == MappingProxyType(
        {"fact": "order number", "value": "4417"})
    assert example_of(_item(f"{base}[no such-row]")) is None
    replay = ("features/replay_through_changes.feature::"
              "test_every_memory_of_a_history_is_recalled_after_the_change_memory_by_memory")
    assert example_of(_item(f"{replay}[redis-to-postgresql-1,000]", change_name="redis-to-postgresql")) == {
        "size": "1,000"}
    assert example_of(_item(f"{replay}[no change declared-300]", change_name="")) == {"size": "300"}
    plain = "features/memory_expiry.feature::test_a_memory_from_a_month_ago_is_still_recalled"
    assert example_of(_item(plain)) is None
