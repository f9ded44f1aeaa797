"""The mutation run's own parts (tools/mutation): what is drawn, what is left out, how a mutant is recognised, what
the reports say, and the suite's cosmic-ray operators (where make mutation installed cosmic-ray)."""

from __future__ import annotations

import difflib
import json
import shutil
import subprocess
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest

from harness.browser.chromium import STRYKER_ACTIVE_MUTANT_ENV, page_init_scripts
from tools.mutation import mutant_test
from tools.mutation.coverage_map import features_running, statement_heads
from tools.mutation.killed import KILLED_FILE, Killed, killing_scenarios, load_killed, named_mutants, stale_killed
from tools.mutation.mutant_test import (
    AROUND,
    NO_START,
    NOT_PYTHON,
    area_for,
    change_key,
    changed_lines,
    compile_error,
    features_for,
    verdict,
)
from tools.mutation.population import (
    EQUIVALENTS_FILE,
    FAULT_FLAG,
    FAULT_ONLY,
    UNCALLED,
    Mutant,
    Population,
    app_modules,
    enclosing_definition,
    fault_only_spans,
    load_equivalents,
    named_exactly,
    stale_equivalents,
)
from tools.mutation.report import Outcome, write_reports
from tools.mutation.run import settle_no_starts
from tools.suite_runs import RunResults

ROOT = Path(__file__).resolve().parent.parent
COSMIC_RAY_PYTHON = ROOT / ".tools" / "cosmic-ray" / "bin" / "python"
STRYKER = ROOT / ".tools" / "stryker" / "node_modules" / ".bin" / "stryker"
# make's stamp, touched once cosmic-ray and the suite's plugin are installed (CI installs them beside make test)
COSMIC_RAY_INSTALLED = any((ROOT / ".tools" / "cosmic-ray").glob(".installed-*"))
BUILD_MEMORY = 'return f"{max(512, -(-rows * (4 * dims + 8) // (1 << 20)))}MB"'


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


def entry(source: str = BUILD_MEMORY, column: int = 23, replacement: str = "511", reason: str = "only a build's memory",
          line: int = 3) -> str:
    return (f'[[equivalent]]\nmodule = "memchat/a.py"\nline = {line}\noperator = "NumberReplacer"\ncolumn = {column}\n'
            f'replacement = {json.dumps(replacement)}\nsource = {json.dumps(source)}\nreason = {json.dumps(reason)}\n')


def mutant_of_line_3(column: int, replacement: str, source: str = BUILD_MEMORY) -> Mutant:
    return Mutant("cosmic-ray", "9", "memchat/a.py", 3, "NumberReplacer", "0", column=column, replacement=replacement,
                  source=source)


def test_an_equivalent_names_its_mutant_exactly_with_a_one_line_reason(tmp_path: Path) -> None:
    path = tmp_path / "mutation-equivalents.toml"
    path.write_text(entry())
    [named] = load_equivalents(path)
    assert named.matches(mutant_of_line_3(23, "511"))
    for missing in ("column", "replacement", "source", "reason"):
        path.write_text("".join(line + "\n" for line in entry().splitlines() if not line.startswith(missing)))
        with pytest.raises(SystemExit, match=f"needs module, line, operator, column, replacement, source, reason "
                                             f"\\('{missing}'\\)"):
            load_equivalents(path)
    path.write_text(entry(reason="two\nlines"))
    with pytest.raises(SystemExit, match="needs a one-line reason"):
        load_equivalents(path)
    path.write_text(entry(source="  " + BUILD_MEMORY))
    with pytest.raises(SystemExit, match="the stripped text of its line"):
        load_equivalents(path)


def test_an_equivalent_does_not_cover_another_mutant_of_its_line(tmp_path: Path) -> None:
    """The 512MB floor made 511MB is one mutant; (1 << 20) made (0 << 20), a division by zero, is another of the
    same line and operator, and 513 another of the same column."""
    path = tmp_path / "mutation-equivalents.toml"
    path.write_text(entry(column=23, replacement="511"))
    [named] = load_equivalents(path)
    assert named.matches(mutant_of_line_3(23, "511"))
    assert not named.matches(mutant_of_line_3(23, "513"))  # the same number, the other way
    assert not named.matches(mutant_of_line_3(BUILD_MEMORY.index("1 <<") + 4, "0"))  # the division by zero
    other = Mutant("cosmic-ray", "9", "memchat/a.py", 3, "ReplaceBinaryOperator_Add_Sub", "0", column=23,
                   replacement="511", source=BUILD_MEMORY)
    assert not named.matches(other)  # another operator
    assert not named.matches(replace(mutant_of_line_3(23, "511"), line=4))  # another line
    assert not named.matches(replace(mutant_of_line_3(23, "511"), module="memchat/b.py"))


