"""Imports point one way, and the maps of the code name every module.

Read from the source with ``ast`` (``tests/import_direction.py``); no database."""

from __future__ import annotations

import re

import pytest

from tests.import_direction import (
    ROOT,
    against_direction,
    crossing,
    cycles,
    cycles_inside_apps,
    imported_modules,
    layer_map,
    modules,
    reaches_inside,
    unlayered,
)

# The back-imports the layers and seams replaced: each must still be caught if it came back.
BACK_IMPORTS = [
    ("brain.mcp.invoke", "usage.metering"),
    ("brain.mcp.registry", "usage.prices"),
    ("brain.api.metering", "usage.metering"),
    ("brain.faces.web", "usage.metering"),
    ("brain.core.services", "usage.models"),
    ("usage.services", "memory.documents.ingestion"),
    ("memory.mcp_tools.ask", "registers.ask"),
    ("memory.mcp_tools.ask", "registers.mcp_tools.contradictions"),
    ("memory.mcp_tools.graph", "registers.contradictions.services"),
    ("memory.maintenance.reembedding", "contacts.models"),
    ("memory.management.commands.reembed", "contacts.services"),
    ("memory.documents.ingestion", "memory.graph.memories"),
    ("memory.documents.extracting", "memory.graph.document_facts"),
    ("memory.extraction.blocks", "memory.documents.source"),
    ("memory.graph.reads", "memory.search.evidence"),
    ("memory.graph.reads", "memory.search.expansion"),
    ("memory.index.serving", "memory.documents.turns"),
    ("memory.index.candidates", "memory.search.speakers"),
    ("memory.search.passages", "memory.mcp_tools.documents"),
    ("memory.mcp_tools.documents", "memory.web.search"),
    ("memory.documents.saving", "usage.metering"),
    ("memory.documents.ingestion", "usage.metering"),
    ("memory.apps", "usage.services"),
    ("memory.mcp_tools.ask", "usage.misses"),
    ("jobs.runs", "usage.metering"),
    ("skills.mcp_tools", "brain.mcp_tools"),
    ("connectors.imap", "memory.upload.files"),
]


def test_no_module_imports_against_the_direction():
    assert against_direction() == []


def test_every_package_of_memory_is_in_a_layer():
    assert unlayered() == []


@pytest.mark.parametrize(("module", "target"), BACK_IMPORTS)
def test_each_replaced_back_import_would_be_caught(module, target):
    assert crossing(module, target)


def test_no_app_has_an_import_cycle():
    assert cycles_inside_apps() == []


def test_the_apps_of_one_level_are_independent_of_each_other():
    assert "independent of each other" in (crossing("registers.ask", "jobs.models") or "")
    assert "independent of each other" in (crossing("connectors.sync", "contacts.services") or "")
    assert "independent of each other" in (crossing("memory.documents.saving", "usage.metering") or "")
    assert "independent of each other" in (crossing("usage.services", "memory.models") or "")
    assert crossing("overview.selectors", "registers.models") is None  # a composition root reads every app


def test_from_another_app_only_what_it_declares_public():
    why = crossing("registers.ask", "memory.search.rerank") or ""
    assert "memory.search.rerank, which is not public" in why
    assert crossing("connectors.imap", "memory.upload.files")
    assert crossing("registers.ask", "brain.mcp_tools")  # the core's own tools are above the features
    assert crossing("memory.documents.saving", "brain.views")
    for allowed in ("memory.models", "memory.access", "memory.graph.entities", "memory.upload.attachments"):
        assert crossing("registers.ask", allowed) is None, allowed
    assert crossing("registers.ask", "brain.mcp.registry") is None


def test_a_cycle_is_found_and_named_by_its_modules():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"e", "a"}, "f": {"g"}, "g": {"f"}}
    assert cycles(graph) == [["a", "b", "c"], ["f", "g"]]
    assert cycles({"x": {"y"}, "y": set()}) == []


