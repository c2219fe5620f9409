"""Which module imports which, read from the source with ``ast``, and the imports that go against
the declared design, each named with the rule it breaks:

- an app imports only the levels below its own (``LEVELS``), and the apps of one level (memory
  and billing; the feature apps) are independent of each other;
- from another app a module imports only that app's ``models``, ``selectors`` and ``services`` and
  the modules it declares public (``PUBLIC``: its seams and the functions the apps above call);
  the composition roots (the URL maps, the overview) may import anything;
- inside memory/ a layer imports only the layers below it, and code outside the extraction layer
  uses its public face;
- no app has an import cycle between its own modules (``cycles``).

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
# The apps and the parts of apps in levels, lowest first; a module belongs to the unit of the
# longest prefix that names it. A unit imports itself and the levels below; the units of one level
# are independent of each other. The core (brain) is at the bottom. Above it, side by side, memory
# (the domain the features are built on) and billing (usage), which charges every call through the
# meter the core declares and tells memory through the core's seams when it may pay again. Then the
# feature apps; then the core's own tools and pages, which show the plan; the composition roots (the
# URL maps) and the overview that reads every app sit above everything.
LEVELS: list[list[tuple[str, tuple[str, ...]]]] = [
    [("core", ("brain",))],
    [("memory", ("memory",)), ("billing", ("usage",))],
    [
        ("skills", ("skills",)),
        ("contacts", ("contacts",)),
        ("registers", ("registers",)),
        ("jobs", ("jobs",)),
        ("connectors", ("connectors",)),
    ],
    [("core tools and pages", ("brain.mcp_tools", "brain.views"))],
    [("roots", ("brain.urls", "brain.api.urls", "overview"))],
]
UNITS = [unit for level in LEVELS for unit in level]
LEVEL_OF = [index for index, level in enumerate(LEVELS) for _ in level]
ROOTS = UNITS.index(LEVELS[-1][0])
APPS = sorted({prefix.split(".")[0] for _, prefixes in UNITS for prefix in prefixes})
# What another app may import of an app besides its models, selectors and services: each module
# (and what is inside it) with why it is there. The core is the platform every app stands on: all
# of it is public but its wiring and its own tools and pages.
OPEN = ("models", "selectors", "services")
CORE_PRIVATE = (
    "brain.views",
    "brain.mcp_tools",
    "brain.urls",
    "brain.api.urls",
    "brain.settings",
    "brain.asgi",
    "brain.celery",
    "brain.management",
)
PUBLIC: dict[str, dict[str, str]] = {
    "memory": {
        "memory.access": "who may see a row, and what is current: the one rule every read applies",
        "memory.limits": "how much a save may hold",
        "memory.extraction": "the extraction layer's public face (and the two tables below)",
        "memory.extraction.lines": "line shapes the registers read",
        "memory.extraction.vocabulary": "the words the registers share with extraction",
        "memory.documents.saving": "add_document, the one way knowledge comes in",
        "memory.documents.records": "the record shapes a source writes, and their readers",
        "memory.documents.placement": "where a synced item goes",
        "memory.documents.ingestion": "seam READY; retrying a document",
        "memory.documents.source": "a document's text and blocks, as stored",
        "memory.documents.turns": "the turns of a conversation",
        "memory.index.embedding": "embedding text with memory's model",
        "memory.index.serving": "memory's models, for those who keep vectors elsewhere",
        "memory.maintenance.reembedding": "seam ELSEWHERE",
        "memory.graph": "facts, entities and their reads, for the registers",
        "memory.search.passages": "the passage of a document that answers",
        "memory.search.answer": "the answer card, for measuring it",
        "memory.search.evidence": "the search an answer card reads",
        "memory.mcp_tools.answers": "seams ASK_ADDITIONS and FACT_FLAGS",
        "memory.mcp_tools.documents": "the shapes a document is answered with",
        "memory.code_history": "the code history the connectors feed",
        "memory.upload.attachments": "reading a mail's attachment as an upload",
    },
    "usage": {"usage.shapes": "the plan and its use, as the core's init tool shows them"},
}


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


def _within(module: str, prefixes: tuple[str, ...] | list[str]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def public(target: str) -> bool:
    """Whether an app other than ``target``'s may import it."""
    app, _, rest = target.partition(".")
    if app == "brain":
        return not _within(target, CORE_PRIVATE)
    return not rest or rest.split(".")[0] in OPEN or _within(target, list(PUBLIC.get(app, {})))


