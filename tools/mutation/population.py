"""Every mutant the tools can make of the reference app, the sample drawn from them, and what is left out and why.

A mutant is one change: a cosmic-ray mutation of a memchat module (its core operators and the suite's own, for the
SQL in strings and removed calls: tools/mutation/cosmic_ray_plugin) or a StrykerJS mutant of the page's scripts.
Left out before drawing, as no test could ever tell them: code that runs only while a catalogue fault is switched on
(`if settings.has("<fault>")`: no default run reaches it), and annotations a module never evaluates. Drawn, then
counted equivalent by rule without a run (added later: left out before drawing, they would change every seed's
draw): code behind a flag that only ever carries a fault's test (`if self.soft_delete`, where `soft_delete` is only
ever given `settings.has(...)`), and functions of the app that no part of the app calls (only memchat's own tests).

An equivalent of mutation-equivalents.toml names one mutant exactly: its module, line, operator, the column where
its change starts, its replacement, and the stripped text of its line (`source`). It matches that mutant only, and
only while its line still reads `source`: a sibling of the line (another column or replacement) is not covered, and
an entry whose line changed applies to nothing until someone reads the code again (stale_equivalents).
"""

from __future__ import annotations

import ast
import random
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

EQUIVALENTS_FILE = "mutation-equivalents.toml"
FAULT_ONLY = "code that runs only while a catalogue fault is on"
ANNOTATION = "annotations that are never evaluated"
UNCALLED = "a function the app never calls (only its own tests do)"
FAULT_FLAG = "code behind a flag that only ever carries a catalogue fault's test"
BY_RULE = (FAULT_FLAG, UNCALLED)  # drawn, then equivalent by rule


@dataclass(frozen=True)
class Mutant:
    """One mutant: `ref` is the tool's own handle (cosmic-ray's job id, StrykerJS's mutant id)."""

    tool: str  # "cosmic-ray" | "stryker"
    ref: str
    module: str  # the file's path in the project
    line: int
    operator: str
    detail: str = ""  # StrykerJS's replacement; cosmic-ray's occurrence of the operator in the module
    column: int = 0  # where the change starts (cosmic-ray counts columns from 0, as Python's ast does)
    replacement: str = ""  # the text the mutant writes where its change starts (named_exactly fills cosmic-ray's)
    source: str = ""  # the stripped text of its line in the code it was made of (named_exactly fills it)

    @property
    def sort_key(self) -> tuple:
        return self.tool, self.module, self.line, self.operator, self.detail

    @property
    def id(self) -> str:
        return f"{self.tool}:{self.module}:{self.line}:{self.operator}:{self.detail}"


def app_modules(root: Path) -> list[Path]:
    """memchat's own modules, its packages' included (memchat/web/), its tests not."""
    app = root / "memchat"
    return sorted(p for p in app.rglob("*.py") if "tests" not in p.relative_to(app).parts[:-1])


def line_source(root: Path, module: str, line: int) -> str | None:
    """The stripped text of a line of a module of the project; None when the module or the line is not there."""
    try:
        lines = (root / module).read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    return lines[line - 1].strip() if 1 <= line <= len(lines) else None


def named_exactly(mutants: Iterable[Mutant], root: Path, replacements: dict[str, str]) -> list[Mutant]:
    """The mutants with what an equivalent names them by: each one's replacement (StrykerJS's own; cosmic-ray's, by
    its ref, from `replacements`) and the stripped text of its line in the code under `root`."""
    return [replace(m, replacement=m.detail if m.tool == "stryker" else replacements.get(m.ref, m.replacement),
                    source=line_source(root, m.module, m.line) or "") for m in mutants]


@dataclass(frozen=True)
class NamedMutant:
    """A mutant named exactly, as a file of the project names it: its module, line, operator, the column where its
    change starts, its replacement, and the stripped text of its line (`source`)."""

    module: str
    line: int
    operator: str
    column: int
    replacement: str
    source: str

    def same_change(self, mutant: Mutant) -> bool:
        """The same change at any line (what the line then decides)."""
        return ((mutant.module, mutant.operator, mutant.column, mutant.replacement, mutant.source)
                == (self.module, self.operator, self.column, self.replacement, self.source))


@dataclass(frozen=True)
class Equivalent(NamedMutant):
    """One mutant no user or operator can tell from the original, named exactly. An entry whose line no longer
    reads `source` applies to no mutant (stale_equivalents lists such entries)."""

    reason: str

    def matches(self, mutant: Mutant) -> bool:
        return mutant.line == self.line and self.same_change(mutant)

    @classmethod
    def by_rule(cls, mutant: Mutant, reason: str) -> Equivalent:
        return cls(mutant.module, mutant.line, mutant.operator, mutant.column, mutant.replacement, mutant.source,
                   reason)


EQUIVALENT_FIELDS = ("module", "line", "operator", "column", "replacement", "source", "reason")


