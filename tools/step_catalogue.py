"""The step catalogue, docs/steps.md: every Gherkin phrase the step modules bind, by area, with its parameters and one
line of what it does. `make steps` writes it (`.venv/bin/python -m tools.step_catalogue`); .ci/run fails when the
committed file differs from what it writes.

The step modules are those the root conftest.py lists in `pytest_plugins`, in that order. Each is imported and its
source walked: a function decorated with pytest-bdd's given/when/then binds the phrase its decorator's first argument
evaluates to (a string, or a parser object whose public `name` is its pattern). No pytest-bdd internals are used, so
the catalogue needs no app, browser or database, and the same modules always give the same file.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import inspect
import itertools
import re
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import pytest_bdd
from pytest_bdd import parsers

from harness.app.changes import CHANGE_PLACEHOLDER

ROOT = Path(__file__).resolve().parent.parent
CONFTEST = ROOT / "conftest.py"
OUT = ROOT / "docs" / "steps.md"
WIDTH = 120
KEYWORDS = {pytest_bdd.given: "Given", pytest_bdd.when: "When", pytest_bdd.then: "Then"}
ORDER = ("Given", "When", "Then")

# The sub-patterns of the step modules' parameters, in a QA engineer's words, with a value that fits. A sub-pattern
# not listed here is shown as it is, with the first of FALLBACK_SAMPLES that it matches as its example.
KNOWN_PATTERNS = {
    r"[A-Z][a-z]+": ("a user's first name", "Ana"),
    r"\d+": ("a whole number", "3"),
    r"[\d,]+": ("a whole number, thousands commas allowed", "1,000"),
    r".+": ("any text, quotes included", "My order number is 4417."),
    r'[^"]+': ("text without double quotes", "ana@example.com"),
    r'[^"]*': ("text without double quotes, or nothing", "note"),
    r"[A-Za-z ]+": ("a word or words in Latin letters", "Chinese"),
    r"0\.\d+": ("a number between 0 and 1, a decimal point and its digits", "0.6"),
}
# parse's field types (`{count:d}`); no type: any text.
KNOWN_PARSE_TYPES = {"": ("any text", "Your order number is 4417."), "d": ("a whole number", "3"),
                     "w": ("a word", "word")}
FALLBACK_SAMPLES = ("Ana", "3", "1,000", "word", "two words", "note-1", "My order number is 4417.")


class Unrenderable(ValueError):
    """A pattern with a construct the renderer does not read: the catalogue shows the pattern itself."""


# -- a phrase as a QA engineer reads it -------------------------------------------------------------------------------
@dataclass(frozen=True)
class Param:
    name: str
    pattern: str  # the regular expression of the value, or the parse field's type
    description: str
    sample: str | None  # a value that fits, None where none is known


@dataclass(frozen=True)
class Choice:
    """`(?:his|her|their)`: one of them, written as it is."""

    options: tuple[str, ...]


@dataclass(frozen=True)
class MayOmit:
    """`(?: one right after the other)?`: written or left out."""

    parts: tuple[Part, ...]


Part = str | Param | Choice | MayOmit


def _text(parts: tuple[Part, ...]) -> str:
    out = ""
    for part in parts:
        if isinstance(part, str):
            out += part
        elif isinstance(part, Param):
            out += f"<{part.name}>"
        elif isinstance(part, Choice):
            out += "/".join(part.options)
        else:
            inner = _text(part.parts)
            out += (" " if inner.startswith(" ") else "") + f"[{inner.strip()}]" + (" " if inner.endswith(" ") else "")
    return out


def _params(parts: tuple[Part, ...]) -> Iterator[Param]:
    for part in parts:
        if isinstance(part, Param):
            yield part
        elif isinstance(part, MayOmit):
            yield from _params(part.parts)


def _variants(parts: tuple[Part, ...]) -> Iterator[str]:
    """Every way of writing the phrase: each choice, each optional part written and left out, each parameter filled
    with its sample (a parameter without one cannot be written, so nothing is)."""
    options: list[list[str]] = []
    for part in parts:
        if isinstance(part, str):
            options.append([part])
        elif isinstance(part, Param):
            if part.sample is None:
                return
            options.append([part.sample])
        elif isinstance(part, Choice):
            options.append(list(part.options))
        else:
            options.append([*_variants(part.parts), ""])
    for combination in itertools.product(*options):
        yield "".join(combination)


@dataclass(frozen=True)
class Phrase:
    """One Gherkin phrase of a step: its parts, or None where the pattern could not be rendered faithfully."""

    kind: str  # "string", "re", "parse" or "cfparse": the pytest-bdd parser that reads it
    pattern: str  # as written in the step module
    parts: tuple[Part, ...] | None
    params: tuple[Param, ...]

    @property
    def text(self) -> str:
        """The phrase as a scenario writes it, with <parameters>; the pattern itself where it could not be read."""
        return _text(self.parts) if self.parts is not None else self.pattern

    def variants(self) -> list[str]:
        """The phrase written out every way it can be, with sample values (none where it could not be read)."""
        return list(_variants(self.parts)) if self.parts is not None else []


def describe(name: str, pattern: str) -> Param:
    """A regular-expression parameter in words, with a value that fits it."""
    if pattern in KNOWN_PATTERNS:
        description, sample = KNOWN_PATTERNS[pattern]
        return Param(name, pattern, description, sample)
    choices = pattern.split("|")
    if len(choices) > 1 and all(re.fullmatch(r"[\w' ]+", c) for c in choices):  # words, one of a few ways
        return Param(name, pattern, "one of: " + "; ".join(f"`{c}`" for c in choices), choices[0])
    fitting = next((s for s in FALLBACK_SAMPLES if re.fullmatch(pattern, s)), None)
    return Param(name, pattern, f"text matching `{pattern}`", fitting)


def _group_end(pattern: str, start: int) -> int:
    """The index of the `)` that closes the group whose body starts at `start`."""
    depth, i, in_class = 1, start, False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    raise Unrenderable(f"unbalanced group in {pattern!r}")


def _split_alternatives(body: str) -> list[str]:
    """`a|b|c` at the top level of a group body (alternatives of plain words only: anything else is unrenderable)."""
    if any(c in body for c in "()[]\\"):
        raise Unrenderable(f"alternatives other than plain words: {body!r}")
    return body.split("|")


def _regex_parts(pattern: str) -> tuple[Part, ...]:
    parts: list[Part] = []
    text = ""
    i = 0

    def flush() -> None:
        nonlocal text
        if text:
            parts.append(text)
            text = ""

    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("(?P<", i):
            name_end = pattern.index(">", i)
            end = _group_end(pattern, name_end + 1)
            flush()
            parts.append(describe(pattern[i + 4:name_end], pattern[name_end + 1:end]))
            i = end + 1
        elif pattern.startswith("(?:", i):
            end = _group_end(pattern, i + 3)
            body = pattern[i + 3:end]
            optional = pattern.startswith("?", end + 1)
            flush()
            alternatives = _split_alternatives(body) if "|" in body else None
            if optional:
                parts.append(MayOmit((Choice(tuple(alternatives)),) if alternatives else _regex_parts(body)))
            elif alternatives:
                parts.append(Choice(tuple(alternatives)))
            else:
                parts.extend(_regex_parts(body))
            i = end + (2 if optional else 1)
        elif c == "\\":
            escaped = pattern[i + 1:i + 2]
            if not escaped or escaped.isalnum():  # \d, \w, \s, \b ...: a class, not a character
                raise Unrenderable(f"a character class outside a parameter: {pattern!r}")
            text += escaped
            i += 2
        elif c in ".*+?[]{}|()^$":
            raise Unrenderable(f"{c!r} outside a parameter: {pattern!r}")
        elif pattern.startswith("?", i + 1):  # `conversations?`: one optional character
            flush()
            parts.append(MayOmit((c,)))
            i += 2
        else:
            text += c
            i += 1
    flush()
    return tuple(parts)


PARSE_FIELD = re.compile(r"\{\{|\}\}|\{([^{}]*)\}")


def _parse_parts(pattern: str) -> tuple[Part, ...]:
    parts: list[Part] = []
    last = 0
    for match in PARSE_FIELD.finditer(pattern):
        parts.append(pattern[last:match.start()])
        token, last = match.group(0), match.end()
        if token in ("{{", "}}"):
            parts.append(token[0])
            continue
        name, _, kind = match.group(1).partition(":")
        if not name.isidentifier() or kind not in KNOWN_PARSE_TYPES:
            raise Unrenderable(f"a field other than {{name}} or {{name:d}}: {token!r}")
        description, sample = KNOWN_PARSE_TYPES[kind]
        parts.append(Param(name, kind, description, sample))
    parts.append(pattern[last:])
    merged: list[Part] = []  # neighbouring texts as one, as the regex renderer gives them
    for part in parts:
        if isinstance(part, str) and merged and isinstance(merged[-1], str):
            merged[-1] += part
        elif part != "":
            merged.append(part)
    return tuple(merged)


def render(step_parser: parsers.StepParser) -> Phrase:
    """A step's phrase for the catalogue, from its pytest-bdd parser (`parsers.string` for a plain string)."""
    pattern = step_parser.name
    kind = type(step_parser).__name__
    try:
        if isinstance(step_parser, parsers.re):
            body = pattern.removeprefix("^")
            if body.endswith("$") and not body.endswith("\\$"):
                body = body[:-1]
            parts = _regex_parts(body)
        elif isinstance(step_parser, parsers.parse):  # cfparse too
            parts = _parse_parts(pattern)
        elif isinstance(step_parser, parsers.string):
            parts = (pattern,)
        else:
            raise Unrenderable(f"a parser the catalogue does not know: {kind}")
    except Unrenderable:
        names = re.compile(pattern).groupindex if isinstance(step_parser, parsers.re) else {}
        return Phrase(kind, pattern, None, tuple(Param(n, "", "see the pattern", None) for n in names))
    return Phrase(kind, pattern, parts, tuple(_params(parts)))


