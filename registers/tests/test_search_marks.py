"""The search page marks a fact that an open contradiction is about, and links the contradiction."""

from __future__ import annotations

from django.test import Client

from brain.core.actors import Actor
from memory.extraction.shapes import ExtractedValue
from memory.graph.writes import FactDraft, record_facts
from memory.models import Fact
from memory.tests.factories import save
from registers.contradictions.services import raise_contradiction
from registers.tests.helpers import switch_on


def stated(actor: Actor, title: str, statement: str, number: float) -> Fact:
    """A searchable document stating one price of the Enterprise plan."""
    document = save(actor, title, statement)
    draft = FactDraft(
        statement=statement,
        subject="Enterprise plan",
        single_valued=True,
        values=[ExtractedValue("price", number=number, unit="USD")],
    )
    return record_facts(document=document, drafts=[draft])[0]


def test_search_marks_a_disputed_fact_and_links_its_contradiction(actor):
    switch_on(actor.org, "contradictions")
    low = stated(actor, "Price list", "The Enterprise plan costs 49 USD a seat.", 49)
    high = stated(actor, "Sales mail", "The Enterprise plan costs 59 USD a seat.", 59)
    entry = raise_contradiction(
        actor=actor,
        question="Which price is right?",
        about="Enterprise plan price",
        claim_a=low.statement,
        source_a="Price list",
        claim_b=high.statement,
        source_b="Sales mail",
        memory_id_a=low.public_id,
        memory_id_b=high.public_id,
    )
    client = Client()
    client.force_login(actor.user)
    page = client.get("/memory/search/", {"q": "Enterprise plan costs"}).content.decode()
    assert "badge-disputed" in page
    assert f'href="/registers/#{entry.public_id}"' in page
    registers = client.get("/registers/").content.decode()
    assert f'id="{entry.public_id}"' in registers
