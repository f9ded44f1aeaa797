"""Known defects per promise: a target declares where and how a scenario fails on its app, and the scenario passes as
expected only when it fails so. Any other outcome (a pass, another step, another message, an error of set-up or
tear-down, a generated session's undeclared difference) fails the run, with the declared and the observed lines."""

from __future__ import annotations

import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

import pytest

from harness.app.target import KnownDefect, TargetError, load_target
from harness.sessions.model import SessionModel
from harness.sessions.moves.chat import Chat
from harness.sessions.moves.edit_memory import EditMemory
from harness.sessions.moves.tell import Tell
from harness.sessions.runner import Difference, SessionRunner
from harness.suite.failed_step import FAILED_STEP, FailedStep
from harness.suite.known_defects import DECLARED, DeclaredDifferences, judge, known_defects
from harness.suite.scenarios import UnknownScenario
from tests.test_generated_sessions import tell

ROOT = Path(__file__).resolve().parent.parent
PYTHON = str(ROOT / ".venv" / "bin" / "python") if (ROOT / ".venv" / "bin" / "python").exists() else sys.executable
SCENARIO = "cross_session_persistence.feature: A memory is stored even when the page closes right after the reply"
FAILS_AT = 'Then her long-term memory soon holds "My passport number is X55123."'
OTHER_STEP = 'When Ana tells the assistant "My passport number is X55123."'


def target_file(tmp: Path, name: str, entry: str) -> Path:
    path = tmp / f"{name}.toml"
    path.write_text(f'extends = "{ROOT / "targets" / "memchat.toml"}"\nname = "{name}"\n\n'
                    f'[known_defects."{SCENARIO}"]\n{entry}\n', encoding="utf-8")
    return path


# -- what a target may declare -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("entry, says", [
    ('"x" = "the app forgets"', "is a plain string: restate it as a table"),
    ('"x" = { why = "w", match = "m" }', "lacks one of step (a scenario's line) and read"),
    ('"x" = { step = "Then s", why = "w" }', "lacks match"),
    ('"x" = { step = "Then s", match = "(", why = "w" }', "is not a regular expression"),
    ('"x" = { step = "Then s", match = "m", why = "w", reason = "r" }', "has reason, which a known defect does not"),
])
def test_a_known_defect_that_does_not_say_where_and_how_it_fails_stops_the_run_in_one_line(
        tmp_path: Path, entry: str, says: str) -> None:
    path = tmp_path / "t.toml"
    path.write_text(f'extends = "{ROOT / "targets" / "memchat.toml"}"\n[known_defects]\n{entry}\n', encoding="utf-8")
    with pytest.raises(TargetError, match=re.escape(says)) as raised:
        load_target(path)
    assert "\n" not in str(raised.value)


def test_an_empty_entry_takes_back_a_defect_the_extended_file_declares() -> None:
    chroma_only = "forgetting.feature: A memory Ana deletes is forgotten, and nobody else's memory changes"
    assert chroma_only in load_target("open-webui").known_defects
    assert chroma_only not in load_target("open-webui-pgvector").known_defects


def test_a_step_the_scenario_does_not_have_is_refused_naming_it(tmp_path: Path) -> None:
    target = load_target(target_file(tmp_path, "t", f"step = '{FAILS_AT.replace('soon ', '')}'\nmatch = 'x'\n"
                                                    "why = 'w'"))
    with pytest.raises(UnknownScenario, match="is not a line of that scenario"):
        known_defects(target)
    assert known_defects(load_target(target_file(tmp_path, "u", f"step = '{FAILS_AT}'\nmatch = 'x'\nwhy = 'w'")))


def test_every_known_defect_of_every_target_names_its_step_or_read() -> None:
    for path in sorted((ROOT / "targets").glob("*.toml")):
        target = load_target(path)
        for ref, defect in known_defects(target).items():
            assert defect.step or defect.read, f"{path.name} {ref}"


# -- the verdict -------------------------------------------------------------------------------------------------------
@dataclass
class Case:
    stash: pytest.Stash