# -- the step modules -------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Binding:
    keywords: tuple[str, ...]  # Given, When, Then: those it is bound under with this phrase
    phrase: Phrase
    parser: parsers.StepParser


@dataclass(frozen=True)
class Step:
    function: str
    does: str  # the first paragraph of its docstring, on one line; empty where it has none
    bindings: tuple[Binding, ...]
    datatable: bool  # takes the data table below its line
    docstring: bool  # takes the doc string below its line


@dataclass(frozen=True)
class Area:
    module: str
    path: str  # relative to the repository
    title: str
    lead: str
    steps: tuple[Step, ...]


def step_modules(conftest: Path = CONFTEST) -> list[str]:
    """The step modules the root conftest.py lists in `pytest_plugins`, in its order."""
    for node in ast.parse(conftest.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            continue
        if any(isinstance(t, ast.Name) and t.id == "pytest_plugins" for t in targets):
            return [m for m in ast.literal_eval(value) if m.startswith("steps.")]
    raise ValueError(f"{conftest} has no pytest_plugins list")


def summary(doc: str | None) -> str:
    """The first paragraph of a docstring, on one line."""
    return " ".join((inspect.cleandoc(doc or "").split("\n\n")[0]).split())


def _bindings(node: ast.FunctionDef, module: ModuleType, filename: str) -> tuple[Binding, ...]:
    found: dict[tuple[str, str], tuple[list[str], parsers.StepParser]] = {}
    for decorator in node.decorator_list:
        if not isinstance(decorator, ast.Call) or not decorator.args:
            continue
        namespace = vars(module)
        call = eval(compile(ast.Expression(decorator.func), filename, "eval"), namespace)
        keyword = next((k for f, k in KEYWORDS.items() if call is f), None)
        if keyword is None:
            continue
        value = eval(compile(ast.Expression(decorator.args[0]), filename, "eval"), namespace)
        step_parser = value if isinstance(value, parsers.StepParser) else parsers.string(value)
        keywords, _ = found.setdefault((type(step_parser).__name__, step_parser.name), ([], step_parser))
        keywords.append(keyword)
    return tuple(Binding(tuple(sorted(set(k), key=ORDER.index)), render(p), p) for k, p in found.values())


def read_area(module_name: str) -> Area:
    """One step module: its title and lead from its docstring, and its steps in source order."""
    module = importlib.import_module(module_name)
    filename = inspect.getsourcefile(module) or ""
    tree = ast.parse(Path(filename).read_text(encoding="utf-8"), filename)
    steps = []
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef):
            continue
        bindings = _bindings(node, module, filename)
        if bindings:
            args = {a.arg for a in node.args.args}
            steps.append(Step(node.name, summary(ast.get_docstring(node)), bindings, "datatable" in args,
                              "docstring" in args))
    title, _, lead = summary(module.__doc__).partition(": ")
    return Area(module_name, Path(filename).resolve().relative_to(ROOT).as_posix(), title.removesuffix("."),
                lead, tuple(steps))