def load_equivalents(path: Path) -> list[Equivalent]:
    """mutation-equivalents.toml: [[equivalent]] with every one of EQUIVALENT_FIELDS (reason: one line); a bad entry
    stops the run with one line saying which."""
    if not path.exists():
        return []
    try:
        entries = tomllib.loads(path.read_text(encoding="utf-8")).get("equivalent", [])
        found = []
        for e in entries:
            missing = [name for name in EQUIVALENT_FIELDS if name not in e]
            if missing:
                raise KeyError(", ".join(missing))
            found.append(Equivalent(str(e["module"]), int(e["line"]), str(e["operator"]), int(e["column"]),
                                    str(e["replacement"]), str(e["source"]), str(e["reason"])))
    except (tomllib.TOMLDecodeError, KeyError, TypeError, ValueError) as e:
        raise SystemExit(f"{path.name}: each [[equivalent]] needs {', '.join(EQUIVALENT_FIELDS)} ({e})") from None
    for entry in found:
        where = f"the equivalent at {entry.module}:{entry.line}:{entry.column}"
        if not entry.reason.strip() or "\n" in entry.reason:
            raise SystemExit(f"{path.name}: {where} needs a one-line reason")
        if not entry.source or entry.source != entry.source.strip():
            raise SystemExit(f"{path.name}: {where} needs the stripped text of its line as its source")
    return found


def stale_equivalents(entries: Iterable[Equivalent], root: Path) -> list[Equivalent]:
    """The entries whose line no longer holds the code their reason describes (its stripped text is not `source`,
    or the module or line is gone): they apply to no mutant until someone reads the code again and moves them."""
    return [e for e in entries if line_source(root, e.module, e.line) != e.source]


Span = tuple[tuple[int, int], tuple[int, int]]  # (line, column) from, to


def fault_only_spans(source: str, flags: frozenset[str] = frozenset()) -> list[Span]:
    """Where code runs only while a catalogue fault is on: the body of an `if` (or of `a if <test> else b`) whose
    test is `<x>.has("<name>")` (or `any(<x>.has(f) ...)`, or one of the fault `flags`), not its `else`; and the
    `else` of one whose test is `not` such a test."""
    spans: list[Span] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.If) and _asks_for_fault(node.test, flags):
            spans += [_span(statement) for statement in node.body]
        elif isinstance(node, ast.If) and _asks_for_no_fault(node.test, flags):
            spans += [_span(statement) for statement in node.orelse]
        elif isinstance(node, ast.IfExp) and _asks_for_fault(node.test, flags):
            spans.append(_span(node.body))
        elif isinstance(node, ast.IfExp) and _asks_for_no_fault(node.test, flags):
            spans.append(_span(node.orelse))
    return spans


def fault_flags(sources: Iterable[str]) -> frozenset[str]:
    """The names that only ever carry a fault's test: a keyword argument, a variable or a parameter given
    `<x>.has("<fault>")` and nothing else anywhere in the app (`soft_delete=settings.has(...)`, then
    `if self.soft_delete:`)."""
    trees = [ast.parse(source) for source in sources]
    params = {node.name: [a.arg for a in node.args.args]
              for tree in trees for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)}
    given: dict[str, list[bool]] = {}  # name -> for each value it is given: is it a fault's test?
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                for keyword in node.keywords:
                    if keyword.arg:
                        given.setdefault(keyword.arg, []).append(_asks_for_fault(keyword.value))
                called = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
                names = params.get(called, [])
                names = names[1:] if names[:1] == ["self"] else names
                for name, value in zip(names, node.args, strict=False):
                    given.setdefault(name, []).append(_asks_for_fault(value))
            elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                given.setdefault(node.targets[0].id, []).append(_asks_for_fault(node.value))
    return frozenset(name for name, values in given.items() if all(values))


def uncalled_spans(module: str, app: dict[str, str]) -> list[Span]:
    """The module-level functions of `module` that nothing in the app uses (`app`: each module's path in the project
    and source, `module` among them; a definition is not a use): only memchat's own tests call them, so no user's move
    reaches them. A use is the bare name in its own module or where it is imported from there, or `<module>.<name>`
    anywhere."""
    stem = Path(module).stem if Path(module).stem != "__init__" else Path(module).parent.name  # a package by its name
    used: set[str] = set()
    for path, source in app.items():
        tree = ast.parse(source)
        imported = {a.asname or a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
                    and (n.module or "").split(".")[-1] == stem for a in n.names}
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and (path == module or node.id in imported):
                used.add(node.id)
            elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == stem:
                used.add(node.attr)
    return [_span(node) for node in ast.parse(app[module]).body
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name not in used
            and not node.decorator_list]


def annotation_spans(source: str) -> list[Span]:
    """The annotations of a module that postpones their evaluation (`from __future__ import annotations`): never
    evaluated, so a mutant there (`User | None` -> `User // None`) changes nothing that runs."""
    tree = ast.parse(source)
    postponed = any(isinstance(n, ast.ImportFrom) and n.module == "__future__" and
                    any(a.name == "annotations" for a in n.names) for n in tree.body)
    if not postponed:
        return []
    spans = []
    for node in ast.walk(tree):
        if isinstance(node, ast.arg) and node.annotation is not None:
            spans.append(_span(node.annotation))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.returns is not None:
            spans.append(_span(node.returns))
        elif isinstance(node, ast.AnnAssign):
            spans.append(_span(node.annotation))
    return spans