def test_an_equivalent_whose_line_changed_applies_to_nothing(tmp_path: Path) -> None:
    (tmp_path / "memchat").mkdir()
    module = tmp_path / "memchat" / "a.py"
    module.write_text(f"def memory(rows, dims):\n    # the build's memory\n    {BUILD_MEMORY}\n")
    path = tmp_path / "mutation-equivalents.toml"
    path.write_text(entry())
    entries = load_equivalents(path)
    assert stale_equivalents(entries, tmp_path) == []
    [fresh] = named_exactly([Mutant("cosmic-ray", "9", "memchat/a.py", 3, "NumberReplacer", "0", column=23)],
                            tmp_path, {"9": "511"})
    assert fresh.source == BUILD_MEMORY and entries[0].matches(fresh)
    changed = BUILD_MEMORY.replace("4 * dims", "2 * dims")  # same line, same column: other code
    module.write_text(f"def memory(rows, dims):\n    # the build's memory\n    {changed}\n")
    assert stale_equivalents(entries, tmp_path) == entries
    [now] = named_exactly([Mutant("cosmic-ray", "9", "memchat/a.py", 3, "NumberReplacer", "0", column=23)],
                          tmp_path, {"9": "511"})
    assert not entries[0].matches(now)
    module.write_text("def memory(rows, dims):\n    return 512\n")  # the line is gone
    assert stale_equivalents(entries, tmp_path) == entries


def test_every_equivalent_still_names_the_code_its_reason_describes() -> None:
    """An entry of mutation-equivalents.toml whose line no longer holds its `source` applies to nothing: read the
    code again, and move the entry to the line that holds it (or drop it)."""
    stale = stale_equivalents(load_equivalents(ROOT / EQUIVALENTS_FILE), ROOT)
    assert stale == [], "entries whose line no longer reads their source:\n" + "\n".join(
        f"  {e.module}:{e.line} {e.operator} (column {e.column}, {e.replacement!r}): {e.source!r}" for e in stale)


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
    for name in {f for p in ("memchat/web/memories.py", "memchat/static/chat.js", "memchat/sign_ins.py")
                 for f in features_for(p)}:
        assert (ROOT / name).exists(), name
    with pytest.raises(SystemExit, match="in no area"):
        features_for("harness/vocabulary/recall.py")


def test_the_model_clients_lines_run_the_chat_features_on_the_target_that_turns_it_on() -> None:
    assistant = (ROOT / "memchat" / "assistant.py").read_text(encoding="utf-8")
    held = assistant.splitlines()
    asking = next(i for i, line in enumerate(held, 1) if "/chat/completions" in line)  # in _ask_model
    choosing = next(i for i, line in enumerate(held, 1) if line.startswith("def _newest("))  # the built-in's
    model = area_for("memchat/assistant.py", [asking], assistant)
    assert model.target == "memchat-model" and model.features[0] == "features/in_session_memory.feature"
    assert (ROOT / "targets" / "memchat-model.toml").exists()
    assert area_for("memchat/assistant.py", [choosing], assistant).target is None
    assert area_for("memchat/assistant.py").target is None  # without its lines: the file's own area
    cli = (ROOT / "memchat" / "cli.py").read_text(encoding="utf-8")
    lines = cli.splitlines()
    setting = next(i for i, line in enumerate(lines, 1) if '"MEMCHAT_LLM_MODEL"' in line)
    assert area_for("memchat/cli.py", [setting], cli).target == "memchat-model"
    assert area_for("memchat/cli.py", [setting - 1], cli) == area_for("memchat/cli.py")  # the admin token's line
    assert "features/replay_through_changes.feature" in features_for("memchat/cli.py")


def test_a_feature_measured_on_another_target_runs_only_there() -> None:
    by_line = {"memchat/assistant.py": {"88": ["in_session_memory@memchat-model"], "60": ["in_session_memory"]}}
    ordered = ["features/in_session_memory.feature", "features/forgetting.feature"]
    assert features_running(by_line, "memchat/assistant.py", [88], ordered, "memchat-model") == ordered[:1]
    assert features_running(by_line, "memchat/assistant.py", [88], ordered) == []
    assert features_running(by_line, "memchat/assistant.py", [60], ordered, "memchat-model") == []


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


