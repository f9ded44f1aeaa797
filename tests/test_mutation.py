"""The mutation run's own parts (tools/mutation): what is drawn, what is left out, how a mutant is recognised, what
the reports say, and the suite's cosmic-ray operators (where make mutation installed cosmic-ray)."""

from __future__ import annotations

import difflib
import json
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from harness.browser import STRYKER_ACTIVE_MUTANT_ENV, page_init_scripts
from tools.mutation.coverage_map import features_running, statement_heads
from tools.mutation.mutant_test import change_key, changed_lines, compile_error, features_for
from tools.mutation.population import (
    FAULT_FLAG,
    FAULT_ONLY,
    UNCALLED,
    Mutant,
    Population,
    fault_only_spans,
    load_equivalents,
)
from tools.mutation.report import Outcome, write_reports

ROOT = Path(__file__).resolve().parent.parent
COSMIC_RAY_PYTHON = ROOT / ".tools" / "cosmic-ray" / "bin" / "python"


def mutants(tool: str, n: int) -> list[Mutant]:
    return [Mutant(tool, str(i), f"memchat/m{i % 3}.py", i + 1, "Op", str(i)) for i in range(n)]


def test_the_sample_is_drawn_from_each_tool_in_proportion_and_the_same_for_the_same_seed() -> None:
    population = Population(mutants("cosmic-ray", 900) + mutants("stryker", 100))
    drawn = population.draw(100, "s")
    assert Counter(m.tool for m in drawn) == {"cosmic-ray": 90, "stryker": 10}
    assert drawn == population.draw(100, "s")
    assert drawn != population.draw(100, "t")


def test_a_small_sample_still_has_a_mutant_of_each_tool() -> None:
    drawn = Population(mutants("cosmic-ray", 990) + mutants("stryker", 10)).draw(5, "ci")
    assert Counter(m.tool for m in drawn) == {"cosmic-ray": 4, "stryker": 1}


def test_code_that_runs_only_with_a_fault_on_is_left_out_and_its_else_is_not(tmp_path: Path) -> None:
    source = ('def f(settings, x):\n'
              '    if settings.has("a-fault"):\n'
              '        x = x + 1\n'
              '    scoped = "" if settings.has("b-fault") else "AND user_id = %s"\n'
              '    if x > 1 and not settings.has("c-fault"):\n'
              '        x = 2\n'
              '    return x, scoped\n\n'
              'CALLED = f\n')
    (tmp_path / "memchat").mkdir()
    (tmp_path / "memchat" / "m.py").write_text(source)
    spans = fault_only_spans(source)
    assert ((3, 8), (3, 17)) in spans and ((4, 13), (4, 15)) in spans and len(spans) == 2
    population = Population()
    population.add([Mutant("cosmic-ray", "1", "memchat/m.py", 3, "NumberReplacer", "0", column=16),
                    Mutant("cosmic-ray", "2", "memchat/m.py", 4, "SqlWhereTermDropped", "0", column=23),
                    Mutant("cosmic-ray", "3", "memchat/m.py", 6, "NumberReplacer", "1", column=12)], tmp_path)
    assert [m.ref for m in population.mutants] == ["2", "3"]
    assert population.left_out == {FAULT_ONLY: 1}


def test_an_equivalent_needs_its_one_line_reason(tmp_path: Path) -> None:
    path = tmp_path / "mutation-equivalents.toml"
    path.write_text('[[equivalent]]\nmodule = "memchat/a.py"\nline = 3\noperator = "NumberReplacer"\n'
                    'reason = "the constant is only a default the suite always overrides"\n')
    [entry] = load_equivalents(path)
    assert entry.matches(Mutant("cosmic-ray", "9", "memchat/a.py", 3, "NumberReplacer", "1"))
    path.write_text('[[equivalent]]\nmodule = "memchat/a.py"\nline = 3\noperator = "NumberReplacer"\n')
    with pytest.raises(SystemExit, match="needs module, line, operator and reason"):
        load_equivalents(path)


def test_a_mutant_is_recognised_by_what_it_changes_in_gits_diff_and_in_cosmic_rays(tmp_path: Path) -> None:
    before = "a = 1\nb = 2\nc = 3\nd = 4\n"
    after = "a = 1\nb = 3\nc = 3\nd = 4\n"
    cosmic = "".join(difflib.unified_diff(before.splitlines(True), after.splitlines(True), "memchat/x.py",
                                          "memchat/x.py"))
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    (tmp_path / "x.py").write_text(before)
    subprocess.run(["git", "add", "x.py"], cwd=tmp_path, check=True)
    (tmp_path / "x.py").write_text(after)
    git = subprocess.run(["git", "diff", "--unified=0"], cwd=tmp_path, capture_output=True, text=True).stdout
    assert change_key("memchat/x.py", git) == change_key("memchat/x.py", cosmic)
    assert change_key("memchat/x.py", git) != change_key("memchat/y.py", git)


