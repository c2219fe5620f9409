"""The graph tools, ask_company_memory and the prompts through the MCP SDK client."""

from __future__ import annotations

from datetime import date

import pytest

from conftest import make_actor, make_org, make_token, make_user
from memory.documents.ingestion import ingest_documents
from memory.documents.saving import add_document
from memory.extraction.shapes import ExtractedValue
from memory.graph.writes import FactDraft, record_facts
from memory.models import Document, Fact
from tests.conftest import call, run_mcp

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def company(settings):
    settings.BRAIN_EXTRACT_FACTS = False  # facts below are stated explicitly; extraction has its own tests
    org = make_org()
    issued = make_token(org)
    actor = make_actor(org, issued.token.user)
    text = "Priya Shah leads support since March 2026. Escalations go to Priya within one hour."
    saved = add_document(actor=actor, title="Support handbook", content=text, source_url="https://wiki.example/support")
    ingest_documents(document_ids=[saved.document.pk])
    document = Document.objects.get(pk=saved.document.pk)
    record_facts(
        document=document,
        drafts=[
            FactDraft(
                statement="Priya Shah leads support.",
                subject="Priya Shah",
                object="Support",
                relation="leads",
                single_valued=True,
                valid_from=date(2026, 3, 1),
            ),
            FactDraft(
                statement="The Globex deal is worth 48500 USD.",
                subject="Globex deal",
                single_valued=True,
                values=[ExtractedValue("deal_value", number=48500.0, unit="USD")],
            ),
        ],
    )
    return org, issued.plaintext, actor


def test_ask_returns_evidence_claims_sources_and_an_activity(brain_url, company):
    org, token, _ = company
    result = call(
        brain_url,
        token,
        "ask_company_memory",
        {"question": "Who leads support?", "top_k": 50, "max_evidence_documents": 9, "max_claims": 0},
    )
    out = result.structured_content
    assert not result.is_error
    assert out["status"] == "evidence"
    assert out["activity_id"].startswith("act_")
    page = out["evidence"][0]
    assert page["title"] == "Support handbook"
    assert page["reference"] == "https://wiki.example/support"
    assert "Priya Shah leads support" in page["excerpt"]
    assert len(out["claims"]) == 1
    assert out["claims"][0]["statement"] == "Priya Shah leads support."
    follow = call(
        brain_url, token, "search_company_memory", {"query": "escalations", "activity_id": out["activity_id"]}
    )
    assert follow.structured_content["activity_id"] == out["activity_id"]


def test_ask_refuses_a_long_intent_and_says_when_nothing_is_found(brain_url, company):
    _, token, _ = company
    refused = call(brain_url, token, "ask_company_memory", {"question": "q", "intent": "x" * 241})
    assert refused.is_error
    assert "'intent' has 241 characters; the limit is 240" in refused.content[0].text
    fresh = make_token(make_org()).plaintext
    empty = call(brain_url, fresh, "ask_company_memory", {"question": "What is our refund policy?"})
    assert empty.structured_content["status"] == "no_evidence"
    assert "do not answer" in empty.content[0].text


def test_ask_in_graph_mode_uses_the_entities_named_and_high_risk_adds_conflicts(brain_url, company):
    org, token, actor = company
    document = Document.objects.get(org=org)
    record_facts(
        document=document,
        drafts=[
            FactDraft(
                statement="The Globex deal is worth 61000 USD after the upsell.",
                subject="Globex deal",
                single_valued=True,
                values=[ExtractedValue("deal_value", number=61000.0, unit="USD")],
            )
        ],
    )
    args = {"question": "How much is the Globex deal worth?", "retrieval_mode": "graph", "risk_level": "high",
            "response_mode": "full"}  # fmt: skip
    out = call(brain_url, token, "ask_company_memory", args).structured_content
    assert [c["statement"] for c in out["claims"]][0].startswith("The Globex deal is worth 61000")
    assert any("48500" in c["statement"] and c["superseded"] for c in out["conflicts"])
    assert out["warnings"]
    assert out["diagnostics"]["entities_named"][0]["name"] == "Globex deal"


def test_search_facts_find_entity_and_explore(brain_url, company):
    _, token, _ = company
    facts = call(brain_url, token, "search_facts", {"query": "who leads support", "limit": 99}).structured_content
    top = facts["facts"][0]
    assert top["statement"] == "Priya Shah leads support."
    assert top["subject"]["name"] == "Priya Shah"
    assert top["valid_from"] == "2026-03-01"
    assert top["superseded"] is False
    found = call(brain_url, token, "find_entity", {"name": "priya"}).structured_content["entities"]
    assert found[0]["name"] == "Priya Shah"
    assert found[0]["connections"] == 1
    explored = call(
        brain_url, token, "explore_entity", {"entity": found[0]["entity_id"], "limit": 0}
    ).structured_content
    assert explored["outgoing"][0]["object"]["name"] == "Support"
    assert explored["entity"]["name"] == "Priya Shah"
    by_name = call(brain_url, token, "explore_entity", {"entity": "Support"}).structured_content
    assert by_name["incoming"][0]["subject"]["name"] == "Priya Shah"
    missing = call(brain_url, token, "explore_entity", {"entity": "ent_999999"})
    assert missing.is_error
    assert "No entity ent_999999" in missing.content[0].text


