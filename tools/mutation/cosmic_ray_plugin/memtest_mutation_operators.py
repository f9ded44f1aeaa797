"""cosmic-ray operators for what reaches users of a chat app's store: the SQL in the code's strings (ORDER BY
direction and columns, WHERE terms, LIKE/ILIKE against =, LIMIT and OFFSET) and calls removed (a write or a check
that no longer happens). Each works on parso leaves: a string (or an f-string's literal part) is rewritten in place,
so a placeholder keeps its parameter and the statement still runs; only its meaning changes."""

from __future__ import annotations

import re
from collections.abc import Iterator

import parso.python.tree as tree
from cosmic_ray.operators.operator import Example, Operator

Position = tuple[tuple[int, int], tuple[int, int]]
# A simple comparison in a WHERE clause: a column, an operator, and a placeholder, a column or a literal.
_TERM = re.compile(r"(?:(?<=WHERE )|(?<=AND )|(?<=OR )|(?<=\())"
                   r"((?:lower\()?[a-z_][\w.]*\)?\s*(?:=|<>|!=|>=|<=|>|<|IS NOT|IS)\s*"
                   r"(?:lower\(%s\)|%\(\w+\)s|%s|NULL|'[^']*'|[a-z_][\w.]*))(?=\s|\)|[\"']?$)")


class _SqlOperator(Operator):
    """Rewrites matches of `pattern` in string leaves that hold SQL (after `after`, where given); each match is one
    mutation."""

    pattern: re.Pattern[str]
    after: str = ""

    def _matches(self, node: object) -> list[re.Match[str]]:
        if isinstance(node, tree.String):
            if not (_SQL.search(node.value) or _in_sql_fstring(node)):
                return []
        elif not (isinstance(node, tree.FStringString) and _in_sql_fstring(node)):
            return []
        value: str = node.value  # type: ignore[attr-defined]
        start = value.find(self.after) if self.after else 0
        return [] if start < 0 else list(self.pattern.finditer(value, start))

    def mutation_positions(self, node: object) -> Iterator[Position]:
        for _ in self._matches(node):
            yield node.start_pos, node.end_pos  # type: ignore[attr-defined]

    def mutate(self, node: tree.Leaf, index: int) -> tree.Leaf:
        match = self._matches(node)[index]
        value = node.value[:match.start()] + self.replace(match) + node.value[match.end():]
        return type(node)(value, node.start_pos, prefix=node.prefix)

    def replace(self, match: re.Match[str]) -> str:
        raise NotImplementedError


_SQL = re.compile(r"\b(SELECT|UPDATE|DELETE|INSERT|WHERE|ORDER BY)\b")


def _in_sql_fstring(node: tree.Leaf) -> bool:
    """An f-string, or a string beside others in one expression, that holds SQL."""
    parent = node.parent
    while parent is not None and parent.type in ("fstring", "strings", "atom"):
        if _SQL.search(parent.get_code()):
            return True
        parent = parent.parent
    return False


class SqlOrderDirection(_SqlOperator):
    """DESC -> ASC, and an ascending ORDER BY column made descending."""

    after = "ORDER BY"
    pattern = re.compile(r"\bDESC\b|(?<=ORDER BY )[a-z_][\w.]*(?=\s*(?:,|\bLIMIT\b|[\"']?$))"
                         r"|(?<=, )[a-z_][\w.]*(?=\s*(?:\bLIMIT\b|[\"']?$))")

    def replace(self, match: re.Match[str]) -> str:
        return "ASC" if match.group() == "DESC" else f"{match.group()} DESC"

    @classmethod
    def examples(cls) -> tuple[Example, ...]:
        return (Example('q = "SELECT a FROM t ORDER BY id DESC"', 'q = "SELECT a FROM t ORDER BY id ASC"'),
                Example('q = "SELECT a FROM t ORDER BY created_at, id"',
                        'q = "SELECT a FROM t ORDER BY created_at DESC, id"'))


