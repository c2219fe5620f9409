"""The docs name the tree as it is: every source file a doc points to by its path, and every Python
module it names by its dotted path, exists. A module that moves takes its mentions with it."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
APPS = (
    "brain",
    "memory",
    "registers",
    "connectors",
    "usage",
    "overview",
    "jobs",
    "contacts",
    "skills",
    "launcher",
    "bench",
)
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# `memory/extraction/names.py`, `memory/graph/`: a file or a folder of one of the apps (not
# `memory/0011`, a migration named by its app and number).
PATH = re.compile(rf"`((?:{'|'.join(APPS)})/(?!\d{{4}}`)[\w/.-]*)`")
# `memory.documents.placement.change_document_access`: a module, maybe followed by a name in it
# (not `brain.OutboxMessage`, a model named by its app's label).
DOTTED = re.compile(rf"`((?:{'|'.join(APPS)})(?:\.[a-z_]\w*)+)`")


def _module_exists(dotted: str) -> bool:
    """Some leading part of the dotted path is a module or a package, and every part before it a
    package: what follows the module is a name defined in it."""
    parts = dotted.split(".")
    for depth in range(1, len(parts) + 1):
        path = ROOT.joinpath(*parts[:depth])
        if path.with_suffix(".py").is_file():
            return True
        if not path.is_dir():
            return False
    return True


def test_every_path_a_doc_gives_is_in_the_tree():
    missing = [
        f"{doc.relative_to(ROOT)}: {path}"
        for doc in DOCS
        for path in PATH.findall(doc.read_text())
        if "*" not in path and not (ROOT / path.split("::")[0]).exists()
    ]
    assert missing == []


def _audit_actions() -> set[str]:
    """Audit actions (`memory.forgotten`) are spelled like a module of an app but name none: those
    the Audit trail section of operations.md lists."""
    text = (ROOT / "docs" / "operations.md").read_text()
    start = text.index("### Audit trail")
    return set(re.findall(r"`([a-z_]+\.[a-z_]+)`", text[start : text.index("\n### ", start + 5)]))


def test_every_module_a_doc_names_is_in_the_tree():
    actions = _audit_actions()
    missing = [
        f"{doc.relative_to(ROOT)}: {name}"
        for doc in DOCS
        for name in DOTTED.findall(doc.read_text())
        if not _module_exists(name) and name not in actions
    ]
    assert missing == []


def test_the_check_tells_a_moved_module_from_one_that_is_there():
    assert _module_exists("memory.extraction.names")
    assert _module_exists("memory.documents.placement.change_document_access")
    assert not _module_exists("memory.placement.change_document_access")
    assert not _module_exists("memory.documents.whatsapp")