def test_the_reports_give_both_scores_each_survivor_with_its_diff_and_each_error_with_its_cause(
        tmp_path: Path) -> None:
    killed = Mutant("cosmic-ray", "1", "memchat/a.py", 3, "NumberReplacer", "0", column=8, replacement="1",
                    source="x = 0")
    survivor = Mutant("stryker", "7", "memchat/static/chat.js", 40, "ConditionalExpression", "true", column=6,
                      replacement="true", source="if (x) {")
    equivalent = Mutant("cosmic-ray", "2", "memchat/b.py", 9, "RemoveCall", "0", column=4, replacement="None",
                        source="log(x)")
    broken = Mutant("cosmic-ray", "3", "memchat/c.py", 5, "ReplaceBinaryOperator_Pow_Mul", "0", column=9,
                    replacement="*", source="f(**params)")
    outcomes = [Outcome(killed, "killed", "features/x.feature::test_y: assert 1 == 2", "-a\n+b\n", 12.0),
                Outcome(survivor, "survived", "31 scenarios passed", "-if (x)\n+if (true)\n", 80.0),
                Outcome(equivalent, "equivalent", "a log line no user sees", ""),
                Outcome(broken, "error", f"the mutant is {NOT_PYTHON} (invalid syntax, line 5): not run", "",
                        cause=NOT_PYTHON)]
    score = write_reports(tmp_path, 4, "ci", 99.5, outcomes)
    data = json.loads((tmp_path / "mutation.json").read_text())
    assert {k: data[k] for k in ("sample", "seed", "seconds", "killed", "survived", "equivalent", "errors")} == \
        {"sample": 4, "seed": "ci", "seconds": 99.5, "killed": 1, "survived": 1, "equivalent": 1, "errors": 1}
    assert data["score"] == 50.0 == score.percent  # killed over killed + survived: what MIN_SCORE gates
    assert data["score_raw"] == 33.3  # killed over every mutant that is not an error, the equivalent among them
    assert data["error_causes"] == {NOT_PYTHON: 1}
    assert data["errors_listed"] == [{"id": broken.id, "module": "memchat/c.py", "line": 5,
                                      "operator": "ReplaceBinaryOperator_Pow_Mul", "cause": NOT_PYTHON,
                                      "reason": outcomes[3].reason}]
    assert set(data["mutants"][1]) == {"id", "tool", "module", "line", "operator", "column", "replacement", "source",
                                       "diff", "status", "reason"}
    assert data["mutants"][3]["cause"] == NOT_PYTHON
    text = (tmp_path / "mutation.md").read_text()
    assert "### memchat/static/chat.js:40:6 (ConditionalExpression)" in text and "+if (true)" in text
    assert 'column = 6\nreplacement = "true"\nsource = "if (x) {"' in text  # the survivor named exactly
    assert "### memchat/c.py:5:9 (ReplaceBinaryOperator_Pow_Mul)" in text and f"Cause: {NOT_PYTHON}." in text


@pytest.mark.skipif(not COSMIC_RAY_INSTALLED, reason="cosmic-ray is not installed (make mutation installs it)")
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


def test_the_else_of_not_a_faults_test_runs_only_with_the_fault(tmp_path: Path) -> None:
    """`a if not <fault> else b` and `if not <fault>: ... else: ...`: b and the else run only while it is on."""
    source = ('def title(settings, role):\n'
              '    once = "t" if not settings.has("a-fault") else f"t OR {role == 1}"\n'
              '    if not settings.has("b-fault"):\n'
              '        return once\n'
              '    else:\n'
              '        return role == 2\n')
    spans = fault_only_spans(source)
    inside = [any(start <= at < end for start, end in spans) for at in [(2, 11), (2, 59), (4, 15), (6, 15)]]
    assert inside == [False, True, False, True]


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


def test_a_package_of_the_app_is_drawn_from_and_its_functions_used_by_their_package_name(tmp_path: Path) -> None:
    (tmp_path / "memchat" / "web").mkdir(parents=True)
    (tmp_path / "memchat" / "cli.py").write_text("from memchat.web import build_app\n\ndef main():\n    build_app(1)\n")
    (tmp_path / "memchat" / "web" / "__init__.py").write_text(
        "from memchat.web import pages\n\ndef build_app(x):\n    return [*pages.routes(x)]\n")
    (tmp_path / "memchat" / "web" / "pages.py").write_text("def routes(x):\n    return x + 1\n")
    assert [p.relative_to(tmp_path).as_posix() for p in app_modules(tmp_path)] == [
        "memchat/cli.py", "memchat/web/__init__.py", "memchat/web/pages.py"]
    population = Population()
    population.add([Mutant("cosmic-ray", "1", "memchat/web/__init__.py", 4, "NumberReplacer", "0", column=0),
                    Mutant("cosmic-ray", "2", "memchat/web/pages.py", 2, "NumberReplacer", "0", column=15)], tmp_path)
    assert [population.by_rule.get(m.id) for m in population.mutants] == [None, None]


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


