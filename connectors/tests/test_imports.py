"""The connectors' modules import each other at the top, with no cycle kept alive by an import
inside a function, and read memory's upload reader through its one public module."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

CONNECTORS = Path(__file__).resolve().parent.parent
MODULES = sorted(p for p in CONNECTORS.rglob("*.py") if "tests" not in p.parts and "migrations" not in p.parts)


def _late_imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(), str(path))
    found = []
    for function in ast.walk(tree):
        if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            for node in ast.walk(function):
                if isinstance(node, ast.Import | ast.ImportFrom):
                    found.append(f"{path.relative_to(CONNECTORS.parent)}:{node.lineno}")
    return found


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(CONNECTORS)))
def test_no_module_imports_inside_a_function(path):
    if path.name == "apps.py":  # ready() registers the kinds once the apps are loaded, as Django asks
        return
    assert _late_imports(path) == []


def test_only_the_public_attachments_module_of_memory_upload_is_imported():
    reached = set()
    for path in MODULES:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("memory.upload"):
                reached.add(node.module)
    assert reached == {"memory.upload.attachments"}
