"""The nightly scan over values read from documents: one thing stated three ways is one entry with
the three statements, and a value is never set against itself."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memory.tests.factories import save
from registers.contradictions.nightly import scan_contradictions
from registers.contradictions.services import list_contradictions, statements
from registers.tests.helpers import switch_on

pytestmark = pytest.mark.django_db


def said(actor, title: str, text: str, day: int) -> None:
    save(actor, title, text, occurred_at=datetime(2025, 11, day, 9, 0, tzinfo=UTC))


def test_a_price_stated_three_ways_is_one_contradiction_with_all_three_statements(actor):
    switch_on(actor.org, "contradictions")
    said(actor, "Price list", "The Team plan costs 25 EUR a month.", 3)
    said(actor, "Sales deck", "The Team plan costs 29 EUR a month.", 4)
    said(actor, "Pricing mail", "The Team plan costs 27 EUR a month.", 5)
    scan_contradictions(actor.org)
    [entry] = list_contradictions(actor=actor)
    claims = sorted(f.statement for f in statements(entry).values() if f is not None)
    assert claims == [
        "The Team plan costs 25 EUR a month.",
        "The Team plan costs 27 EUR a month.",
        "The Team plan costs 29 EUR a month.",
    ]


def test_the_same_amount_or_the_same_date_in_other_words_is_no_contradiction(actor):
    switch_on(actor.org, "contradictions")
    said(actor, "Price list", "The Team plan costs 29 EUR a month.", 3)
    said(actor, "Sales deck", "The Team plan costs EUR 29 a month.", 4)
    said(actor, "Stand-up", "The Lisbon office opens on 12 December.", 5)
    said(actor, "Chat", "The Lisbon office opens on December 12th.", 6)
    assert scan_contradictions(actor.org) == 0
    assert list_contradictions(actor=actor) == []


def test_the_same_price_in_two_tables_is_no_contradiction_and_a_different_one_is(actor):
    switch_on(actor.org, "contradictions")
    table = "| Plan | Price per seat |\n| --- | --- |\n| Team | {} |\n"
    save(actor, "Pricing", table.format("29 EUR"), content_type="text/markdown")
    save(actor, "Old pricing", table.format("EUR 29"), content_type="text/markdown")
    assert scan_contradictions(actor.org) == 0
    save(actor, "Reseller pricing", table.format("25 EUR"), content_type="text/markdown")
    scan_contradictions(actor.org)
    [entry] = list_contradictions(actor=actor)
    assert {entry.claim_a, entry.claim_b, *(s["claim"] for s in entry.more)} >= {
        "Team: Price per seat: 29 EUR.",
        "Team: Price per seat: 25 EUR.",
    }