def test_a_stryker_equivalent_matches_only_its_replacement_at_its_column(tmp_path: Path) -> None:
    listed = tmp_path / "equivalents.toml"
    source = "if (writesPaused) return writing;"
    listed.write_text('[[equivalent]]\nmodule = "memchat/static/chat.js"\nline = 49\n'
                      'operator = "ConditionalExpression"\ncolumn = 8\nreplacement = "false"\n'
                      f'source = {json.dumps(source)}\nreason = "a fault\'s flag"\n')
    (named,) = load_equivalents(listed)

    def js(ref: str, column: int, replacement: str) -> Mutant:
        return Mutant("stryker", ref, "memchat/static/chat.js", 49, "ConditionalExpression", replacement,
                      column=column, replacement=replacement, source=source)

    assert named.matches(js("7", 8, "false"))
    assert not named.matches(js("6", 8, "true"))
    assert not named.matches(js("8", 30, "false"))


def run_of(failed: dict[str, str] | None = None, errors: dict[str, str] | None = None,
           passed: int = 0) -> RunResults:
    results = RunResults(failed=list(failed or {}), errors=list(errors or {}),
                         passed=[f"features/p.feature::test_{i}" for i in range(passed)])
    results.messages = {**(failed or {}), **(errors or {})}
    return results


def test_what_a_mutants_run_came_to_and_an_errors_cause() -> None:
    scenario = "features/forgetting.feature::test_a_deleted_memory"
    assert verdict(run_of(failed={scenario: "AssertionError: Ana saw 2"}), 1, "")[:2] == ("killed", "")
    assert verdict(run_of(passed=31), 0, "") == ("survived", "", "31 scenarios passed")
    no_start = "Failed: AppLaunchError: memchat did not start: Traceback (log: x.log)"
    assert verdict(run_of(errors={scenario: no_start}), 1, "")[:2] == ("error", NO_START)
    assert verdict(run_of(failed={scenario: "harness.app.app_launcher.AppLaunchError: memchat did not start"}), 1,
                   "")[:2] == ("error", NO_START)  # a replay's own app
    refused = ('harness.drivers.base.DriverError: deleting user ana-gw0-1@memtest.test: the app answered 200 with '
               '{"deleted": false}, not {"deleted": true}')
    status, cause, reason = verdict(run_of(errors={scenario: refused}, passed=3), 1, "")
    assert (status, cause) == ("killed", "") and "refused its own clean-up" in reason
    assert verdict(run_of(errors={scenario: "OSError: no space left"}), 1, "")[:2] == ("error", AROUND)
    assert verdict(run_of(), 4, "usage")[:2] == ("error", "pytest exited abnormally")


def test_a_mutant_that_keeps_the_app_from_starting_is_killed_when_the_unmutated_app_started() -> None:
    mutant = Mutant("cosmic-ray", "1", "memchat/cli.py", 120, "AddNot", "0")
    other = Mutant("cosmic-ray", "2", "memchat/cli.py", 121, "AddNot", "1")
    outcomes = [Outcome(mutant, "error", f"{NO_START}: memchat did not start", "-a\n+b\n", 30.0, NO_START),
                Outcome(other, "error", "timed out after 420 s", "", 420.0, "timed out")]
    settled = settle_no_starts(outcomes, True, "the unmutated app started in this run")
    assert [(o.status, o.cause) for o in settled] == [("killed", ""), ("error", "timed out")]
    assert settled[0].reason.endswith("; the unmutated app started in this run")
    settled = settle_no_starts(outcomes, False, "the unmutated app did not start in this run either")
    assert [(o.status, o.cause) for o in settled] == [("error", NO_START), ("error", "timed out")]


def test_what_a_left_out_mutant_is_counted_under() -> None:
    source = "X = 1\n\nclass Store:\n    @cached\n    def plan(self):\n        return 2\n\ndef f():\n    return 3\n"
    assert [enclosing_definition(source, line) for line in (1, 3, 4, 6, 9)] == \
        ["(module level)", "Store", "Store.plan", "Store.plan", "f"]


