"""``# fmt: skip`` keeps a literal table laid out by hand (rows and columns a reader scans), and
nothing else: every other line is as ``ruff format`` writes it. Read with ``tokenize`` and ``ast``;
no database.

    .venv/bin/python -m tests.test_fmt_skip   # lists every misplaced skip
"""

from __future__ import annotations

import ast
import io
import re
import sys
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SKIP = re.compile(r"#\s*fmt:\s*skip\b")
LITERALS = (ast.Dict, ast.List, ast.Tuple, ast.Set)
# Files whose misplaced skips are still to be removed; each is checked once it leaves this list,
# and the list may only shrink (``test_the_files_still_to_format_still_need_it``).
NOT_YET = frozenset(
    {
        "overview/tests/overview_data.py",
        "overview/tests/test_overview.py",
        "registers/tests/test_contradictions.py",
    }
)


def python_files() -> list[Path]:
    return sorted(
        path
        for path in ROOT.rglob("*.py")
        if not any(part.startswith(".") or part == "node_modules" for part in path.relative_to(ROOT).parts)
    )


def skipped_lines(source: str) -> list[int]:
    """The lines that carry a ``# fmt: skip`` comment."""
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    return [token.start[0] for token in tokens if token.type == tokenize.COMMENT and SKIP.search(token.string)]


def _statement_at(tree: ast.Module, line: int) -> ast.stmt | None:
    """The innermost statement whose lines hold ``line``."""
    holding = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.stmt) and node.lineno <= line <= (node.end_lineno or node.lineno)
    ]
    return min(holding, key=lambda node: (node.end_lineno or node.lineno) - node.lineno, default=None)


def is_table(statement: ast.stmt | None) -> bool:
    """A statement that is a literal laid out over lines (a mapping, or rows of literals): assigned,
    returned, given, or what an assertion compares with."""
    value: ast.expr | None = None
    if isinstance(statement, ast.Assign | ast.AnnAssign | ast.AugAssign | ast.Expr | ast.Return):
        value = statement.value
    elif isinstance(statement, ast.Assert):
        value = statement.test.comparators[-1] if isinstance(statement.test, ast.Compare) else statement.test
    if not isinstance(value, LITERALS) or (value.end_lineno or value.lineno) == value.lineno:
        return False
    return isinstance(value, ast.Dict) or all(_is_row(element) for element in value.elts)


def _is_row(element: ast.expr) -> bool:
    """A row or cell of a table: a literal, a value written as one (``-1``, ``"a" * 3``), or a record
    made of them (``Doc("memo", "owner", hidden=True)``, ``date(2025, 11, 24)``)."""
    if isinstance(element, ast.Constant | ast.JoinedStr | ast.Name | ast.Attribute):
        return True
    if isinstance(element, ast.Starred):
        return _is_row(element.value)
    if isinstance(element, ast.UnaryOp | ast.BinOp | ast.Tuple | ast.List | ast.Set | ast.Dict):
        return all(_is_row(part) for part in ast.iter_child_nodes(element) if isinstance(part, ast.expr))
    if isinstance(element, ast.Call):
        return all(_is_row(part) for part in [*element.args, *(k.value for k in element.keywords)])
    return False


def misplaced(path: Path) -> list[str]:
    """``file:line`` of each ``# fmt: skip`` in ``path`` that keeps no literal table."""
    source = path.read_text()
    lines = skipped_lines(source)
    if not lines:
        return []
    tree = ast.parse(source, str(path))
    where = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
    return [f"{where}:{line}" for line in lines if not is_table(_statement_at(tree, line))]


def test_fmt_skip_keeps_only_literal_tables():
    checked = [path for path in python_files() if str(path.relative_to(ROOT)) not in NOT_YET]
    found = [place for path in checked for place in misplaced(path)]
    assert found == [], "# fmt: skip on a line that is no literal table; remove it and run ruff format"


def test_the_files_still_to_format_still_need_it():
    done = sorted(name for name in NOT_YET if not (ROOT / name).exists() or not misplaced(ROOT / name))
    assert done == [], "these files keep no misplaced # fmt: skip any more: take them off NOT_YET"


def _check(source: str) -> list[int]:
    return [line for line in skipped_lines(source) if not is_table(_statement_at(ast.parse(source), line))]


def test_a_literal_table_may_keep_its_layout():
    table = 'ROWS = [\n    ("a",   1),\n    ("bb", 22),\n]  # fmt: skip\n'
    records = 'WORLD = (\n    Doc("memo", owner, hidden=True),\n    Doc("plan", f"{who}", -1),\n)  # fmt: skip\n'
    compared = 'def test():\n    assert found == {\n        "a":  1,\n        "bb": 2,\n    }  # fmt: skip\n'
    assert _check(table) == []
    assert _check(records) == []
    assert _check(compared) == []


def test_a_skip_anywhere_else_is_named_by_its_line():
    call = "def f():\n    x = 1\n    record(a=1,\n           b=2)  # fmt: skip\n"
    header = "def f(a,\n      b):  # fmt: skip\n    return [a,\n            b]\n"
    comprehension = "rows = [\n    r for r in range(3)\n]  # fmt: skip\n"
    one_line = "pair = (1,  2)  # fmt: skip\n"
    computed = "lines = [a or b,\n         [c for c in d]]  # fmt: skip\n"
    assert _check(call) == [4]
    assert _check(header) == [2]
    assert _check(comprehension) == [3]
    assert _check(one_line) == [1]
    assert _check(computed) == [2]


if __name__ == "__main__":
    places = [place for path in python_files() for place in misplaced(path)]
    print("\n".join(places))
    print(f"{len(places)} misplaced # fmt: skip", file=sys.stderr)