def read_catalogue(conftest: Path = CONFTEST) -> list[Area]:
    return [read_area(m) for m in step_modules(conftest)]


# -- docs/steps.md ----------------------------------------------------------------------------------------------------
def _code(text: str) -> str:
    return f"`` {text} ``" if "`" in text else f"`{text}`"


def _wrapped(text: str, first: str, rest: str) -> list[str]:
    return textwrap.wrap(text, WIDTH, initial_indent=first, subsequent_indent=rest, break_long_words=False,
                         break_on_hyphens=False)


def anchor(area: Area) -> str:
    """A short anchor of the area's own (GitHub's from a long title would make the contents' lines long)."""
    return area.module.rpartition(".")[2].replace("_", "-")


HEADER = """\
# Step catalogue

<!-- Written by `make steps` (tools/step_catalogue.py) from the step modules conftest.py lists: do not edit by hand.
     Change a step's phrase or docstring in steps/, then run `make steps` and commit this file with it. -->

Every Gherkin line a scenario can use, by area: the phrase, what the step does, and its parameters. Write a line
exactly as its phrase reads, after `Given`, `When` or `Then` as the phrase is listed (or `And`/`But`, which take the
keyword of the line before):

- `<name>` is a parameter: write a value there (`Ana`, `3`); what fits is said under the phrase;
- `his/her/their` means one of the words;
- `[one right after the other]` may be written or left out;
- a line that takes a data table or a doc string (`\"\"\"` lines) below it says so.
"""