@pytest.mark.skipif(not COSMIC_RAY_INSTALLED, reason="cosmic-ray is not installed (make mutation installs it)")
def test_a_cosmic_ray_mutants_replacement_is_what_its_diff_shows_in_place() -> None:
    line, call = f"    {BUILD_MEMORY}", "    conn.execute(1, 2)"
    floor, shift, product = (line.index(text) for text in ("512", "1 <<", "* dims"))
    mutations = [("core/NumberReplacer", 1, (2, floor), (2, floor + 3)),  # 512 - 1
                 ("core/NumberReplacer", 7, (2, shift), (2, shift + 1)),  # (1 << 20) - 1: the division by zero
                 ("core/ReplaceBinaryOperator_Mul_Mod", 1, (2, product), (2, product + 1)),
                 ("memtest/RemoveCall", 0, (3, 4), (3, len(call)))]
    check = ("import json, sys\n"
             "from cosmic_ray.work_item import MutationSpec\n"
             "from memtest_cr_session import replacement\n"
             "specs = [MutationSpec('m.py', *m) for m in json.loads(sys.argv[2])]\n"
             "print(json.dumps([replacement(sys.argv[1], spec) for spec in specs]))\n")
    source = f"def memory(rows, dims):\n{line}\n{call}\n"
    out = subprocess.run([str(COSMIC_RAY_PYTHON), "-c", check, source, json.dumps(mutations)], capture_output=True,
                         text=True, check=True)
    assert json.loads(out.stdout) == ["511", "0", "%", "None"]


@pytest.mark.skipif(not (COSMIC_RAY_INSTALLED and STRYKER.exists()),
                    reason="cosmic-ray and StrykerJS are not installed (make mutation installs them)")
def test_every_equivalent_names_a_mutant_the_tools_make(tmp_path: Path) -> None:
    """Each entry of mutation-equivalents.toml is one mutant of the population as the tools make it now: its
    column and replacement are a mutant's, not a guess."""
    from tools.mutation import run

    entries = load_equivalents(ROOT / EQUIVALENTS_FILE)
    scratch = tmp_path / "scratch"
    shutil.copytree(ROOT / "memchat", scratch / "memchat", ignore=shutil.ignore_patterns("__pycache__", "tests"))
    config = run.cosmic_ray_config(scratch, 60.0, sorted({e.module for e in entries if e.module.endswith(".py")}))
    session = config.with_suffix(".sqlite")
    run.cosmic_ray("cosmic-ray", "init", str(config), str(session), cwd=scratch)
    lines = {(e.module, e.line) for e in entries}
    made = [m for m in run.python_mutants(scratch, session) + run.js_mutants(scratch) if (m.module, m.line) in lines]
    made = named_exactly(made, scratch, run.cosmic_ray_replacements(scratch, session, made))
    unmade = [e for e in entries if not any(e.matches(m) for m in made)]
    assert unmade == [], "entries that name no mutant the tools make:\n" + "\n".join(
        f"  {e.module}:{e.line}:{e.column} {e.operator} -> {e.replacement!r}" for e in unmade)
    assert all(sum(e.matches(m) for m in made) == 1 for e in entries)  # and each one mutant only


def test_cis_sample_names_mutants_the_last_scored_draw_killed_and_follows_their_code(tmp_path: Path) -> None:
    """An entry of mutation-killed.toml names the mutant of its change nearest its line, where lines were added above
    it; another replacement of the same column is not it; an entry whose source left its module names nothing."""
    (tmp_path / "memchat").mkdir()
    module = tmp_path / "memchat" / "a.py"
    module.write_text(f"def memory(rows, dims):\n    # the build's memory\n    {BUILD_MEMORY}\n")
    path = tmp_path / KILLED_FILE
    path.write_text('[[killed]]\nmodule = "memchat/a.py"\nline = 3\noperator = "NumberReplacer"\ncolumn = 23\n'
                    f'replacement = "511"\nsource = {json.dumps(BUILD_MEMORY)}\nkilled_by = "a scenario"\n')
    [entry] = load_killed(path)
    module.write_text(f"def memory(rows, dims):\n    # the build's memory\n    # grown\n    {BUILD_MEMORY}\n")
    made = [Mutant("cosmic-ray", ref, "memchat/a.py", 4, "NumberReplacer", ref, column=23) for ref in ("1", "2")]

    def exactly(ms: list[Mutant]) -> list[Mutant]:
        return named_exactly(ms, tmp_path, {"1": "513", "2": "511"})

    assert [m.ref for m in named_mutants([entry], made, tmp_path, exactly)] == ["2"]
    assert stale_killed([entry], tmp_path) == []
    module.write_text("def memory(rows, dims):\n    return 512\n")
    assert stale_killed([entry], tmp_path) == [entry]
    assert named_mutants([entry], made, tmp_path, exactly) == []
    path.write_text('[[killed]]\nmodule = "memchat/a.py"\n')
    with pytest.raises(SystemExit, match="each \\[\\[killed\\]\\] needs module, line"):
        load_killed(path)