class SqlOrderColumnDropped(_SqlOperator):
    """The last column of an ORDER BY of several dropped (its tie-break)."""

    after = "ORDER BY"
    pattern = re.compile(r",\s*[a-z_][\w.]*(?: DESC| ASC)?(?=\s+LIMIT|\s*[\"']?$|\s*\))(?<=\w)")

    def replace(self, match: re.Match[str]) -> str:
        return ""

    @classmethod
    def examples(cls) -> tuple[Example, ...]:
        return (Example('q = "SELECT a FROM t ORDER BY created_at, id"', 'q = "SELECT a FROM t ORDER BY created_at"'),)


class SqlWhereTermDropped(_SqlOperator):
    """A comparison of a WHERE clause made always true: `x = %s` -> `(TRUE OR x = %s)` (its parameter still bound)."""

    pattern = _TERM

    def replace(self, match: re.Match[str]) -> str:
        return f"(TRUE OR {match.group()})"

    @classmethod
    def examples(cls) -> tuple[Example, ...]:
        return (Example('q = "DELETE FROM m WHERE id = %s AND user_id = %s"',
                        'q = "DELETE FROM m WHERE (TRUE OR id = %s) AND user_id = %s"'),
                Example('q = "DELETE FROM m WHERE id = %s AND user_id = %s"',
                        'q = "DELETE FROM m WHERE id = %s AND (TRUE OR user_id = %s)"', occurrence=1))


class SqlLikeForEquals(_SqlOperator):
    """An exact match made a pattern match and back: `=` between text -> ILIKE; LIKE or ILIKE -> `=`."""

    pattern = re.compile(r"(?<=\) )=(?= lower\()|(?<=\w )=(?= lower\()|\bI?LIKE\b")

    def replace(self, match: re.Match[str]) -> str:
        return "ILIKE" if match.group() == "=" else "="

    @classmethod
    def examples(cls) -> tuple[Example, ...]:
        return (Example('q = "SELECT id FROM users WHERE lower(email) = lower(%s)"',
                        'q = "SELECT id FROM users WHERE lower(email) ILIKE lower(%s)"'),
                Example('q = "SELECT id FROM users WHERE email ILIKE %s"',
                        'q = "SELECT id FROM users WHERE email = %s"'))


class SqlLimitOffset(_SqlOperator):
    """One more row: LIMIT n -> LIMIT n + 1, OFFSET n -> OFFSET n + 1."""

    pattern = re.compile(r"\b(?:LIMIT|OFFSET) (?:\d+|%\(\w+\)s|%s)")

    def replace(self, match: re.Match[str]) -> str:
        return f"{match.group()} + 1"

    @classmethod
    def examples(cls) -> tuple[Example, ...]:
        return (Example('q = "SELECT a FROM t ORDER BY id LIMIT 1"', 'q = "SELECT a FROM t ORDER BY id LIMIT 1 + 1"'),)


class RemoveCall(Operator):
    """A call made for its effect, removed: the statement `f(x)` (or `await f(x)`) becomes `None`."""

    def mutation_positions(self, node: object) -> Iterator[Position]:
        if _effect_call(node):
            yield node.start_pos, node.end_pos  # type: ignore[attr-defined]

    def mutate(self, node: tree.BaseNode, index: int) -> tree.Leaf:
        return tree.Name("None", node.start_pos, prefix=node.get_first_leaf().prefix)

    @classmethod
    def examples(cls) -> tuple[Example, ...]:
        return (Example("def f():\n    conn.commit()\n    return 1\n", "def f():\n    None\n    return 1\n"),)


def _effect_call(node: object) -> bool:
    """An expression statement that is a call and nothing else (its value unused)."""
    if not isinstance(node, tree.PythonNode) or node.type not in ("atom_expr", "power"):
        return False
    parent = node.parent
    if parent is None or parent.type != "simple_stmt":
        return False
    last = node.children[-1]
    return last.type == "trailer" and last.children[0].value == "("


_OPERATORS = {op.__name__: op for op in (SqlOrderDirection, SqlOrderColumnDropped, SqlWhereTermDropped,
                                          SqlLikeForEquals, SqlLimitOffset, RemoveCall)}


class OperatorProvider:
    """cosmic-ray's operator-provider plugin interface: the operators by name."""

    def __iter__(self) -> Iterator[str]:
        return iter(_OPERATORS)

    def __getitem__(self, name: str) -> type[Operator]:
        return _OPERATORS[name]