PLACEHOLDER_NOTE = (f"A phrase with {_code(CHANGE_PLACEHOLDER)} is written with it exactly so: a scenario with such a "
                    "line runs once for each change the target declares under `[changes]`, the change's name in its "
                    "test id (see [replay.md](replay.md)).")


def markdown(areas: list[Area]) -> str:
    """docs/steps.md: deterministic, from the areas alone."""
    lines = HEADER.splitlines()
    if any(CHANGE_PLACEHOLDER in b.phrase.text for a in areas for s in a.steps for b in s.bindings):
        lines += ["", *_wrapped(PLACEHOLDER_NOTE, "", "")]
    phrases = sum(len(s.bindings) for a in areas for s in a.steps)
    functions = sum(len(a.steps) for a in areas)
    lines += ["", f"{phrases} phrases of {functions} step functions in {len(areas)} areas:", ""]
    lines += [f"- [{a.title}](#{anchor(a)})" for a in areas]
    for area in areas:
        lines += ["", f'<a id="{anchor(area)}"></a>', "", f"## {area.title}", ""]
        lines += _wrapped(f"`{area.path}`" + (f": {area.lead}" if area.lead else "."), "", "")
        lines.append("")
        for step in area.steps:
            for binding in step.bindings:
                phrase = binding.phrase
                shown = _code(phrase.text) + ("" if phrase.parts is not None else f" ({phrase.kind} pattern)")
                lines.append(f"- **{'/'.join(binding.keywords)}** {shown}")
                does = step.does or "(no docstring: give the step function one)"
                lines += _wrapped(f"{does} (`{step.function}`)", "  - ", "    ")
                for param in phrase.params:
                    # "any text" needs no example, and one sample would mislead for a name, a model, a folder
                    example = (f", e.g. {_code(param.sample)}" if param.sample is not None
                               and not param.description.startswith("any text") else "")
                    lines += _wrapped(f"{_code(f'<{param.name}>')}: {param.description}{example}", "  - ", "    ")
                if step.datatable:
                    lines.append("  - takes a data table below the line")
                if step.docstring:
                    lines.append('  - takes a doc string (between `"""` lines) below the line')
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT, help="where to write the catalogue (default: docs/steps.md)")
    args = parser.parse_args(argv)
    text = markdown(read_catalogue())
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