def test_every_mutant_cis_sample_is_drawn_from_still_names_code_of_the_app() -> None:
    """mutation-killed.toml is rewritten from each scored draw (python -m tools.mutation.killed); an entry whose
    source left its module is read again and moved, or dropped, and said so in docs/mutation.md."""
    entries = load_killed(ROOT / KILLED_FILE)
    assert len(entries) >= 5
    stale = stale_killed(entries, ROOT)
    assert stale == [], "entries whose source is no longer in their module:\n" + "\n".join(
        f"  {k.module}:{k.line} {k.operator} (column {k.column}, {k.replacement!r}): {k.source!r}" for k in stale)


def test_cis_sample_runs_first_the_scenario_that_killed_each_drawn_mutant() -> None:
    """By module, the scenarios that killed the drawn mutants when they were scored (found by their change at any
    line); an entry killed by an app that did not start names none."""
    scored = [Killed("memchat/a.py", 3, "NumberReplacer", 23, "511", BUILD_MEMORY, "features/x.feature::test_x[1]"),
              Killed("memchat/a.py", 9, "NumberReplacer", 4, "0", "n = 1", "the app did not start"),
              Killed("memchat/b.py", 5, "NumberReplacer", 4, "0", "n = 1", "features/y.feature::test_y")]
    drawn = [Mutant("cosmic-ray", "1", "memchat/a.py", 4, "NumberReplacer", "1", 23, "511", BUILD_MEMORY),
             Mutant("cosmic-ray", "2", "memchat/a.py", 12, "NumberReplacer", "2", 4, "0", "n = 1")]
    assert killing_scenarios(scored, drawn) == {"memchat/a.py": ["features/x.feature::test_x[1]"]}


def test_a_mutant_its_first_scenario_no_longer_kills_runs_its_whole_area(monkeypatch: pytest.MonkeyPatch,
                                                                          tmp_path: Path) -> None:
    """A mutant of CI's sample is killed by the scenario that killed it when scored, run alone; when that scenario
    passes (or is no longer there), its whole area runs, as any mutant's does, and decides."""
    runs: list[list[str]] = []
    failing: set[str] = set()

    class Run:
        def __init__(self, label: str, args: list[str]) -> None:
            runs.append(args)
            failed = [a for a in args if a in failing]
            self.results = RunResults(passed=[] if failed else ["t"], failed=failed,
                                      messages={f: "AssertionError: Ana saw 2 of 3" for f in failed})
            self.returncode = 1 if failed else 0
            self.log_file = mutant_test.ROOT / "reports" / "x.log"

        def run(self, timeout: float) -> None:
            pass

        def tail(self, n: int) -> str:
            return ""

    monkeypatch.setattr(mutant_test, "WORK", tmp_path)
    monkeypatch.setattr(mutant_test, "_suite_run", Run)
    monkeypatch.setattr(mutant_test, "unmutated_source", lambda path: None)
    first = "features/forgetting.feature::test_a"
    (tmp_path / mutant_test.FIRST_FILE).write_text(json.dumps({"memchat/static/memories.js": [first]}))
    failing.add(first)
    assert mutant_test.run("k1", "stryker", "memchat/static/memories.js") == 1
    assert runs == [[first, "-x"]]
    failing.clear()
    runs.clear()
    assert mutant_test.run("k2", "stryker", "memchat/static/memories.js") == 0
    assert runs[0] == [first, "-x"] and runs[1][-1] == "-x" and first not in runs[1] and len(runs) == 2
    outcomes = [json.loads(line) for line in (tmp_path / "outcomes.jsonl").read_text().splitlines()]
    assert [o["status"] for o in outcomes] == ["killed", "survived"]
    assert outcomes[0]["reason"].startswith(first)
