"""The step catalogue (tools/step_catalogue.py, docs/steps.md): the renderer on typical patterns and on every phrase
the step modules bind, and the catalogue complete. No app, browser or database."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from pytest_bdd import parsers

from tools import step_catalogue
from tools.step_catalogue import ROOT, read_catalogue, render, step_modules

NAME = r"(?P<name>[A-Z][a-z]+)"


@pytest.fixture(scope="module")
def areas() -> list[step_catalogue.Area]:
    return read_catalogue()


# -- the renderer ----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("step_parser", "shown", "params"), [
    (parsers.re(f"^{NAME} is signed in$"), "<name> is signed in", ["name"]),
    (parsers.re(f'^{NAME} (?:says|asks) "(?P<text>.+)"$'), '<name> says/asks "<text>"', ["name", "text"]),
    (parsers.re(f"^{NAME} looks at (?:his|her|their) conversation list$"),
     "<name> looks at his/her/their conversation list", ["name"]),
    (parsers.re(f"^{NAME} tells the assistant these facts(?: one right after the other)?:$"),
     "<name> tells the assistant these facts [one right after the other]:", ["name"]),
    (parsers.re(f"^{NAME} has (?P<count>\\d+) conversations?$"), "<name> has <count> conversation[s]",
     ["name", "count"]),
    (parsers.re(r"the store holds (?P<size>[\d,]+) memories \(or more\)\."),
     "the store holds <size> memories (or more).", ["size"]),
    (parsers.re(r'^a history "<change>"$'), 'a history "<change>"', []),
    (parsers.parse('the assistant answers "{answer}"'), 'the assistant answers "<answer>"', ["answer"]),
    (parsers.parse("the store holds {count:d} memories of {{one}} owner"),
     "the store holds <count> memories of {one} owner", ["count"]),
    (parsers.cfparse("{count:d} questions recall"), "<count> questions recall", ["count"]),
    (parsers.string("her conversation is listed"), "her conversation is listed", []),
])
def test_a_phrase_reads_as_a_scenario_writes_it(step_parser: parsers.StepParser, shown: str,
                                                params: list[str]) -> None:
    phrase = render(step_parser)
    assert phrase.text == shown
    assert [p.name for p in phrase.params] == params
    assert phrase.variants() and all(step_parser.is_matching(v) for v in phrase.variants())


def test_every_way_of_writing_a_phrase_is_a_variant() -> None:
    phrase = render(parsers.re(f"^{NAME} (?:says|asks) it(?: again)?$"))
    assert sorted(phrase.variants()) == ["Ana asks it", "Ana asks it again", "Ana says it", "Ana says it again"]


@pytest.mark.parametrize("pattern", [r"^(?P<name>\w+) and (\d+) more$", r"^\w+ is signed in$", r"^a (?:b|(c))$",
                                     r"^(?:x|y)+ z$"])
def test_a_pattern_the_renderer_cannot_read_is_shown_as_it_is(pattern: str) -> None:
    phrase = render(parsers.re(pattern))
    assert phrase.parts is None and phrase.text == pattern and phrase.variants() == []


def test_a_parameter_of_an_unknown_shape_shows_its_pattern_and_fits_a_sample_where_one_does() -> None:
    (known,), (odd,) = render(parsers.re(r"^(?P<n>\d+)$")).params, render(parsers.re(r"^(?P<code>[a-z]+-\d)$")).params
    assert (known.description, known.sample) == ("a whole number", "3")
    assert odd.description == "text matching `[a-z]+-\\d`" and odd.sample == "note-1"


# -- every phrase of the project --------------------------------------------------------------------------------------
def test_every_phrase_of_the_step_modules_renders_faithfully(areas: list[step_catalogue.Area]) -> None:
    """Each phrase is read without falling back to its pattern, and written out every way it can be, with sample
    values, it is matched by the step's own parser."""
    checked = 0
    for area in areas:
        for step in area.steps:
            for binding in step.bindings:
                phrase, where = binding.phrase, f"{area.module}.{step.function}: {binding.parser.name!r}"
                assert phrase.parts is not None, f"{where} is shown as its pattern; teach the renderer its shape"
                unfilled = [p.name for p in phrase.params if p.sample is None]
                assert not unfilled, f"{where}: no sample fits <{', '.join(unfilled)}>; add its shape to KNOWN_PATTERNS"
                variants = phrase.variants()
                assert variants, where
                wrong = [v for v in variants if not binding.parser.is_matching(v)]
                assert not wrong, f"{where}: its own parser does not match {wrong}"
                checked += 1
    assert checked > 50


def test_the_catalogue_lists_every_step_function_of_every_step_module(areas: list[step_catalogue.Area]) -> None:
    """Read apart from the tool: each `@given(`/`@when(`/`@then(` line of a module's source and the function under
    it."""
    modules = step_modules()
    assert modules and [a.module for a in areas] == modules
    for area in areas:
        source = (ROOT / area.path).read_text(encoding="utf-8")
        decorated: dict[str, int] = {}
        for match in re.finditer(r"^@(?:given|when|then)\(.*?^def (\w+)\(", source, re.M | re.S):
            decorated[match.group(1)] = decorated.get(match.group(1), 0) + 1
        counted = re.findall(r"^@(?:given|when|then)\(", source, re.M)
        listed = {s.function: sum(len(b.keywords) for b in s.bindings) for s in area.steps}
        assert set(listed) == set(decorated), area.module
        assert sum(listed.values()) == len(counted), f"{area.module}: a decorator is missing from the catalogue"


def test_every_step_says_what_it_does(areas: list[step_catalogue.Area]) -> None:
    missing = [f"{a.module}.{s.function}" for a in areas for s in a.steps if not s.does]
    assert not missing, f"give these step functions a one-line docstring: {missing}"


def test_the_step_modules_are_those_conftest_lists_in_its_order(tmp_path: Path) -> None:
    conftest = tmp_path / "conftest.py"
    conftest.write_text('pytest_plugins = ["harness.suite.run", "steps.b_steps", "steps.a_steps"]\n')
    assert step_modules(conftest) == ["steps.b_steps", "steps.a_steps"]
    conftest.write_text("x = 1\n")
    with pytest.raises(ValueError, match="no pytest_plugins"):
        step_modules(conftest)


# -- docs/steps.md ----------------------------------------------------------------------------------------------------
def test_the_catalogue_is_the_same_every_time_and_holds_no_path_of_this_machine(
        areas: list[step_catalogue.Area], tmp_path: Path) -> None:
    out = tmp_path / "steps.md"
    assert step_catalogue.main(["--out", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    assert text == step_catalogue.markdown(areas) == step_catalogue.markdown(read_catalogue())
    assert str(ROOT) not in text and str(Path.home()) not in text
    for area in areas:
        assert f"## {area.title}\n" in text and f"](#{step_catalogue.anchor(area)})" in text
    long = [line for line in text.splitlines() if len(line) > step_catalogue.WIDTH and not line.startswith("- **")]
    assert not long, f"only a phrase's own line may be longer than {step_catalogue.WIDTH}: {long}"
