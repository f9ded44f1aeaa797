"""What a new QA engineer slips on first (a fresh clone, the README, one new scenario), each answered in one line:
a failure read first as the step's Gherkin line, its feature file and line and the user's words; a memory written
otherwise than the page lists it failing at once with every memory she has; an app not installed naming the command
that installs it; the README's -k and -m examples selecting scenarios; the report of one run holding that run only."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import pytest

from harness.app.app_launcher import ROOT, install_command, not_installed
from harness.suite.failed_step import FailedStep
from harness.suite.failure_text import Verdict, in_the_users_words, verdict_repr
from harness.suite.report import ALLURERC, categories_for_allure2

PYTHON = str(ROOT / ".venv" / "bin" / "python") if (ROOT / ".venv" / "bin" / "python").exists() else sys.executable
SCENARIO = "features/forgetting.feature::test_a_memory_ana_deletes_is_forgotten_and_nobody_elses_memory_changes"
# The newcomer's slip, made in a real scenario without another feature file: the memory she deletes written with a
# typo (a child pytest's plugin changes the step's argument; the Gherkin line stays as the feature file has it).
TYPO = '''import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_bdd_before_step_call(request, feature, scenario, step, step_func, step_func_args):
    if step.keyword == "When" and step_func_args.get("text") == "My locker code is 5150.":
        step_func_args["text"] = "My lock code is 5150."
    yield
'''
STEP = 'When Ana deletes her memory "My locker code is 5150."'
LINE = next(n for n, line in enumerate((ROOT / "features" / "forgetting.feature").read_text().splitlines(), 1)
            if line.strip() == STEP)
WHERE = f"(features/forgetting.feature:{LINE})"
DELETES = f"'{STEP}'"
NOT_HERS = ("Ana has no memory that reads 'My lock code is 5150.'; her memories: ['My locker code is 5150.', "
            "'My gate code is 7731.', 'My bike lock is 2468.']")


@dataclass
class Run:
    output: str
    junit: Path
    allure: Path

    def failure_lines(self) -> list[str]:
        """The lines of the FAILURES section after the scenario's own header line."""
        lines = self.output.splitlines()
        start = next(i for i, line in enumerate(lines) if re.match(r"^_+ test_.* _+$", line))
        ends = ("---", "===", "- generated xml file")  # a long JUnit path leaves its line without the dashes
        end = next(i for i, line in enumerate(lines) if i > start and line.startswith(ends))
        return lines[start + 1:end]


@pytest.fixture(scope="module")
def typo_run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    tmp = tmp_path_factory.mktemp("newcomer")
    (tmp / "newcomer_typo.py").write_text(TYPO, encoding="utf-8")
    run = Run("", tmp / "junit.xml", tmp / "allure")
    proc = subprocess.run([PYTHON, "-m", "pytest", SCENARIO, "-p", "newcomer_typo", "-p", "no:cacheprovider",
                           f"--junitxml={run.junit}", "--alluredir", str(run.allure), "--output", str(tmp / "pw")],
                          cwd=ROOT, capture_output=True, text=True, timeout=300, env=_env(PYTHONPATH=str(tmp)))
    run.output = proc.stdout + proc.stderr
    assert proc.returncode == 1 and "1 failed" in run.output, run.output[-3000:]
    return run


def _env(**extra: str) -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("MEMTEST_") and k != "PYTEST_ADDOPTS"} | extra


def test_a_failure_reads_first_as_the_gherkin_line_its_place_and_the_users_words(typo_run: Run) -> None:
    headline = f"{DELETES} {WHERE}: {NOT_HERS}"
    lines = typo_run.failure_lines()
    assert lines[0] == headline, typo_run.output[-3000:]
    assert len(lines) == 2 and "every frame: pytest --tb=long" in lines[1], lines  # no pytest frames by default
    failure = next(ET.parse(typo_run.junit).getroot().iter("failure"))
    assert failure.get("message") == headline
    result = next(json.loads(p.read_text()) for p in typo_run.allure.glob("*-result.json"))
    details = result["statusDetails"]
    assert result["status"] == "failed" and details["message"] == f"{NOT_HERS}\n\nat {DELETES} {WHERE}", details
    assert "actors/browser.py" in details["trace"], details["trace"]  # every frame, in the report's trace


def test_a_memory_the_page_does_not_list_fails_at_once_naming_her_and_every_memory_she_has(typo_run: Run) -> None:
    assert NOT_HERS in typo_run.failure_lines()[0]
    assert "Timeout" not in typo_run.output, typo_run.output[-3000:]  # not a locator's wait run out


def _verdict_of(exc: AssertionError, style: str) -> str:
    try:
        raise exc
    except AssertionError:
        info = pytest.ExceptionInfo.from_current()
    step = FailedStep("features/x.feature", 7, "Then Ana sees it", str(exc), "AssertionError")
    verdict = Verdict(step, in_the_users_words(step), None)
    return str(verdict_repr(verdict, info.getrepr(style="long"), style))


