"""The regression seeds (harness/sessions/seeds.py): a seed an exploration found a difference with is written into
the seeds file by a command, with its date, target and first difference, and replayed first, in browsers, on the
target it names."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.sessions.seeds import SEEDS_FILE, Regression, SeedsError, add_regression, found_in, load_seeds, main


def _seeds_file(tmp_path: Path) -> Path:
    copy = tmp_path / "seeds.toml"
    copy.write_text(SEEDS_FILE.read_text(encoding="utf-8"), encoding="utf-8")
    return copy


def _session_json(reports: Path, name: str, difference: str | None, target: str = "memchat") -> None:
    reports.mkdir(parents=True, exist_ok=True)
    (reports / name).write_text(json.dumps({"seed": "20261206", "target": target, "difference": difference}))


def test_a_found_seed_is_added_with_its_date_target_and_first_difference_and_only_once(tmp_path: Path) -> None:
    seeds = _seeds_file(tmp_path)
    found = Regression("20261206", "2026-12-06", "open-webui", 'action 7 (When Ana asks "What is my \\\\ code?")')
    assert add_regression(found, seeds)
    assert not add_regression(found, seeds)  # (listed already for that target)
    assert load_seeds(seeds).regressions == (found,)
    assert seeds.read_text().startswith(SEEDS_FILE.read_text().rstrip("\n"))  # comments and fixed seeds kept
    listed = load_seeds(seeds)
    assert listed.in_browsers("open-webui") == ["20261206", listed.fixed[0]]
    assert listed.in_browsers("memchat") == [listed.fixed[0]]
    assert "20261206" not in listed.through_api


def test_the_command_reads_the_failed_sessions_json_and_says_what_it_added(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    seeds, reports = _seeds_file(tmp_path), tmp_path / "reports"
    _session_json(reports, "khoj-seed20261206-60x3.json", "action 12 (When Ben deletes his memory): the app and "
                  "the model disagree on Ben's memories\n  expected: []\n  actual: ['x']", target="khoj")
    assert main(["found", "--seed", "20261206", "--reports", str(reports), "--file", str(seeds)]) == 0
    entry = load_seeds(seeds).regressions[0]
    assert (entry.seed, entry.target) == ("20261206", "khoj")
    assert entry.found == "action 12 (When Ben deletes his memory): the app and the model disagree on Ben's memories"
    assert "commit" in capsys.readouterr().out


def test_a_seed_whose_sessions_all_passed_is_refused_in_one_line(tmp_path: Path) -> None:
    reports = tmp_path / "reports"
    _session_json(reports, "memchat-seed20261206-60x3.json", None)
    with pytest.raises(SeedsError, match="no session of seed 20261206 .* found a difference; nothing to add"):
        found_in(reports, "20261206")
    assert main(["found", "--seed", "20261206", "--reports", str(reports),
                 "--file", str(_seeds_file(tmp_path))]) == 2