def test_schema_recent_episodes_timeline_and_values(brain_url, company):
    _, token, _ = company
    schema = call(brain_url, token, "get_schema", {}).structured_content
    assert schema["documents"] == 1
    assert schema["facts"] == 2
    assert schema["by_source_kind"] == {"api": 1}
    episodes = call(brain_url, token, "recent_episodes", {"limit": 500}).structured_content["episodes"]
    assert episodes[0]["title"] == "Support handbook"
    assert len(episodes[0]["preview"]) <= 200
    timeline = call(brain_url, token, "memory_timeline", {"from": "2020-01-01"}).structured_content
    assert timeline["count"] == 2
    keys = call(brain_url, token, "lookup_values", {}).structured_content
    assert keys["keys"] == [{"key": "deal_value", "count": 1}]
    values = call(brain_url, token, "lookup_values", {"key": "deal_value", "min": 40000}).structured_content
    assert values["values"][0]["number"] == 48500.0
    assert values["total"] == 48500.0
    bad = call(brain_url, token, "memory_timeline", {"from": "*/5 * * * *"})
    assert bad.is_error
    assert "'from'" in bad.content[0].text


def test_remember_then_forget_and_the_rules_around_them(brain_url, company):
    org, token, actor = company
    args = {"content": "Our fiscal year starts in April.", "kind": "fact", "subject": "Fiscal year", "scope": "shared"}
    stored = call(brain_url, token, "remember", args).structured_content
    memory_id = stored["memory_id"]
    found = call(brain_url, token, "search_facts", {"query": "when does the fiscal year start"}).structured_content
    assert found["facts"][0]["memory_id"] == memory_id  # searchable at once
    corrected = call(
        brain_url, token, "remember", {"content": "Our fiscal year starts in May.", "replaces_memory_id": memory_id}
    ).structured_content
    assert Fact.objects.get(pk=int(memory_id[4:])).superseded_by_id == int(corrected["memory_id"][4:])
    colleague = make_token(org, user=make_user(org)).plaintext
    theirs = call(brain_url, colleague, "forget", {"memory_id": corrected["memory_id"]})
    assert theirs.is_error
    assert "remembered by someone else" in theirs.content[0].text
    uploaded = Fact.objects.filter(org=org, source="extracted").first()
    assert uploaded is not None
    refused = call(brain_url, token, "forget", {"memory_id": uploaded.public_id})
    assert refused.is_error
    assert "only removes what was stored with remember" in refused.content[0].text
    gone = call(brain_url, token, "forget", {"memory_id": corrected["memory_id"]})
    assert not gone.is_error
    assert gone.structured_content["in_trash_until"] is not None
    assert "in the trash until" in gone.content[0].text
    assert Fact.objects.get(pk=int(corrected["memory_id"][4:])).trashed_at is not None
    again = call(brain_url, token, "forget", {"memory_id": corrected["memory_id"]})
    assert again.is_error
    assert "No memory" in again.content[0].text


def test_personal_memories_stay_with_their_owner(brain_url, company):
    org, token, _ = company
    call(
        brain_url,
        token,
        "remember",
        {"content": "I prefer meetings after 10am.", "kind": "preference", "scope": "personal"},
    )
    colleague = make_token(org, user=make_user(org)).plaintext
    mine = call(brain_url, token, "search_facts", {"query": "meetings after 10am"}).structured_content
    theirs = call(brain_url, colleague, "search_facts", {"query": "meetings after 10am"}).structured_content
    assert mine["count"] >= 1
    assert all("10am" not in f["statement"] for f in theirs["facts"])
    other_org = make_token(make_org()).plaintext
    assert call(brain_url, other_org, "find_entity", {"name": "Priya"}).structured_content["entities"] == []


def test_read_only_tokens_cannot_remember_or_forget(brain_url, company):
    org, _, _ = company
    names = {
        t.name for t in run_mcp(brain_url, make_token(org, scopes="read").plaintext, lambda s: s.list_tools()).tools
    }
    assert "remember" not in names
    assert "forget" not in names
    assert "ask_company_memory" in names


def test_prompts_are_listed_and_gathered_server_side(brain_url, company):
    _, token, _ = company

    async def use(session):
        listed = await session.list_prompts()
        recall = await session.get_prompt("recall", {"topic": "support escalations"})
        catch_up = await session.get_prompt("catch_me_up", {})
        context = await session.get_prompt("company_context", {})
        return listed, recall, catch_up, context

    listed, recall, catch_up, context = run_mcp(brain_url, token, use)
    assert {p.name for p in listed.prompts} == {"catch_me_up", "recall", "company_context"}
    assert "Escalations go to Priya" in recall.messages[0].content.text
    assert "Support handbook" in catch_up.messages[0].content.text
    assert "Priya Shah" in context.messages[0].content.text
