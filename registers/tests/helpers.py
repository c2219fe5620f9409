"""Switching registers on, and facts from two sources, for the register tests."""

from __future__ import annotations

from brain.core.actors import Actor
from brain.models import Features, Organisation
from memory.extraction.shapes import ExtractedValue
from memory.graph.writes import FactDraft, record_facts
from memory.models import Document, Fact
from memory.tests.factories import save


def switch_on(org: Organisation, *names: str) -> None:
    features, _ = Features.objects.get_or_create(org=org)
    for name in names or ("commitments", "contradictions", "glossary"):
        setattr(features, name, True)
    features.save()
    org.refresh_from_db()


def stated(actor: Actor, title: str, statement: str, *, key: str = "price", number: float, **kw: object) -> Fact:
    """A document (one source) stating one single-valued value of ``subject``."""
    document = save(actor, title, statement, ingest=False, **kw)
    Document.objects.filter(pk=document.pk).update(status="ready")
    document.refresh_from_db()
    draft = FactDraft(
        statement=statement,
        subject="Enterprise plan",
        single_valued=True,
        values=[ExtractedValue(key, number=number, unit="USD")],
    )
    return record_facts(document=document, drafts=[draft])[0]