def enclosing_definition(source: str, line: int) -> str:
    """The innermost function or class of a module around a line, as `Class.method`; "(module level)" outside any."""
    names: list[str] = []

    def visit(node: ast.AST, path: list[str]) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                first = min([child.lineno, *(d.lineno for d in child.decorator_list)])
                if first <= line <= (child.end_lineno or child.lineno):
                    names[:] = [*path, child.name]
                    visit(child, [*path, child.name])
                    return
            visit(child, path)

    visit(ast.parse(source), [])
    return ".".join(names) or "(module level)"


def _span(node: ast.stmt | ast.expr) -> Span:
    return (node.lineno, node.col_offset), (node.end_lineno or node.lineno, node.end_col_offset or 0)


def _asks_for_no_fault(test: ast.expr, flags: frozenset[str]) -> bool:
    """`not <a fault's test>`: its `else` runs only while the fault is on."""
    return isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) and _asks_for_fault(test.operand, flags)


def _asks_for_fault(test: ast.expr, flags: frozenset[str] = frozenset()) -> bool:
    """True only while some fault is on: `x.has(...)`, `any(x.has(f) for ...)`, a fault flag (`soft_delete`,
    `self.soft_delete`), an `and` with one of those, an `or` of only those."""
    if isinstance(test, ast.Name):
        return test.id in flags
    if isinstance(test, ast.Attribute):
        return test.attr in flags
    if isinstance(test, ast.Call):
        if isinstance(test.func, ast.Attribute):
            return test.func.attr == "has"
        if isinstance(test.func, ast.Name) and test.func.id == "any" and test.args:
            generator = test.args[0]
            return isinstance(generator, ast.GeneratorExp) and _asks_for_fault(generator.elt, flags)
        return False
    if isinstance(test, ast.BoolOp):
        asks = [_asks_for_fault(v, flags) for v in test.values]
        return any(asks) if isinstance(test.op, ast.And) else all(asks)
    return False


@dataclass
class Population:
    """The mutants there are, and those left out before drawing (with why)."""

    mutants: list[Mutant] = field(default_factory=list)
    left_out: dict[str, int] = field(default_factory=dict)  # reason -> how many
    set_apart: list[tuple[str, Mutant]] = field(default_factory=list)  # each left out, with why
    by_rule: dict[str, str] = field(default_factory=dict)  # mutant id -> why it is equivalent (BY_RULE)

    def add(self, mutants: Iterable[Mutant], root: Path) -> None:
        spans: dict[str, list[tuple[str, list[Span]]]] = {}
        app = {path.relative_to(root).as_posix(): path.read_text(encoding="utf-8")
               for path in app_modules(root)}
        flags = fault_flags(app.values())
        for mutant in mutants:
            if mutant.module.endswith(".py"):
                if mutant.module not in spans:
                    source = (root / mutant.module).read_text(encoding="utf-8")
                    spans[mutant.module] = [(FAULT_ONLY, fault_only_spans(source)),
                                            (ANNOTATION, annotation_spans(source)),
                                            (FAULT_FLAG, fault_only_spans(source, flags)),
                                            (UNCALLED, uncalled_spans(mutant.module, app))]
                at = (mutant.line, mutant.column)
                why = next((why for why, where in spans[mutant.module]
                            if any(start <= at < end for start, end in where)), None)
                if why in BY_RULE:
                    self.by_rule[mutant.id] = why
                elif why:
                    self.left_out[why] = self.left_out.get(why, 0) + 1
                    self.set_apart.append((why, mutant))
                    continue
            self.mutants.append(mutant)

    def count(self, tool: str) -> int:
        return sum(1 for m in self.mutants if m.tool == tool)

    def draw(self, size: int, seed: str) -> list[Mutant]:
        """`size` mutants drawn with `seed`, from each tool in proportion to its mutants (at least one of each tool
        that has any, where the sample has room)."""
        tools = sorted({m.tool for m in self.mutants})
        total = len(self.mutants)
        shares = {t: round(size * self.count(t) / total) if total else 0 for t in tools}
        for tool in tools:
            if shares[tool] == 0 and size >= len(tools):
                shares[tool] = 1
        while sum(shares.values()) > size:  # rounding: take from the largest share
            shares[max(shares, key=lambda t: shares[t])] -= 1
        while sum(shares.values()) < min(size, total):
            shares[max(tools, key=lambda t: self.count(t) - shares[t])] += 1
        rng = random.Random(f"mutation-{seed}")
        drawn: list[Mutant] = []
        for tool in tools:
            pool = sorted((m for m in self.mutants if m.tool == tool), key=lambda m: m.sort_key)
            drawn += rng.sample(pool, min(shares[tool], len(pool)))
        return sorted(drawn, key=lambda m: m.sort_key)