def test_each_part_of_the_app_runs_the_features_that_reach_it() -> None:
    assert features_for("memchat/migration.py") == ["features/replay_through_changes.feature"]
    assert "features/replay_through_changes.feature" not in features_for("memchat/static/chat.js")
    assert "features/generated_sessions.feature" in features_for("memchat/memory_store.py")
    for name in {f for p in ("memchat/web.py", "memchat/static/chat.js", "memchat/sign_ins.py")
                 for f in features_for(p)}:
        assert (ROOT / name).exists(), name
    with pytest.raises(SystemExit, match="in no area"):
        features_for("harness/recall.py")


def test_a_python_mutant_runs_only_the_features_that_ran_its_lines() -> None:
    diff = ("--- a/memchat/web.py\n+++ b/memchat/web.py\n@@ -75 +75 @@\n-    x = 1\n+    x = 2\n"
            "@@ -90,2 +90,0 @@\n-a\n-b\n@@ -120,0 +121 @@\n+c\n")
    assert changed_lines(diff) == [75, 90, 91, 120, 121]
    by_line = {"memchat/web.py": {"75": ["forgetting"], "91": ["in_session_memory", "forgetting"]}}
    ordered = ["features/in_session_memory.feature", "features/forgetting.feature", "features/hostile_users.feature"]
    assert features_running(by_line, "memchat/web.py", changed_lines(diff), ordered) == ordered[:2]
    assert features_running(by_line, "memchat/web.py", [76], ordered) == []
    assert features_running(by_line, "memchat/db.py", [75], ordered) == []


def test_a_line_continuing_a_statement_runs_where_the_statements_first_line_runs() -> None:
    source = ('WHERE = ("user_id = %s"\n         " AND deleted_at IS NULL")\n\n\n@cache\ndef f(x):\n'
              '    if (x and\n            x > 2):\n        return g(1,\n                 2)\n    return 0\n')
    assert statement_heads(source) == {1: 1, 2: 1, 5: 6, 6: 6, 7: 7, 8: 7, 9: 9, 10: 9, 11: 11}


