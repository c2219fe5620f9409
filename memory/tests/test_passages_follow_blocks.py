"""The answering passage inside the right page: passages follow a document's blocks, the heading path
is matched, the passage shown for a page is the one whose words answer, and its snippet is the row
or sentence that matched. Saved through add_document, ingested, searched as search_company_memory
searches."""

import pytest

from memory.mcp_tools.documents import snippet
from memory.models import Chunk, Document
from memory.search.passages import Hit, _best_of_each_document, search_chunks
from memory.tests.factories import save

pytestmark = pytest.mark.django_db

ROTA = """# Support rota

Everyone on the support team works a shift of eight hours, spread over the day.

## Working hours

| Person | Local hours | UTC hours |
|--------|-------------|-----------|
| Aino | 9am-5pm | 07:00-15:00 |
| Bruno | 10am-6pm | 15:00-23:00 |
| Chidi | 8am-4pm | 23:00-07:00 |
| Dana | 9am-5pm | 12:00-20:00 |

## Time off

If you are going to be out of the office, you find a teammate to take over your queue before
you leave, and you say who it is in the team channel.
"""

PLANS = """# Plans

Every plan is billed monthly and can be cancelled at any time.

| Plan | Price per seat | Seats up to |
|------|----------------|-------------|
| Starter | 9 EUR | 5 |
| Team | 29 EUR | 50 |
| Business | 49 EUR | 500 |
"""

LEAVE = """# Benefits

## Parental leave

You get sixteen weeks, fully paid, to be taken within the child's first year.

## Sick days

Ten days a year, no doctor's note needed for the first three.
"""


def page_hit(actor, query: str, document: Document) -> Hit:
    """The passage search_company_memory shows for ``document`` (one hit a document)."""
    hits = search_chunks(actor=actor, query=query, top_k=5, mode="auto", per_document=True).hits
    return next(hit for hit in hits if hit.document_id == document.pk)


def test_a_tables_rows_are_passages_together_each_row_a_line_said_with_its_header(actor):
    page = save(actor, "Plans", PLANS, content_type="text/markdown", source_kind="wiki")
    texts = list(Chunk.objects.filter(document=page).order_by("ordinal").values_list("text", flat=True))
    assert texts == [
        "Every plan is billed monthly and can be cancelled at any time.",
        "Starter: Price per seat: 9 EUR; Seats up to: 5.\n"
        "Team: Price per seat: 29 EUR; Seats up to: 50.\n"
        "Business: Price per seat: 49 EUR; Seats up to: 500.",
    ]


def test_a_question_about_one_cell_finds_its_row_and_the_snippet_shows_that_row_whole(actor):
    page = save(actor, "Plans", PLANS, content_type="text/markdown", source_kind="wiki")
    query = "How much is a seat on the Business plan?"
    hit = page_hit(actor, query, page)
    assert "Business: Price per seat: 49 EUR" in hit.text
    # The row that matched, whole; an ellipsis stands for the rows left out.
    assert snippet(hit.text, query, limit=60) == "…Business: Price per seat: 49 EUR; Seats up to: 500."


def test_inside_a_page_the_passage_that_holds_the_questions_words_is_shown_not_a_short_row(actor):
    page = save(actor, "Support rota", ROTA, content_type="text/markdown", source_kind="wiki")
    hit = page_hit(actor, "Who takes over my queue while I am out of the office?", page)
    assert "find a teammate to take over your queue" in hit.text


def test_the_heading_path_is_matched_without_being_shown_as_the_passages_words(actor):
    page = save(actor, "Benefits", LEAVE, content_type="text/markdown", source_kind="wiki")
    hit = page_hit(actor, "How long is parental leave?", page)
    assert hit.text.startswith("You get sixteen weeks")
    assert hit.heading == "Benefits > Parental leave"
    assert "Parental leave" not in snippet(hit.text, "How long is parental leave?")


WHATSAPP = """12/01/2024, 09:02 - Priya Shah: the Lisbon kickoff moves to 12 May
12/01/2024, 09:03 - Sam Okoro: lol
12/01/2024, 09:04 - Anna Berg: 👍
12/01/2024, 09:05 - Sam Okoro: then I book the flights for the 11th
12/01/2024, 09:06 - Anna Berg: haha nice
"""


def test_chat_turns_with_nothing_of_their_own_are_no_passages_of_their_own(org, load_file):
    reader, _ = load_file("WhatsApp Chat with Sam.txt", WHATSAPP)
    day = Document.objects.get(org=org, session="2024-01-12")
    passages = list(Chunk.objects.filter(document=day).order_by("ordinal").values_list("speaker", "text"))
    assert [speaker for speaker, _ in passages] == ["Priya Shah", "Sam Okoro"]
    assert "lol" in passages[0][1]  # beside the turn it answers
    assert "👍" in passages[0][1]
    assert "haha nice" in passages[1][1]
    hits = search_chunks(actor=reader, query="Who books the flights?", top_k=5, per_document=True).hits
    assert "book the flights" in hits[0].text


AGENDA = """# Design team meeting agenda

Meeting date: 2025-11-04

## Scheduled meetings

- November 11: colour tokens review
- November 18: icon set check-in
- November 25: open backlog session
- Let's skip December 30 (most of the team is away)
"""


def test_a_short_passage_that_matches_by_the_pages_title_does_not_stand_for_the_page(actor):
    page = save(actor, "Design team meeting agenda", AGENDA, content_type="text/markdown", source_kind="wiki")
    question = "Is there a design team meeting on December 30?"
    hit = page_hit(actor, question, page)
    assert "Let's skip December 30" in hit.text
    # Even when the fused order puts the date line first (it shares the title's words), the
    # passage shown for the page is the one holding the question's own words.
    date_line, agenda = Chunk.objects.filter(document=page).order_by("ordinal").values_list("id", flat=True)
    assert _best_of_each_document([date_line, agenda], question) == ([agenda], {agenda: 1})