def test_an_import_of_a_submodule_through_its_package_is_read_as_that_submodule(tmp_path):
    path = tmp_path / "blocks.py"
    path.write_text("from memory.extraction import lines, sentences\nfrom . import names\nfrom .. import access\n")
    known = {m: p for m, p in modules()}
    found = {target for _, target in imported_modules("memory.extraction.blocks", path, known)}
    assert found == {
        "memory.extraction.lines",
        "memory.extraction.sentences",
        "memory.extraction.names",
        "memory.access",
    }


def test_downward_imports_and_seams_are_allowed():
    assert crossing("memory.search.passages", "memory.index.candidates") is None
    assert crossing("contacts.services", "memory.maintenance.reembedding") is None
    assert crossing("registers.ask", "memory.mcp_tools.answers") is None
    assert crossing("usage.metering", "brain.mcp.meter") is None
    assert crossing("brain.urls", "registers.views") is None


def test_memory_init_names_every_module_of_memory():
    text = (ROOT / "memory" / "__init__.py").read_text()
    named = set(re.findall(r"``(\w+)``", text))
    missing = sorted(
        module
        for module, _ in modules()
        if module.startswith("memory.") and ".management.commands." not in module and module.split(".")[-1] not in named
    )
    assert missing == []


def test_the_architecture_map_is_the_tree():
    text = (ROOT / "docs" / "architecture.md").read_text()
    start, end = "<!-- layer map: python -m tests.import_direction --map -->\n", "<!-- end of the layer map -->"
    assert start in text
    assert end in text
    assert text.split(start, 1)[1].split(end, 1)[0] == layer_map()


@pytest.mark.django_db
def test_every_seam_has_what_the_apps_plug_into_it():
    from brain.core.needs import WAITING, WAITING_FOR
    from brain.core.services import MISSED, ORGANISATION_MADE
    from brain.mcp.meter import BILLER, PAYABLE_AGAIN
    from brain.mcp.skills import SKILL_PROVIDERS
    from memory.documents.ingestion import READY
    from memory.maintenance.reembedding import ELSEWHERE
    from memory.mcp_tools.answers import ASK_ADDITIONS, FACT_FLAGS

    def plugged_by(each: object) -> str:
        # A function's module, or for a record of functions (a Biller) the module of its functions.
        if hasattr(each, "__qualname__"):
            return str(each.__module__)
        return next(str(v.__module__) for v in vars(each).values() if hasattr(v, "__qualname__"))

    plugged = {
        seam.name: {plugged_by(each) for each in seam}
        for seam in (
            BILLER,
            ORGANISATION_MADE,
            MISSED,
            PAYABLE_AGAIN,
            READY,
            ELSEWHERE,
            ASK_ADDITIONS,
            FACT_FLAGS,
            SKILL_PROVIDERS,
            WAITING,
            WAITING_FOR,
        )
    }
    assert plugged == {
        "biller": {"usage.metering"},
        "organisation made": {"usage.models"},
        "missed question": {"usage.misses"},
        "payable again": {"memory.apps"},
        "ready document": {"memory.graph.learning"},
        "vectors kept elsewhere": {"contacts.services"},
        "ask additions": {"registers.ask"},
        "fact flags": {"registers.ask"},
        "skill providers": {"skills.mcp_tools"},
        "waiting work": {"skills.waiting", "registers.waiting", "contacts.waiting", "memory.documents.selectors"},
        "work waiting for one person": {"memory.documents.stewardship", "skills.waiting"},
    }


def test_reaching_inside_the_extraction_layer_is_caught():
    assert reaches_inside("registers.commitments.extraction", "memory.extraction.sentences")
    assert reaches_inside("memory.documents.source", "memory.extraction.blocks")
    assert reaches_inside("memory.extraction.sentences", "memory.extraction.dates") is None
    assert reaches_inside("memory.documents.source", "memory.extraction") is None
    assert reaches_inside("memory.documents.source", "memory.extraction.lines") is None