def _judged(when: str, outcome: str, defect: KnownDefect, step: FailedStep | None = None,
            error: BaseException | None = None) -> pytest.TestReport:
    item = Case(pytest.Stash())
    item.stash[DECLARED] = ("an-app", defect)
    if step is not None:
        item.stash[FAILED_STEP] = step
    rep = pytest.TestReport("features/x.feature::test_x", ("x", 0, "x"), {}, outcome, "the frames", when)
    excinfo = None
    if error is not None:
        try:
            raise error
        except BaseException:
            excinfo = pytest.ExceptionInfo.from_current()
    judge(item, rep, excinfo)  # type: ignore[arg-type]  # only its stash is read
    return rep


DEFECT = KnownDefect("the write is lost", "did not happen", step=FAILS_AT)
AT_ITS_STEP = FailedStep("features/x.feature", 26, FAILS_AT, "Ana's memory did not happen within 5 s", "Timeout")


def test_the_declared_failure_at_its_step_is_expected_with_what_was_observed() -> None:
    rep = _judged("call", "failed", DEFECT, AT_ITS_STEP, AssertionError(AT_ITS_STEP.message))
    assert rep.skipped and "the write is lost | observed: 'Then her" in rep.wasxfail
    assert "(features/x.feature:26): Ana's memory did not happen" in rep.wasxfail


@pytest.mark.parametrize("when, outcome, step, says", [
    ("call", "failed", FailedStep("features/x.feature", 24, OTHER_STEP, "did not happen", "E"),
     f"observed: '{OTHER_STEP}' (features/x.feature:24)"),
    ("call", "failed", FailedStep("features/x.feature", 26, FAILS_AT, "the page is blank", "E"),
     "observed: 'Then her long-term memory soon holds"),
    ("call", "failed", None, "observed: not at a step"),
    ("call", "passed", None, "observed: the scenario passed: the defect is gone"),
    ("setup", "failed", None, "observed: an error in the scenario's setup"),
    ("teardown", "failed", None, "observed: an error in the scenario's teardown"),
])
def test_any_other_outcome_fails_the_run_with_the_declared_and_the_observed_line(
        when: str, outcome: str, step: FailedStep | None, says: str) -> None:
    rep = _judged(when, outcome, DEFECT, step, AssertionError("x") if outcome == "failed" else None)
    assert rep.failed
    lines = str(rep.longrepr).splitlines()
    assert lines[0] == f"declared: at the step '{FAILS_AT}', with a message matching /did not happen/"
    assert lines[1].startswith(says)
    assert "the frames" in str(rep.longrepr)  # what pytest had to say follows


def test_a_sessions_defect_is_expected_only_from_its_declared_differences() -> None:
    defect = KnownDefect("memories come back", "Ana's memories", read="memories")
    assert _judged("call", "failed", defect, None, DeclaredDifferences("known defect shown")).skipped
    assert _judged("call", "failed", defect, None, AssertionError("action 9: Ben's answer")).failed


# -- a generated session goes on after its declared difference ---------------------------------------------------------
def test_a_session_takes_the_declared_difference_and_fails_at_the_next_undeclared_one() -> None:
    """Ana's cleared memory comes back (declared): the model takes the app's memories over and the session goes on;
    Ben's wrong answer, three actions later, is the session's difference."""
    model = SessionModel(["Ana", "Ben"])
    told = tell("Ana", "dog", "Rex")
    runner = SessionRunner.__new__(SessionRunner)
    runner.plan, runner.model = SimpleNamespace(users=["Ana", "Ben"], read_after=frozenset()), model
    runner.declared = KnownDefect("cleared memories come back", r"Rex", read="memories")
    runner.shown, runner.not_checked = [], {}
    actions = [told, Chat("Ben", "hello"), Chat("Ana", "hi"), Chat("Ben", "again")]
    back = Difference(2, actions[1], "Ana's memories", [], [told.statements[0].sentence])
    wrong = Difference(4, actions[3], "Ben's answer", "Noted.", "Your dog is Rex.")
    found = {2: back, 4: wrong}
    checks: list[int] = []

    def step(number: int, action: object) -> Difference | None:
        model.apply(action)  # type: ignore[arg-type]
        if number == 2:
            model.users["Ana"].remembered = []  # the model cleared them; the app lists the memory again
        return found.get(number)

    def check_everyone(number: int, action: object) -> Difference | None:
        checks.append(number)
        return None

    runner._step, runner.check_everyone = step, check_everyone  # type: ignore[method-assign]
    runner.new_model = lambda: model  # type: ignore[method-assign]
    runner.app = SimpleNamespace(delete_user=lambda account: None)
    runner.members, runner._accounts, runner.new_tag = {}, [], lambda: "t"
    runner.new_member = lambda name: SimpleNamespace(actor=SimpleNamespace(account=name))  # type: ignore[method-assign]
    difference = runner.run(actions)
    assert difference is wrong
    assert runner.shown == [back] and checks == [2]  # everyone checked again once it was taken over
    assert model.memories("Ana") == [told.statements[0].sentence]
    # The pairs of actions it covered: those acted out before its difference (Ana's chat after her fact).
    assert runner.pairs.covered == {("tell", "chat"): 3}


