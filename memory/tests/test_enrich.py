"""Extraction inside ingestion: documents become entities, facts and values; supersession follows."""

from datetime import datetime

import pytest

from memory.graph import reads as graph
from memory.models import Entity, Fact, Value
from memory.tests.factories import save

pytestmark = pytest.mark.django_db

HANDOVER = (
    "Sam Carter was head of support at BigCo Ltd from January 2025.\n\n"
    "On 3 March 2026 Priya Shah became head of support at BigCo.\n\n"
    "BigCo signed the enterprise plan for $48,500 a year."
)


def test_an_ingested_document_yields_entities_facts_and_values(actor):
    document = save(actor, "Support handover", HANDOVER, occurred_at=None)
    facts = Fact.objects.filter(document=document)
    assert facts.count() >= 2
    assert all(f.chunk_id for f in facts)
    names = set(Entity.objects.filter(org=actor.org).values_list("name", flat=True))
    assert {"Priya Shah", "Sam Carter"} <= names
    assert not {"BigCo", "BigCo Ltd"} <= names  # one entity for both spellings
    money = Value.objects.filter(org=actor.org, number=48500.0).first()
    assert money is not None
    assert money.unit == "USD"
    assert graph.search_facts(actor=actor, query="who is head of support at BigCo?", limit=3)


def test_reingesting_rebuilds_the_documents_facts_without_duplicates(actor):
    from memory.graph.document_facts import extract_document

    document = save(actor, "Support handover", HANDOVER)
    before = Fact.objects.filter(document=document).count()
    extract_document(document_id=document.pk)
    assert Fact.objects.filter(document=document).count() == before


def test_extraction_failure_leaves_the_document_searchable(actor, monkeypatch):
    def broken(**kwargs):
        raise RuntimeError("model missing")

    monkeypatch.setattr("memory.graph.document_facts.extract_document", broken)
    document = save(actor, "Notes", "Priya Shah joined BigCo in 2024.")
    assert document.status == "ready"
    assert document.chunk_count == 1


def test_entities_from_other_documents_are_linked_not_duplicated(actor):
    save(actor, "One", "Globex Corporation renewed its contract in May 2026.")
    save(actor, "Two", "Globex asked for a discount on 4 June 2026.")
    globex = [n for n in Entity.objects.filter(org=actor.org).values_list("name", flat=True) if "globex" in n.lower()]
    assert len(globex) == 1


def test_dates_come_from_date_spans_and_the_document_date_and_the_statement_stays_as_written(actor):
    from django.utils import timezone

    document = save(
        actor,
        "Plan",
        "Priya Shah will present the Zorblax roadmap next Friday.",
        occurred_at=timezone.make_aware(datetime(2026, 3, 9)),
    )
    [fact] = Fact.objects.filter(document=document)
    assert fact.statement == "Priya Shah will present the Zorblax roadmap next Friday."
    assert str(fact.valid_from) == "2026-03-13"


def test_a_role_changing_hands_in_documents_supersedes_the_previous_holder(actor):
    from memory.graph.document_facts import role_of

    assert role_of("On 3 March 2026 Priya Shah became head of support.") == ("head_of", "Support")
    assert role_of("Priya likes tea.") is None
    save(actor, "Old org chart", "Sam Carter was head of support from January 2025.")
    save(actor, "New org chart", "On 3 March 2026 Priya Shah became head of support.")
    sam = Fact.objects.get(org=actor.org, statement__startswith="Sam Carter")
    priya = Fact.objects.get(org=actor.org, statement__startswith="On 3 March")
    assert sam.superseded_by_id == priya.pk
    assert str(sam.valid_to) == "2026-03-03"
    assert priya.superseded_at is None
    assert priya.object is not None
    assert priya.object.name == "Support"
    current = [s.fact.statement for s in graph.search_facts(actor=actor, query="who is head of support", limit=5)]
    assert priya.statement in current
    assert sam.statement not in current


def test_ask_at_high_risk_shows_the_previous_holder_as_replaced(actor):
    from memory.mcp_tools.ask import AskArgs, ask_company_memory_tool

    save(actor, "Old org chart", "Sam Carter was head of support from January 2025.")
    save(actor, "New org chart", "On 3 March 2026 Priya Shah became head of support.")
    out = ask_company_memory_tool(actor, AskArgs(question="Who is head of support?", risk_level="high"))
    assert any(c.statement.startswith("On 3 March") for c in out.claims)
    assert all(not c.statement.startswith("Sam") for c in out.claims)
    assert [c.statement for c in out.conflicts or []] == ["Sam Carter was head of support from January 2025."]
    assert out.conflicts is not None
    assert out.conflicts[0].superseded
    assert out.warnings


def test_passages_are_cut_into_windows_at_passage_starts_each_within_the_limit():
    from memory.graph.document_facts import windows

    assert windows([0, 40, 80], 120, most=1000) == [(0, 120)]
    assert windows([0, 40, 80], 120, most=50) == [(0, 40), (40, 80), (80, 120)]
    assert windows([0, 40, 80], 120, most=80) == [(0, 80), (80, 120)]
    assert windows([0, 300, 320], 340, most=100) == [(0, 300), (300, 340)]  # one long passage alone


def test_a_long_document_is_extracted_a_window_at_a_time_with_what_one_parse_finds(actor, monkeypatch):
    from memory.graph import document_facts

    filler = "\n\n".join(f"Item {n} of the checklist is a routine step with no names in it." for n in range(60))
    text = f"{HANDOVER}\n\n{filler}\n\nOn 9 April 2026 Dana Ortiz joined Initech as head of sales."
    whole = save(actor, "Handover, whole", text)
    found_whole = sorted(Fact.objects.filter(document=whole).values_list("statement", flat=True))
    calls: list[int] = []
    real = document_facts._extractor

    def counting():
        extract = real()

        def counted(part, **kw):
            calls.append(len(part))
            return extract(part, **kw)

        return counted

    monkeypatch.setattr(document_facts, "EXTRACTION_WINDOW", 1000)
    monkeypatch.setattr(document_facts, "_extractor", counting)
    windowed = save(actor, "Handover, windowed", text)
    assert len(calls) > 3
    assert max(calls) <= 1000 + 200
    found_windowed = sorted(Fact.objects.filter(document=windowed).values_list("statement", flat=True))
    assert set(found_whole) <= set(found_windowed)  # nothing one parse finds is lost
    assert any("Dana Ortiz" in s for s in found_windowed)
    assert any("Priya Shah" in s for s in found_windowed)
