"""The register tools through the MCP SDK client: visible only while switched on, read tools to a
read token and write tools to a write token, and the same answers over REST."""

from __future__ import annotations

import pytest
from django.test import Client

from brain.models import Features
from conftest import make_actor, make_org, make_token
from registers.tests.helpers import stated, switch_on
from tests.conftest import call, run_mcp

pytestmark = pytest.mark.django_db(transaction=True)

READS = {"list_commitments", "list_contradictions", "glossary"}
WRITES = {"record_commitment", "update_commitment", "raise_contradiction", "answer_contradiction", "define_term",
          "update_term"}  # fmt: skip


def names(url: str, token: str) -> set[str]:
    return {t.name for t in run_mcp(url, token, lambda s: s.list_tools()).tools}


def test_register_tools_appear_only_while_their_switch_is_on(brain_url):
    org = make_org()
    reader, writer = make_token(org, scopes="read").plaintext, make_token(org).plaintext
    assert not (READS | WRITES) & names(brain_url, writer)
    refused = call(brain_url, writer, "list_commitments", {})
    assert refused.is_error
    assert "switched off" in refused.content[0].text
    switch_on(org, "commitments")
    assert (READS | WRITES) & names(brain_url, reader) == {"list_commitments"}
    assert (READS | WRITES) & names(brain_url, writer) == {"list_commitments", "record_commitment", "update_commitment"}
    switch_on(org)
    assert (READS | WRITES) & names(brain_url, reader) == READS
    assert (READS | WRITES) & names(brain_url, writer) == READS | WRITES
    Features.objects.filter(org=org).update(glossary=False)
    assert "glossary" not in names(brain_url, reader)


def test_a_promise_recorded_listed_and_settled_over_mcp(brain_url):
    org = make_org()
    switch_on(org, "commitments")
    token = make_token(org).plaintext
    promise = {"owner": "Priya", "what": "Priya will send the quote", "due_on": "2031-01-09"}
    promise["from"] = "a call with Baltic"
    recorded = call(brain_url, token, "record_commitment", promise)
    assert not recorded.is_error, recorded.content[0].text
    entry = recorded.structured_content["commitment"]
    assert (entry["owner"], entry["due_on"], entry["made_in"]) == ("Priya", "2031-01-09", "a call with Baltic")
    bad_day = call(brain_url, token, "record_commitment", {"owner": "Sam", "what": "x", "due_on": "9 Jan 2031"})
    assert bad_day.is_error
    assert "YYYY-MM-DD" in bad_day.content[0].text
    answer = call(brain_url, token, "list_commitments", {})
    listed = answer.structured_content["commitments"]
    assert [c["id"] for c in listed] == [entry["id"]]
    assert answer.content[0].text.splitlines()[:3] == [  # lines a model reads, ids kept, not JSON
        "1 commitment:",
        f"{entry['id']}: Priya: Priya will send the quote (open, due 2031-01-09; promised {entry['promised_on']})",
        "  made in: a call with Baltic",
    ]
    refused = call(brain_url, token, "update_commitment", {"id": entry["id"], "status": "done"})
    assert refused.is_error
    assert "needs a note" in refused.content[0].text
    done = call(brain_url, token, "update_commitment", {"id": entry["id"], "status": "done", "note": "CRM shows it"})
    assert done.structured_content["commitment"]["state"] == "landed"
    unknown = call(brain_url, token, "update_commitment", {"id": "cmt_424242", "status": "open"})
    assert unknown.is_error
    assert "No commitment" in unknown.content[0].text