def test_a_memory_the_user_never_told_is_not_taken_over() -> None:
    model = SessionModel(["Ana"])
    told: Tell = tell("Ana", "dog", "Rex")
    model.apply(told)
    assert not model.adopt_memories("Ana", ["My cat is Tom."])
    assert model.memories("Ana") == [told.statements[0].sentence]


def test_a_search_hit_is_hers_taken_back_only_when_she_alone_told_it() -> None:
    """A search that finds memories no longer listed says whether they are her own, taken back (a known defect may
    name that), or anything else: another user's, though she told the same, is an isolation breach it must not hide."""
    model = SessionModel(["Ana", "Ben"])
    dog, cat = tell("Ana", "dog", "Rex"), tell("Ben", "cat", "Tom")
    model.apply(dog)
    model.apply(cat)
    assert model.taken_back("Ana", [dog.statements[0].sentence])
    assert not model.taken_back("Ana", [cat.statements[0].sentence])
    model.apply(tell("Ana", "cat", "Tom"))  # now told by both: it could be Ben's
    assert not model.taken_back("Ana", [dog.statements[0].sentence, cat.statements[0].sentence])


# -- against the reference app, with one of its faults on --------------------------------------------------------------
def test_the_verdict_on_a_real_run_of_a_known_defect(tmp_path: Path) -> None:
    """memchat with its unload-write-lost fault fails the scenario at its memory step: declared so, it is expected;
    declared with another message or another step, or without the fault on (it passes), the run fails."""
    right = f"step = '{FAILS_AT}'\nmatch = 'did not happen'\nwhy = 'the unload write is lost'"
    cases = {"right": (right, True), "message": (right.replace("did not happen", "a blank page"), True),
             "step": (right.replace(FAILS_AT, OTHER_STEP), True), "passes": (right, False)}

    def run(name: str) -> subprocess.CompletedProcess[str]:
        entry, fault = cases[name]
        args = [PYTHON, "-m", "pytest", "features/cross_session_persistence.feature", "-p", "no:cacheprovider",
                "-k", "a_memory_is_stored_even_when_the_page_closes_right_after_the_reply",  # that scenario alone
                "--target", str(target_file(tmp_path, name, entry)),
                "-q", "-rx", "--alluredir", str(tmp_path / f"allure-{name}"), *(
                    ["--faults", "unload-write-lost"] if fault else [])]
        return subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=180, check=False)

    with ThreadPoolExecutor(len(cases)) as pool:
        done = dict(zip(cases, pool.map(run, cases), strict=True))
    assert done["right"].returncode == 0, done["right"].stdout[-2000:]
    assert "1 xfailed" in done["right"].stdout and "| observed: 'Then her long-term memory" in done["right"].stdout
    for name, says in [("message", "observed: 'Then her long-term memory soon holds"),
                       ("step", "observed: 'Then her long-term memory soon holds"),
                       ("passes", "observed: the scenario passed")]:
        out = done[name].stdout
        assert done[name].returncode == 1, f"{name}: {out[-2000:]}"
        assert "declared: at the step" in out and says in out, f"{name}: {out[-2000:]}"


