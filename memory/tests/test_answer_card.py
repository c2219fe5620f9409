"""The answer card: the line that answers, its source and date, the sources that say otherwise,
and nothing claimed where nothing answers; the search page and ask_company_memory agree."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime

import pytest
from django.test import Client

from brain.core.actors import Actor
from memory.mcp_tools.ask import AskArgs, ask_company_memory_tool
from memory.mcp_tools.documents import SearchArgs, search_company_memory_tool
from memory.search.answer import answer_card, asked_for
from memory.tests.factories import save

PRICING = """# Plans and pricing

| Plan | Price per seat | Seats up to |
|---|---|---|
| Starter | 12 EUR per seat a month | 10 |
| Team | 29 EUR per seat a month | 50 |
| Enterprise | on request | unlimited |
"""


@dataclass(frozen=True)
class Passage:
    chunk_id: int
    document_id: int
    title: str
    text: str
    heading: str = ""
    speaker: str = ""


def day(n: int) -> datetime:
    return datetime(2026, 3, n, 9, tzinfo=UTC)


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("How much does the Team plan cost?", "money"),
        ("When does the pilot start?", "date"),
        ("Who is the CISO?", "person"),
        ("How many seats does Team allow?", "count"),
        ("How long is the notice period?", "duration"),
        ("Where is the offsite?", "place"),
        ("What is our refund policy?", "any"),
    ],
)
def test_a_question_says_what_kind_of_value_it_asks_for(question, kind):
    assert asked_for(question) == kind


def test_the_card_gives_the_value_with_its_words_and_the_sentence_it_rests_on():
    passages = [
        Passage(1, 10, "Plans and pricing", "Team: Price per seat: 29 EUR per seat a month; Seats up to: 50."),
        Passage(2, 11, "Onboarding", "Every new team member gets a buddy for the first month."),
    ]
    card = answer_card("How much does the Team plan cost?", passages, [day(1), day(2)])
    assert card.status == "answered"
    assert card.line == "29 EUR per seat a month"
    assert card.answer is not None
    assert card.answer.document_id == 10
    assert card.answer.sentence.startswith("Team: Price per seat")
    assert card.answer.when == day(1)
    assert card.others == []


def test_a_later_source_giving_another_value_is_shown_with_its_date():
    passages = [
        Passage(1, 10, "Plans and pricing", "Team: Price per seat: 29 EUR per seat a month."),
        Passage(2, 11, "Sales chat", "Heads up: the Team plan price is 25 EUR per seat from April.", speaker="Ana"),
    ]
    card = answer_card("How much does the Team plan cost?", passages, [day(1), day(20)])
    assert card.status == "disputed"
    assert card.answer is not None
    assert {card.answer.value, *(o.value for o in card.others)} == {"29 EUR", "25 EUR"}
    assert card.later or card.answer.when == day(20)  # whichever leads, the later one is marked or leads


def test_the_same_value_written_another_way_is_no_dispute():
    passages = [
        Passage(1, 10, "Billing", "First invoice date: 1 February 2026."),
        Passage(2, 11, "Chat", "First invoice goes out Feb 1", speaker="Tom"),
    ]
    card = answer_card("When is the first invoice dated?", passages, [day(1), day(2)])
    assert card.status == "answered"
    assert card.others == []


def test_nothing_found_is_said_plainly_and_a_passage_without_the_value_is_only_the_closest():
    assert answer_card("How much does the Team plan cost?", [], []).status == "nothing"
    passages = [Passage(1, 10, "Plans", "The Team plan suits companies of twenty to fifty people.")]
    card = answer_card("How much does the Team plan cost?", passages, [day(1)])
    assert card.status == "closest"
    assert card.line


def test_a_passage_sharing_one_word_of_many_claims_nothing():
    passages = [Passage(1, 10, "Sessions", "Session lifetime: 14 days, renewed on every request.")]
    card = answer_card("What is the half-life of carbon-14?", passages, [day(1)])
    assert card.status not in ("answered", "disputed")


def test_a_who_question_about_a_chat_turn_names_who_said_it():
    passages = [Passage(1, 10, "#ops", "I can take the load test on Tuesday myself.", speaker="Kenji")]
    card = answer_card("Who offered to take the load test?", passages, [day(1)])
    assert card.status == "answered"
    assert card.line == "Kenji"


# --- against the database: the page and the tool -------------------------------------------------------


def client_for(actor: Actor) -> Client:
    client = Client()
    client.force_login(actor.user)
    return client


@pytest.mark.django_db
def test_the_page_and_ask_company_memory_give_the_same_card_and_both_dates(actor):
    save(actor, "Plans and pricing", PRICING, content_type="text/markdown", occurred_at=day(1))
    save(actor, "Sales chat", "Heads up: the Team plan is 25 EUR per seat now.", speaker="Ana", occurred_at=day(20))
    question = "How much does the Team plan cost?"
    out = ask_company_memory_tool(actor, AskArgs(question=question))
    assert out.answer is not None
    assert out.answer.status == "disputed"
    assert out.answer.answer is not None
    values = {out.answer.answer.value, *(o.value for o in out.answer.others)}
    assert values == {"29 EUR", "25 EUR"}
    assert "Answer card:" in out.to_text()
    assert "another source says" in out.to_text()
    page = client_for(actor).get("/memory/search/", {"q": question}).content.decode()
    assert f'<p class="answer-line">{out.answer.line}</p>' in page
    assert "Another source says otherwise" in page
    assert "2026-03-01" in page
    assert "2026-03-20" in page


@pytest.mark.django_db
def test_results_end_where_the_evidence_ends_and_an_unrelated_question_gets_no_card(actor):
    save(actor, "Plans and pricing", PRICING, content_type="text/markdown")
    save(actor, "Lunch", "The canteen serves soup on Mondays and curry on Thursdays.")
    save(actor, "Bikes", "Bicycles go in the basement rack; the code is on the intranet.")
    found = search_company_memory_tool(actor, SearchArgs(query="How much does the Team plan cost?", top_k=20))
    assert [hit.title for hit in found.hits] == ["Plans and pricing"]
    page = client_for(actor).get("/memory/search/", {"q": "boiling point of tungsten in kelvin"}).content.decode()
    assert 'class="answer-card' not in page
    assert "Nothing in memory matches this" in page


@pytest.mark.django_db
def test_a_passage_said_again_in_another_document_is_folded_into_the_first(actor):
    rule = "The VPN certificate must be renewed every 90 days by the platform team."
    first = save(actor, "Security rules", rule)
    copy = save(actor, "Fwd: security rules", rule, conversation="mail")
    found = search_company_memory_tool(actor, SearchArgs(query="How often is the VPN certificate renewed?", top_k=20))
    assert len(found.hits) == 1
    assert {found.hits[0].document_id, *found.hits[0].also_in} == {first.public_id, copy.public_id}
    assert "[the same in" in found.to_text()


@pytest.mark.django_db
def test_chat_turns_without_content_of_their_own_never_outrank_the_page_that_answers(actor):
    page = save(
        actor,
        "Onboarding",
        "# Onboarding\n\nEvery new starter gets an onboarding buddy from their own team for the first month. "
        "The buddy books a coffee on day one and answers the questions nobody writes down.",
        content_type="text/markdown",
    )
    at = datetime(2026, 3, 3, 10, tzinfo=UTC)
    for n, text in enumerate(["who is my onboarding buddy?", "lol", "😂😂", "same question here", "+1"]):
        save(actor, "#general", text, speaker=f"person{n}", occurred_at=at.replace(minute=n), conversation="#general")
    found = search_company_memory_tool(actor, SearchArgs(query="onbording buddy", top_k=20))
    assert found.hits[0].document_id == page.public_id
    for query in ("onbording buddy", "onboarding buddy", "who is my buddy"):
        found = search_company_memory_tool(actor, SearchArgs(query=query, top_k=20))
        assert page.public_id in [hit.document_id for hit in found.hits], query
        assert [hit.snippet for hit in found.hits if hit.snippet in ("lol", "😂😂", "+1", "same question here")] == []


@pytest.mark.django_db
def test_as_of_reads_the_same_way_for_the_card_of_the_page_and_of_ask(actor):
    imported = datetime(2025, 3, 1, 9, tzinfo=UTC)
    save(actor, "Price list 2025", "Team: Price per seat: 22 EUR per seat a month.", occurred_at=imported)
    question = "How much does the Team plan cost?"
    out = ask_company_memory_tool(actor, AskArgs(question=question, as_of=date(2025, 3, 11)))
    assert out.answer is not None
    assert out.answer.status == "answered"
    page = client_for(actor).get("/memory/search/", {"q": question, "as_of": "2025-03-11"}).content.decode()
    assert f'<p class="answer-line">{out.answer.line}</p>' in page