def test_a_price_contradiction_answered_over_mcp_supersedes_the_other_statement(brain_url, settings):
    settings.BRAIN_EXTRACT_FACTS = False
    org = make_org()
    switch_on(org, "contradictions")
    issued = make_token(org)
    actor = make_actor(org, issued.token.user)
    a = stated(actor, "Price list", "The enterprise plan costs 48500 USD a year.", number=48500)
    b = stated(actor, "Sales deck", "The enterprise plan costs 52000 USD a year.", number=52000)
    raised = call(
        brain_url,
        issued.plaintext,
        "raise_contradiction",
        {
            "question": "Is the enterprise plan 48500 or 52000 USD?",
            "about": "enterprise plan price",
            "claim_a": a.statement,
            "source_a": "price list",
            "claim_b": b.statement,
            "source_b": "sales deck",
            "memory_id_a": a.public_id,
            "memory_id_b": b.public_id,
            "severity": "high",
        },
    )
    entry = raised.structured_content["contradiction"]
    asked = call(
        brain_url,
        issued.plaintext,
        "ask_company_memory",
        {"question": "How much is the enterprise plan?", "risk_level": "high"},
    )
    assert [c["id"] for c in asked.structured_content["open_contradictions"]] == [entry["id"]]
    answered = call(
        brain_url,
        issued.plaintext,
        "answer_contradiction",
        {"id": entry["id"], "answer": "a", "note": "Billing system shows 48500."},
    )
    assert answered.structured_content["contradiction"]["state"] == "resolved"
    facts = call(brain_url, issued.plaintext, "search_facts", {"query": "enterprise plan costs"}).structured_content
    statements = [f["statement"] for f in facts["facts"]]
    assert a.statement in statements
    assert b.statement not in statements
    timeline = call(brain_url, issued.plaintext, "memory_timeline", {"entity": "Enterprise plan"}).structured_content
    assert [f["superseded_by"] for f in timeline["facts"] if f["statement"] == b.statement] == [a.public_id]


def test_the_glossary_over_rest_and_its_definitions_in_ask(brain_url, settings):
    org = make_org()
    switch_on(org, "glossary")
    token = make_token(org).plaintext
    client = Client(headers={"Authorization": f"Bearer {token}"})
    made = client.post(
        "/api/v1/glossary/define",
        {"term": "MID", "definition": "The acquirer's merchant id."},
        content_type="application/json",
    )
    assert made.status_code == 200, made.content
    term_id = made.json()["term"]["id"]
    listed = client.get("/api/v1/glossary", {"term": "mid"}).json()["terms"]
    assert [t["id"] for t in listed] == [term_id]
    asked = call(brain_url, token, "ask_company_memory", {"question": "What is our MID with Adyen?"})
    assert asked.structured_content["definitions"][0]["term"] == "MID"
    bad = client.post(f"/api/v1/glossary/{term_id}", {"state": "gone"}, content_type="application/json")
    assert bad.status_code == 400
    assert "must be one of" in bad.json()["message"]
    reopened = client.post(f"/api/v1/glossary/{term_id}", {"state": "open"}, content_type="application/json")
    assert reopened.json()["term"]["state"] == "open"
    off = Client(headers={"Authorization": f"Bearer {token}"})
    Features.objects.filter(org=org).update(glossary=False)
    assert off.get("/api/v1/glossary").status_code == 403


def test_raising_a_pair_already_on_the_register_answers_with_that_entry_over_mcp_and_rest(brain_url, settings):
    settings.BRAIN_EXTRACT_FACTS = False
    org = make_org()
    switch_on(org, "contradictions")
    issued = make_token(org)
    actor = make_actor(org, issued.token.user)
    a = stated(actor, "Price list", "The team plan costs 900 USD a year.", number=900)
    b = stated(actor, "Sales deck", "The team plan costs 950 USD a year.", number=950)
    pair = {
        "question": "Is the team plan 900 or 950 USD?", "about": "team plan price", "claim_a": a.statement,
        "source_a": "price list", "claim_b": b.statement, "source_b": "sales deck",
        "memory_id_a": a.public_id, "memory_id_b": b.public_id,
    }  # fmt: skip
    first = call(brain_url, issued.plaintext, "raise_contradiction", pair)
    assert not first.is_error
    assert first.structured_content["already_existed"] is False
    entry = first.structured_content["contradiction"]["id"]
    swapped = {**pair, "memory_id_a": b.public_id, "memory_id_b": a.public_id, "claim_a": b.statement,
               "claim_b": a.statement}  # fmt: skip
    again = call(brain_url, issued.plaintext, "raise_contradiction", swapped)
    assert not again.is_error, again.content[0].text
    assert again.structured_content["already_existed"] is True
    assert again.structured_content["contradiction"]["id"] == entry
    assert f"already on the register as {entry}" in again.structured_content["message"]

    client = Client(headers={"Authorization": f"Bearer {issued.plaintext}"})
    over_rest = client.post("/api/v1/contradictions/raise", pair, content_type="application/json")
    assert over_rest.status_code == 200, over_rest.content
    assert over_rest.json()["already_existed"] is True
    assert over_rest.json()["contradiction"]["id"] == entry