# -- an error is never a skip ------------------------------------------------------------------------------------------
def test_no_error_of_the_app_or_its_driver_is_turned_into_a_skip() -> None:
    """A scenario skips only through a capability its target lacks or an example that does not apply: no pytest.skip
    (nor xfail) inside an exception handler of the actors, the steps or the support package."""
    import ast

    found = []
    for folder in ("actors", "steps", "harness"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            for handler in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(handler, ast.ExceptHandler):
                    found += [f"{path.relative_to(ROOT)}:{node.lineno}" for node in ast.walk(handler)
                              if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                              and node.func.attr in ("skip", "xfail")]
    assert not found, f"a skip in an exception handler: {', '.join(found)}"


def test_open_webuis_review_undoing_an_edit_in_the_search_is_declared_only_after_an_edit() -> None:
    """As CI's run at b8420d1 observed it (Open WebUI on PostgreSQL, seed 20261130, action 29): the search after an
    edit finds the old text, or not the new one first; a search that differs after any other action is not declared."""
    defect = next(d for name, d in load_target("open-webui-pgvector").known_defects.items()
                  if name.startswith("generated_sessions.feature"))
    old, new = "Oh, and my sister's birthday is 北京烤鸭 75.", "Oh, and my sister's birthday is Operation Evidence."
    edit = EditMemory("Brandon", text=old, new_text=new)
    for difference in (Difference(29, edit, f"Brandon's search for {old!r}", "no memory that reads it", [old]),
                       Difference(29, edit, f"Brandon's search for {new!r}", f"{new!r} first", [old])):
        assert re.fullmatch(defect.read, difference.category) and defect.matches(difference.describe())
    other = Difference(30, Chat("Brandon", "hi"), f"Brandon's search for {old!r}", "no memory that reads it", [old])
    assert not defect.matches(other.describe())


def test_open_webuis_review_reviving_cleared_vectors_is_declared_only_for_her_own_memories() -> None:
    """As CI's run at 3afd7f4 observed it (Open WebUI on PostgreSQL, seed 20261130, action 40): a clear while a review
    embedded left its vectors, and the search found memories she took back; another user's in her search is not
    declared."""
    defect = next(d for name, d in load_target("open-webui-pgvector").known_defects.items()
                  if name.startswith("generated_sessions.feature"))
    sign = "Oh, and my signature is C:\\Users\\carmen\\hospital."
    said = Chat("Sarah", f"Institution yet the project become: かばん 41. {sign}")
    back = Difference(40, said, f"Sarah's search for {sign!r}",
                      "only memories of theirs that are kept, not ones they took back", ["So my dentist is Marymouth."])
    assert re.fullmatch(defect.read, back.category) and defect.matches(back.describe())
    theirs = Difference(40, said, f"Sarah's search for {sign!r}", "only memories of theirs that are kept",
                        ["So my dentist is Marymouth."])
    assert not defect.matches(theirs.describe())


def test_a_declared_search_difference_is_taken_over_and_the_next_search_goes_past_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """CI's run at 0b7f4ae: the declared search difference (her cleared memories' vectors, found though not listed)
    showed again at the check made to go on after it, and the session failed on its own declaration. Taken over, the
    same memories found again are no difference; any other memory not listed still is."""
    from harness.drivers.base import Hit, Memory
    from harness.sessions import runner as runner_module

    monkeypatch.setattr(runner_module, "MEMORY_WAIT_S", 0.3)
    monkeypatch.setattr(runner_module.report, "attach_text", lambda *a: None)
    model = SessionModel(["Ana"])
    dog = tell("Ana", "dog", "Rex")
    model.apply(dog)
    runner = SessionRunner.__new__(SessionRunner)
    runner.app = SimpleNamespace(offers=lambda capability: True, recall_k=5, name="app")  # type: ignore[assignment]
    runner._searched, runner.not_checked, runner.found_unlisted, runner.model = {}, {}, {}, model
    runner.declared = KnownDefect("cleared vectors come back", r"not ones they took back", read="search for .*")
    kept, gone = Memory("m2", "My cat is Tom."), dog.statements[0].sentence
    hits = [Hit("m2", 0.9, kept.text), Hit("m1", 0.5, gone)]
    session = SimpleNamespace(search=lambda text, k: hits)
    difference = runner._search(5, None, "Ana", session, [kept])  # type: ignore[arg-type]
    assert difference is not None and difference.ids == ("m1",) and runner._declared_shows(difference)
    assert runner._search(6, None, "Ana", session, [kept]) is None  # type: ignore[arg-type]
    hits.append(Hit("m3", 0.4, gone))  # the same text under another id: not what the declaration took over
    again = runner._search(7, None, "Ana", session, [kept])  # type: ignore[arg-type]
    assert again is not None and again.actual == [gone] and again.ids == ("m3",)
