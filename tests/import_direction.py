"""Which module imports which, read from the source with ``ast``, and the imports that go against
the declared direction: inside memory/ a layer imports only the layers below it, and an app imports
another app only where the core declares a seam.

    .venv/bin/python -m tests.import_direction      # lists every import against the direction

Imports inside functions count as much as those at the top of a module: a late import is still a
dependency. ``TYPE_CHECKING`` blocks are left out (they only name types).
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# memory/, lowest first. A package may import its own layer and those before it.
MEMORY_LAYERS = [
    ("models",),
    ("access",),
    ("index",),
    ("documents",),
    ("graph",),
    ("search", "code_history"),
    ("maintenance",),
    ("mcp_tools", "api", "admin", "admin_fixes", "tasks", "health", "urls", "management", "apps", "upload"),
    ("web",),
]
# The apps, lowest first: an app may import those before it.
APPS = ["brain", "usage", "memory", "contacts", "registers", "jobs"]


def modules() -> Iterator[tuple[str, Path]]:
    for app in APPS:
        for path in sorted((ROOT / app).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            if "tests" in parts or "migrations" in parts:
                continue
            yield ".".join(p for p in parts if p != "__init__"), path


def imports_of(path: Path) -> Iterator[tuple[int, str]]:
    tree = ast.parse(path.read_text(), str(path))
    skipped = {
        id(node)
        for block in ast.walk(tree)
        if isinstance(block, ast.If) and "TYPE_CHECKING" in ast.unparse(block.test)
        for node in ast.walk(block)
    }
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            yield from ((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            yield node.lineno, node.module


def _memory_layer(module: str) -> int | None:
    parts = module.split(".")
    if parts[0] != "memory" or len(parts) < 2:
        return None
    return next((i for i, names in enumerate(MEMORY_LAYERS) if parts[1] in names), None)


def against_direction() -> list[str]:
    found = []
    for module, path in modules():
        for line, target in imports_of(path):
            app, wanted = module.split(".")[0], target.split(".")[0]
            where = f"{path.relative_to(ROOT)}:{line}"
            if wanted in APPS and app in APPS and APPS.index(wanted) > APPS.index(app):
                found.append(f"{where}: {module} (app {app}) imports {target} (app {wanted}, above it)")
            mine, theirs = _memory_layer(module), _memory_layer(target)
            if mine is not None and theirs is not None and theirs > mine:
                found.append(f"{where}: {module} imports {target} (a layer above)")
    return found


if __name__ == "__main__":
    lines = against_direction()
    print("\n".join(lines) or "no import against the direction")
    print(f"{len(lines)} import(s) against the direction", file=sys.stderr)