def test_the_page_learns_strykers_active_mutant_only_in_a_mutation_run(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(STRYKER_ACTIVE_MUTANT_ENV, raising=False)
    assert page_init_scripts() == []
    monkeypatch.setenv(STRYKER_ACTIVE_MUTANT_ENV, "12")
    assert page_init_scripts() == ['(globalThis.__stryker__ = globalThis.__stryker__ || {}).activeMutant = "12";']


def test_the_reports_give_the_score_and_each_survivor_with_its_diff(tmp_path: Path) -> None:
    killed = Mutant("cosmic-ray", "1", "memchat/a.py", 3, "NumberReplacer", "0")
    survivor = Mutant("stryker", "7", "memchat/static/chat.js", 40, "ConditionalExpression", "true")
    equivalent = Mutant("cosmic-ray", "2", "memchat/b.py", 9, "RemoveCall", "0")
    outcomes = [Outcome(killed, "killed", "features/x.feature::test_y: assert 1 == 2", "-a\n+b\n", 12.0),
                Outcome(survivor, "survived", "31 scenarios passed", "-if (x)\n+if (true)\n", 80.0),
                Outcome(equivalent, "equivalent", "a log line no user sees", "")]
    score = write_reports(tmp_path, 3, "ci", 99.5, outcomes)
    data = json.loads((tmp_path / "mutation.json").read_text())
    assert {k: data[k] for k in ("sample", "seed", "seconds", "killed", "survived", "equivalent", "errors")} == \
        {"sample": 3, "seed": "ci", "seconds": 99.5, "killed": 1, "survived": 1, "equivalent": 1, "errors": 0}
    assert set(data["mutants"][1]) == {"id", "tool", "module", "line", "operator", "diff", "status", "reason"}
    assert score.percent == 50.0  # errors are apart: killed of killed + survived
    text = (tmp_path / "mutation.md").read_text()
    assert "### memchat/static/chat.js:40 (ConditionalExpression)" in text and "+if (true)" in text


@pytest.mark.skipif(not COSMIC_RAY_PYTHON.exists(), reason="cosmic-ray is not installed (make mutation installs it)")
def test_the_suites_cosmic_ray_operators_make_their_examples() -> None:
    check = ("from cosmic_ray.mutating import mutate_code\n"
             "import memtest_mutation_operators as m\n"
             "bad = [(n, e.pre_mutation_code) for n, op in m._OPERATORS.items() for e in op.examples()\n"
             "       if mutate_code(e.pre_mutation_code, op(), e.occurrence) != e.post_mutation_code]\n"
             "print(bad)\n")
    out = subprocess.run([str(COSMIC_RAY_PYTHON), "-c", check], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_code_behind_a_flag_that_only_ever_carries_a_fault_is_left_out(tmp_path: Path) -> None:
    (tmp_path / "memchat").mkdir()
    (tmp_path / "memchat" / "state.py").write_text(
        'from memchat.store import Store, batches\n\n'
        'def build(settings, ids):\n'
        '    return Store(soft=settings.has("a-fault"), strict=True), batches(ids, settings.has("b-fault"))\n')
    (tmp_path / "memchat" / "store.py").write_text(
        'class Store:\n'
        '    def __init__(self, soft, strict):\n'
        '        self.soft, self.strict = soft, strict\n\n'
        '    def delete(self):\n'
        '        if self.soft:\n'
        '            return 1\n'
        '        if self.strict:\n'
        '            return 2\n\n'
        'def batches(ids, drop_last):\n'
        '    if drop_last:\n'
        '        return ids[:-1]\n'
        '    return ids\n')
    population = Population()
    population.add([Mutant("cosmic-ray", "1", "memchat/store.py", 7, "NumberReplacer", "0", column=19),
                    Mutant("cosmic-ray", "2", "memchat/store.py", 9, "NumberReplacer", "1", column=19),
                    Mutant("cosmic-ray", "3", "memchat/store.py", 13, "NumberReplacer", "2", column=20),
                    Mutant("cosmic-ray", "4", "memchat/store.py", 14, "NumberReplacer", "3", column=4)], tmp_path)
    assert [m.ref for m in population.mutants] == ["1", "2", "3", "4"]  # drawn as before, then equivalent by rule
    assert [population.by_rule.get(m.id) for m in population.mutants] == [FAULT_FLAG, None, FAULT_FLAG, None]
    assert population.left_out == {}


def test_a_function_nothing_in_the_app_uses_is_left_out(tmp_path: Path) -> None:
    (tmp_path / "memchat").mkdir()
    (tmp_path / "memchat" / "web.py").write_text(
        'from memchat import legacy\nfrom memchat.legacy import load\n\n'
        'def serve(state):\n    return legacy.fetch(1), load(2), state.search(3)\n')
    (tmp_path / "memchat" / "legacy.py").write_text(
        'def fetch(x):\n    return _helper(x)\n\n'
        'def _helper(x):\n    return x + 1\n\n'
        'def load(x):\n    return x + 2\n\n'
        'def search(x):\n    return x + 3\n')
    population = Population()
    population.add([Mutant("cosmic-ray", str(line), "memchat/legacy.py", line, "NumberReplacer", "0", column=15)
                    for line in (2, 5, 8, 11)], tmp_path)
    assert [population.by_rule.get(m.id) for m in population.mutants] == [None, None, None, UNCALLED]


def test_annotations_a_module_never_evaluates_are_left_out(tmp_path: Path) -> None:
    source = ("from __future__ import annotations\n\ndef f(x: int | None) -> int | None:\n    return x | 1\n\n"
              "CALLED = f\n")
    (tmp_path / "memchat").mkdir()
    (tmp_path / "memchat" / "m.py").write_text(source)
    population = Population()
    population.add([Mutant("cosmic-ray", "1", "memchat/m.py", 3, "ReplaceBinaryOperator_BitOr_Add", "0", column=9),
                    Mutant("cosmic-ray", "2", "memchat/m.py", 3, "ReplaceBinaryOperator_BitOr_Add", "1", column=25),
                    Mutant("cosmic-ray", "3", "memchat/m.py", 4, "ReplaceBinaryOperator_BitOr_Add", "2", column=11)],
                   tmp_path)
    assert [m.ref for m in population.mutants] == ["3"]


def test_a_mutant_that_is_not_valid_python_is_named_as_such(tmp_path: Path) -> None:
    mutated = tmp_path / "m.py"
    mutated.write_text('params = {"a": 1}\nquery = {<<params, "key": 2}\n')
    assert compile_error(mutated) == "invalid syntax, line 2"
    mutated.write_text('params = {"a": 1}\nquery = {**params, "key": 2}\n')
    assert compile_error(mutated) == ""


def test_an_equivalent_with_a_replacement_matches_only_that_mutant_of_its_line(tmp_path: Path) -> None:
    listed = tmp_path / "equivalents.toml"
    listed.write_text('[[equivalent]]\nmodule = "memchat/static/chat.js"\nline = 49\n'
                      'operator = "ConditionalExpression"\nreplacement = "false"\nreason = "a fault\'s flag"\n')
    (entry,) = load_equivalents(listed)
    assert entry.matches(Mutant("stryker", "7", "memchat/static/chat.js", 49, "ConditionalExpression", "false"))
    assert not entry.matches(Mutant("stryker", "6", "memchat/static/chat.js", 49, "ConditionalExpression", "true"))
