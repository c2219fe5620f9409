"""Changes, conflicts and verdict evidence as an assistant reads them over MCP: lookup_values totals
one current value per entity and says where values conflict; list_contradictions names every
statement of one thing; list_commitments names the passages a verdict rests on."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from conftest import make_actor, make_org, make_token
from memory.tests.factories import save
from registers.nightly import run_nightly
from registers.tests.helpers import switch_on
from tests.conftest import call

pytestmark = pytest.mark.django_db(transaction=True)


def on(month: int, day: int) -> datetime:
    return datetime(2025, month, day, 9, tzinfo=UTC)


@pytest.fixture
def deals():
    org = make_org()
    actor = make_actor(org)
    save(actor, "Pipeline review", "The Northwind deal is worth $40k.", occurred_at=on(1, 6))
    save(actor, "Contoso notes", "The Contoso deal is worth $30k.", occurred_at=on(1, 7))
    save(actor, "Baltic notes", "The Baltic deal is worth $20k.", occurred_at=on(1, 7))
    save(actor, "Baltic update", "The Baltic deal is now worth $25k.", occurred_at=on(1, 8))  # an update: supersedes
    save(actor, "CRM export", "The Northwind deal is worth $45k.", occurred_at=on(1, 9))  # another source disagrees
    return actor, make_token(org).plaintext


def test_lookup_values_totals_one_current_value_per_entity_and_says_which_conflict(brain_url, deals):
    actor, token = deals
    answer = call(brain_url, token, "lookup_values", {"key": "deal_value"})
    assert not answer.is_error, answer.content[0].text
    out = answer.structured_content
    assert out["total"] == 45000 + 30000 + 25000  # Northwind's latest stated once; Baltic's superseded 20k never
    assert 20000 not in [v["number"] for v in out["values"]]
    [conflict] = out["conflicts"]
    assert "Northwind" in conflict["entity"]["name"]
    assert [v["number"] for v in conflict["values"]] == [45000, 40000]
    text = answer.content[0].text
    assert "Values conflict for Northwind" in text
    assert "not in the total" in text
    switch_on(actor.org, "contradictions")
    run_nightly(actor.org)
    again = call(brain_url, token, "lookup_values", {"key": "deal_value"}).structured_content
    [conflict] = again["conflicts"]
    assert conflict["contradiction_ids"][0].startswith("ctr_")


def test_list_contradictions_names_every_statement_of_one_thing(brain_url):
    org = make_org()
    actor = make_actor(org)
    switch_on(org, "contradictions")
    save(actor, "Price list", "The Enterprise plan costs $40k a year.", occurred_at=on(1, 6))
    save(actor, "Sales deck", "The Enterprise plan is $45k per year.", occurred_at=on(1, 8))
    save(actor, "Board pack", "Enterprise plan price: $50k.", occurred_at=on(1, 9))
    run_nightly(org)
    token = make_token(org).plaintext
    answer = call(brain_url, token, "list_contradictions", {})
    [entry] = answer.structured_content["contradictions"]
    assert len(entry["more"]) == 1
    lines = answer.content[0].text.splitlines()
    assert [line.split(":")[0].strip() for line in lines if line.startswith("  ") and ": " in line][1:] == [
        "a", "b", "c"
    ]  # fmt: skip
    settled = call(brain_url, token, "answer_contradiction", {"id": entry["id"], "answer": "c", "note": "Board pack"})
    assert "a and b are superseded in memory" in settled.content[0].text


def test_list_commitments_names_the_passages_a_verdict_rests_on(brain_url, settings):
    settings.BRAIN_EXTRACT_FACTS = False
    org = make_org()
    actor = make_actor(org)
    switch_on(org, "commitments")
    meeting = "Priya: Thanks all. I'll send the revised quote to BigCo by Friday.\n\nSam: Sounds good."
    save(actor, "BigCo meeting", meeting, occurred_at=datetime(2026, 3, 2, 10, tzinfo=UTC), source_kind="transcript")
    reply = save(
        actor,
        "sales 05 Mar",
        "Priya: Yes, the revised quote for BigCo went out this morning.",
        speaker="Priya",
        conversation="sales",
        occurred_at=datetime(2026, 3, 5, 9, tzinfo=UTC),
        source_kind="slack",
    )
    run_nightly(org)
    answer = call(brain_url, make_token(org).plaintext, "list_commitments", {})
    [entry] = answer.structured_content["commitments"]
    passage = reply.chunks.get().public_id
    assert [e["id"] for e in entry["evidence"]] == [passage]
    assert (
        f"  evidence: {passage} in sales 05 Mar ({reply.public_id}), 2026-03-05: "
        "Yes, the revised quote for BigCo went out this morning."
    ) in answer.content[0].text.splitlines()
