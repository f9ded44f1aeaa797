"""tools/shards.py: the union of the shards' JUnit files against the collected suite, node ids as JUnit writes them."""

from __future__ import annotations

from pathlib import Path

from tools.shards import junit_address, union_problems

SUITE = ["features/a.feature::test_one", "features/a.feature::test_two[x-1]", "features/b.feature::test_three"]


def _junit(path: Path, *nodeids: str) -> Path:
    cases = "".join(f'<testcase classname="{c}" name="{n}" />' for c, n in map(junit_address, nodeids))
    path.write_text(f'<testsuites><testsuite name="pytest">{cases}</testsuite></testsuites>', encoding="utf-8")
    return path


def test_node_ids_are_mangled_as_pytest_junitxml_does() -> None:
    assert junit_address("features/a.feature::test_two[x/y-1]") == ("features.a.feature", "test_two[x/y-1]")
    assert junit_address("tests/test_x.py::TestY::test_z") == ("tests.test_x.TestY", "test_z")


def test_shards_that_cover_the_suite_once(tmp_path: Path) -> None:
    files = [_junit(tmp_path / "1.xml", *SUITE[:2]), _junit(tmp_path / "2.xml", SUITE[2])]
    assert union_problems(SUITE, files) == []


def test_a_lost_a_duplicated_and_a_stray_scenario_are_each_named(tmp_path: Path) -> None:
    files = [_junit(tmp_path / "1.xml", SUITE[0], SUITE[1]),
             _junit(tmp_path / "2.xml", SUITE[1], "features/c.feature::test_stray")]
    assert union_problems(SUITE, files) == [
        "lost (in no shard): features/b.feature::test_three",
        "run 2 times: features.a.feature::test_two[x-1]",
        "not in the collected suite: features.c.feature::test_stray",
    ]