def test_every_frame_follows_the_verdict_with_tb_long_and_pytests_assert_explanation_is_left_out() -> None:
    rewritten = AssertionError("Ana expected 2 memories but saw 1\nassert False\n +  where False = ok()")
    short, long = _verdict_of(rewritten, "auto"), _verdict_of(rewritten, "long")
    first = "'Then Ana sees it' (features/x.feature:7): Ana expected 2 memories but saw 1"
    assert short.splitlines()[0] == first and "where False" not in short and "_verdict_of" not in short, short
    assert long.splitlines()[0] == first and "pytest's frames:" in long and "_verdict_of" in long, long
    plain = AssertionError("assert 1 == 2")  # nothing before pytest's explanation: kept whole
    assert _verdict_of(plain, "auto").splitlines()[0].endswith(": assert 1 == 2")


def test_the_allure_categories_read_the_users_words_not_the_feature_file_named_after_them() -> None:
    """The place added to the Allure message (features/in_session_memory.feature) does not make every failure one of
    memory: the categories read the words before it, in Allure 3 (allurerc.json) and Allure 2 (categories.json)."""
    memory = json.loads(ALLURERC.read_text(encoding="utf-8"))["categories"][1]
    allure2 = next(c for c in categories_for_allure2() if c["name"] == memory["name"])
    place = "\n\nat 'Then Ana sees 2 rows' (features/in_session_memory.feature:9)"
    for words, expected in (("Ana expected 2 rows but saw 1", False), ("Ana's memory was not recalled", True)):
        assert bool(re.search(memory["matchers"]["message"], words + place)) is expected, words
        assert bool(re.fullmatch(allure2["messageRegex"], words + place)) is expected, words


def test_an_app_not_installed_names_the_command_that_installs_it(tmp_path: Path) -> None:
    target = tmp_path / "owui.toml"
    target.write_text(f'extends = "{ROOT / "targets" / "open-webui.toml"}"\nname = "open-webui-not-installed"\n'
                      '[app]\ncommand = [".tools/open-webui-0.0.1/bin/open-webui", "serve", "--port", "{port}"]\n',
                      encoding="utf-8")
    proc = subprocess.run([PYTHON, "-m", "pytest", "features/in_session_memory.feature", "-k", "correction_replaces",
                           "--target", str(target), "-p", "no:cacheprovider", "-q", "--alluredir",
                           str(tmp_path / "allure"), "--output", str(tmp_path / "pw")],
                          cwd=ROOT, capture_output=True, text=True, timeout=300, env=_env())
    said = [line for line in (proc.stdout + proc.stderr).splitlines() if line.strip()]
    assert proc.returncode != 0 and len(said) == 1, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert said[0] == ("ERROR: open-webui-not-installed is not installed (.tools/open-webui-0.0.1/bin/open-webui does "
                       "not exist): install it with `make open-webui`")
    assert "Traceback" not in proc.stdout + proc.stderr


@pytest.mark.parametrize("program, command", [
    (".tools/letta/bin/letta", "make letta"),
    (".tools/khoj-2.0.0b28/bin/khoj", "make khoj"),  # an older release's folder carries its version
    (".venv/bin/python9", "make setup"),
    ("/opt/nowhere/bin/app", ""),
])
def test_the_command_that_installs_a_program(program: str, command: str) -> None:
    assert install_command(program) == command
    if not command:
        assert str(not_installed("mine", program)).endswith("install it, or correct [app] command in its target file")


def _readme_selections() -> list[list[str]]:
    """The pytest arguments of the README's examples that select by -k or -m: its `pytest` command lines, and the
    SELECT of `make report`."""
    found, in_block = [], False
    for line in (ROOT / "README.md").read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            in_block = not in_block
            continue
        line = line.split("  #")[0].strip()
        if not in_block:
            continue
        select = re.search(r'SELECT="([^"]+)"', line)
        args = shlex.split(select.group(1)) if select else shlex.split(line)[1:] if line.startswith("pytest ") else []
        if "-k" in args or "-m" in args:
            found.append(args)
    return found


def test_the_readmes_selecting_examples_each_select_a_scenario_of_a_clean_clone() -> None:
    examples = _readme_selections()
    assert len(examples) >= 3, examples  # -k, -m, and the report of one run's
    for args in examples:
        proc = subprocess.run([PYTHON, "-m", "pytest", *args, "--collect-only", "-q", "-p", "no:cacheprovider"],
                              cwd=ROOT, capture_output=True, text=True, timeout=120, env=_env())
        assert proc.returncode == 0 and "::test_" in proc.stdout, f"{args}: {proc.stdout[-2000:]}"


def test_the_report_of_one_run_holds_that_run_only() -> None:
    """make report cleans the results first, whatever it selects, as the README says."""
    proc = subprocess.run(["make", "-n", "report", 'SELECT=features/forgetting.feature -k deletes'], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    command = next(line for line in proc.stdout.splitlines() if "-m pytest" in line)
    assert "-m pytest features/forgetting.feature -k deletes --alluredir=reports/allure-results --clean-alluredir" \
        in command, proc.stdout
    assert "--clean-alluredir" in (ROOT / "README.md").read_text(encoding="utf-8")