def crossing(module: str, target: str) -> str | None:
    """Why ``module`` may not import ``target``, or None when it may."""
    mine, theirs = unit_of(module), unit_of(target)
    if mine is not None and theirs is not None and mine != ROOTS:
        if LEVEL_OF[theirs] > LEVEL_OF[mine]:
            return f"{module} ({UNITS[mine][0]}) imports {target} ({UNITS[theirs][0]}, above it)"
        if LEVEL_OF[theirs] == LEVEL_OF[mine] and theirs != mine:
            return (
                f"{module} ({UNITS[mine][0]}) imports {target} ({UNITS[theirs][0]}): the apps of one level are "
                "independent of each other (they meet through a seam the core declares)"
            )
        if module.split(".")[0] != target.split(".")[0] and not public(target):
            return (
                f"{module} imports {target}, which is not public: from another app import its models, selectors, "
                "services or a module it declares public (tests/import_direction.PUBLIC)"
            )
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


def imported_modules(module: str, path: Path, known: dict[str, Path]) -> Iterator[tuple[int, str]]:
    """The modules of the apps ``module`` imports: ``from package import name`` is the module
    ``package.name`` where there is one, else the package; ``from . import x`` is resolved too."""
    tree = ast.parse(path.read_text(), str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from ((node.lineno, alias.name) for alias in node.names if alias.name.split(".")[0] in APPS)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from the package, one step up for each dot after the first
                parts = package.split(".")
                base = ".".join([*parts[: len(parts) - node.level + 1], *([base] if base else [])])
            if base.split(".")[0] not in APPS:
                continue
            for alias in node.names:
                yield node.lineno, f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import cycles of a graph (module -> the modules it imports): each strongly connected
    set of more than one module, sorted; found with Tarjan's algorithm, without recursion."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            step = next(edges, None)
            if step is not None:
                if step not in index:
                    index[step] = low[step] = len(index)
                    stack.append(step)
                    on_stack.add(step)
                    work.append((step, iter(sorted(graph.get(step, ())))))
                elif step in on_stack:
                    low[node] = min(low[node], index[step])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                part = []
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    part.append(top)
                    if top == node:
                        break
                if len(part) > 1:
                    found.append(sorted(part))
    return sorted(found)


def cycles_inside_apps() -> list[str]:
    """Every import cycle between the modules of one app, imports inside functions included."""
    known = dict(modules())
    graph: dict[str, set[str]] = {}
    for module, path in known.items():
        app = module.split(".")[0]
        graph[module] = {
            target
            for _, target in imported_modules(module, path, known)
            if target in known and target != module and target.split(".")[0] == app
        }
    return [f"{' -> '.join(part)}: an import cycle inside {part[0].split('.')[0]}/" for part in cycles(graph)]


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
    lines = ["| level, lowest first | units (independent of each other) and their modules |", "|---|---|"]
    for number, level in enumerate(LEVELS):
        units = "; ".join(f"{name}: {', '.join(f'`{p}`' for p in prefixes)}" for name, prefixes in level)
        lines.append(f"| {number} | {units} |")
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
    lines = against_direction() + cycles_inside_apps()
    lines += [f"{module}: in no layer of memory/ (tests/import_direction.MEMORY_LAYERS)" for module in unlayered()]
    print("\n".join(lines) or "no import against the direction")
    print(f"{len(lines)} import(s) against the direction", file=sys.stderr)
