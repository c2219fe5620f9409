"""Which module imports which, read from the source with ``ast``, and the imports that go against
the declared direction: inside memory/ a layer imports only the layers below it, and an app imports
another app only where the core declares a seam.

    .venv/bin/python -m tests.import_direction        # lists every import against the direction
    .venv/bin/python -m tests.import_direction --map  # the map docs/architecture.md shows

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
    ("limits", "models"),
    ("access",),
    ("index",),
    ("extraction",),
    ("documents",),
    ("graph",),
    ("search", "code_history"),
    ("maintenance",),
    ("mcp_tools", "api", "admin", "admin_fixes", "tasks", "health", "urls", "management", "apps", "upload"),
    ("web",),
]
# The apps and the parts of apps, lowest first; a module belongs to the longest prefix that names
# it. The core (brain) is below billing (usage), which charges every call through the meter the
# core declares; the core's own tools and pages show the plan, so they sit above billing; the
# composition roots (the URL maps) and the overview that reads every app sit above everything.
UNITS = [
    ("core", ("brain",)),
    ("billing", ("usage",)),
    ("core tools and pages", ("brain.mcp_tools", "brain.views")),
    ("memory", ("memory",)),
    ("skills", ("skills",)),
    ("contacts", ("contacts",)),
    ("registers", ("registers",)),
    ("jobs", ("jobs",)),
    ("connectors", ("connectors",)),
    (
        "roots",
        ("brain.urls", "brain.api.urls", "usage.overview", "usage.views", "usage.urls", "usage.context_processors"),
    ),
]
APPS = sorted({prefix.split(".")[0] for _, prefixes in UNITS for prefix in prefixes})


def unit_of(module: str) -> int | None:
    """The index in UNITS of the unit a module belongs to; None for a module outside the apps."""
    best: tuple[int, int] | None = None
    for index, (_, prefixes) in enumerate(UNITS):
        for prefix in prefixes:
            inside = module == prefix or module.startswith(prefix + ".")
            if inside and (best is None or len(prefix) > best[0]):
                best = (len(prefix), index)
    return None if best is None else best[1]


def memory_layer(module: str) -> int | None:
    """The index in MEMORY_LAYERS of a memory module's layer; None outside memory/ or for memory/
    itself (its ``__init__``). A package of memory/ in no layer is an error (``unlayered``)."""
    parts = module.split(".")
    if parts[0] != "memory" or len(parts) < 2:
        return None
    return next((i for i, names in enumerate(MEMORY_LAYERS) if parts[1] in names), None)


def crossing(module: str, target: str) -> str | None:
    """Why ``module`` may not import ``target``, or None when it may."""
    mine, theirs = unit_of(module), unit_of(target)
    if mine is not None and theirs is not None and theirs > mine:
        return f"{module} ({UNITS[mine][0]}) imports {target} ({UNITS[theirs][0]}, above it)"
    low, high = memory_layer(module), memory_layer(target)
    if low is not None and high is not None and high > low:
        return f"{module} imports {target} (a layer of memory/ above it)"
    return None


# The extraction layer's public face: code outside it imports the package itself or these tables.
EXTRACTION = "memory.extraction"
EXTRACTION_PUBLIC = ("memory.extraction.lines", "memory.extraction.vocabulary")


def reaches_inside(module: str, target: str) -> str | None:
    """Why ``module`` may not import ``target`` from inside the extraction package, or None."""
    inside = module == EXTRACTION or module.startswith(EXTRACTION + ".")
    if inside or not target.startswith(EXTRACTION + ".") or target in EXTRACTION_PUBLIC:
        return None
    return f"{module} imports {target} (inside {EXTRACTION}: use the names the package exports)"


def unlayered() -> list[str]:
    """The packages and modules directly under memory/ that no layer names."""
    return sorted(module for module, _ in modules() if module.startswith("memory.") and memory_layer(module) is None)


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


def against_direction() -> list[str]:
    found = []
    for module, path in modules():
        for line, target in imports_of(path):
            why = crossing(module, target) or reaches_inside(module, target)
            if why:
                found.append(f"{path.relative_to(ROOT)}:{line}: {why}")
    return found


def layer_map() -> str:
    """The map in docs/architecture.md: the units, then memory's layers with their modules."""
    lines = ["| unit, lowest first | modules |", "|---|---|"]
    for name, prefixes in UNITS:
        lines.append(f"| {name} | {', '.join(f'`{p}`' for p in prefixes)} |")
    lines += ["", "| layer of `memory/`, lowest first | modules |", "|---|---|"]
    inside: dict[str, list[str]] = {}
    for module, _ in modules():
        parts = module.split(".")
        if parts[0] == "memory" and len(parts) > 1 and ".management.commands." not in module:
            inside.setdefault(parts[1], []).append(".".join(parts[2:]) or parts[1])
    for names in MEMORY_LAYERS:
        shown = []
        for name in names:
            below = sorted(m for m in inside.get(name, []) if m != name)
            shown.append(f"`{name}`" + (f" ({', '.join(below)})" if below else ""))
        lines.append(f"| {' · '.join(names)} | {'; '.join(shown)} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    if sys.argv[1:] == ["--map"]:
        print(layer_map(), end="")
        sys.exit(0)
    lines = against_direction()
    lines += [f"{module}: in no layer of memory/ (tests/import_direction.MEMORY_LAYERS)" for module in unlayered()]
    print("\n".join(lines) or "no import against the direction")
    print(f"{len(lines)} import(s) against the direction", file=sys.stderr)
