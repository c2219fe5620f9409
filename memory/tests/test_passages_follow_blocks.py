"""The answering passage inside the right page: passages follow a document's blocks, the heading path
is matched, the passage shown for a page is the one whose words answer, and its snippet is the row
or sentence that matched. Saved through add_document, ingested, searched as search_company_memory
searches."""

from pathlib import Path

import pytest

from memory.extraction import parse_file
from memory.mcp_tools.documents import snippet
from memory.models import Chunk, Document
from memory.search.passages import Hit, _best_of_each_document, search_chunks
from memory.tests.factories import save, write_pdf

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


# --- an issue thread ------------------------------------------------------------------------------

AVATAR = '<img src="https://avatars.example/u/1?v=4" width="50">'
THREAD = f"""# [\\#7 Issue](https://github.com/acme/lantern/issues/7) `closed`: Export each ticket to its own file

#### {AVATAR}[Ines Moreau](https://github.com/imoreau) opened issue at [2024-03-02 10:15](https://github.com/acme/lantern/issues/7):

I would like to export each ticket to its own file instead of one long document. Is that possible?

#### {AVATAR}[Tariq Bell](https://github.com/tbell) commented at [2024-03-04 08:40](https://github.com/acme/lantern/issues/7#issuecomment-1):

Not yet, but it is a small change. I can get to it after the spring release, in about three weeks.

#### {AVATAR}[Ines Moreau](https://github.com/imoreau) commented at [2024-03-04 09:02](https://github.com/acme/lantern/issues/7#issuecomment-2):

Thanks, that works for me.


--------------------------------------------------------------------------------



[Export of Github issue for [acme/lantern](https://github.com/acme/lantern). Generated on 2024.04.01 at 12:00:00.]
"""
THREAD_TITLE = "Issue acme/lantern#7: Export each ticket to its own file"


def test_each_comment_of_a_thread_is_a_passage_headed_by_its_author_without_the_heading_line(actor):
    thread = save(actor, THREAD_TITLE, THREAD, source_kind="connector")
    passages = list(Chunk.objects.filter(document=thread).order_by("ordinal").values_list("heading", "text"))
    assert [heading for heading, _ in passages] == [
        "Ines Moreau, 2024-03-02",
        "Tariq Bell, 2024-03-04",
        "Ines Moreau, 2024-03-04",
    ]
    # The thread's title line stays with the post that opens it; no comment heading, avatar or
    # exporter's line is any passage's words.
    assert passages[0][1].startswith("#7 Issue closed: Export each ticket")
    said = " ".join(text for _, text in passages)
    for structure in ("<img", "####", "commented at", "Export of Github"):
        assert structure not in said
    assert passages[1][1].startswith("Not yet, but it is a small change.")


def test_a_thread_saved_as_markdown_heads_each_comment_by_its_author_under_the_threads_title(actor):
    thread = save(actor, THREAD_TITLE, THREAD, content_type="text/markdown", source_kind="upload")
    headings = list(Chunk.objects.filter(document=thread).order_by("ordinal").values_list("heading", flat=True))
    title = "#7 Issue closed: Export each ticket to its own file"
    assert headings == [
        f"{title} > Ines Moreau, 2024-03-02",
        f"{title} > Tariq Bell, 2024-03-04",
        f"{title} > Ines Moreau, 2024-03-04",
    ]


def test_the_answering_comment_is_shown_for_a_thread_not_the_post_that_repeats_its_title(actor):
    thread = save(actor, THREAD_TITLE, THREAD, source_kind="connector")
    hit = page_hit(actor, "When could the export of each ticket be done?", thread)
    assert "in about three weeks" in hit.text


# --- a PDF drawn word by word ---------------------------------------------------------------------


def word_by_word_pdf(path: Path, lines: list[str]) -> Path:
    """A PDF whose writer draws each word on its own, each line in a box of its own with the text
    turned upside down and back, as some office suites write them: pypdf returns it a word a line."""
    ops, y = [], 740
    for line in lines:
        if line:
            ops.append(f"q .75 0 0 .75 72 {y} cm")
            x = 0
            for word in line.split():
                for drawn, at in ((word, x), (" ", x + 8 * len(word))):
                    ops.append(f"BT /F1 16 Tf 1 0 0 -1 0 16 Tm {at} -15.5 Td ({drawn}) Tj ET")
                x += 8 * len(word) + 5
            ops.append("Q")
        y -= 20
    return write_pdf(path, "\n".join(ops), width=612, height=792)


def test_a_pdf_drawn_word_by_word_is_read_as_lines_and_its_sentence_is_found(actor, tmp_path):
    lines = [
        "Maintainer meeting minutes",
        "",
        "Attendees: Ines Moreau, Tariq Bell, Dana Okafor",
        "",
        "The maintainers voted unanimously to move the",
        "project to the new licence.",
        "",
        "Action items",
        "Dana Okafor to tell the steering group how the vote went.",
    ]
    [parsed] = parse_file(word_by_word_pdf(tmp_path / "minutes.pdf", lines))
    assert "The maintainers voted unanimously to move the\nproject to the new licence." in parsed.content
    minutes = save(actor, parsed.title, parsed.content, content_type=parsed.content_type, source_kind="upload")
    texts = list(Chunk.objects.filter(document=minutes).values_list("text", flat=True))
    assert not [t for t in texts if "\n" in t and max(map(len, t.split("\n"))) < 20]  # no word a line
    hit = page_hit(actor, "What did the maintainers decide about the licence?", minutes)
    assert "voted unanimously to move the project to the new licence" in hit.text


# --- a reply in mail ------------------------------------------------------------------------------

REPLY = """From: Tariq Bell <tariq@lantern.example>
To: Ines Moreau <ines@lantern.example>
Date: Tue, 5 Mar 2024 10:12:00 +0100
Subject: Re: Exports

On Mon, 4 Mar 2024, Ines Moreau wrote:
> I tried the nightly build on our archive of old tickets, about forty thousand of them
> spread over eleven years, and it stopped half way through the second year.

Thanks for trying it on something that large, Ines. Nobody had run it on more than a few
hundred tickets before, so this is the first real test it has had, and it is a useful one.
I had a look at the log you attached: the run ends at the same ticket each time, which is
what I hoped to see, since a crash that moves around would have been much harder to find.

> The log says "too many open files" just before it stops.

That one is on me: each ticket's attachments were opened and never closed again, so a large
archive runs out of file handles long before it runs out of tickets. The fix is in tonight's build.

Tariq
"""


def test_a_quoted_line_in_a_reply_shares_a_passage_with_the_answer_to_it(actor):
    reply = save(actor, "Re: Exports", REPLY, source_kind="email")
    texts = list(Chunk.objects.filter(document=reply).order_by("ordinal").values_list("text", flat=True))
    [answer] = [t for t in texts if "The fix is in tonight's build" in t]
    assert "too many open files" in answer
    hit = page_hit(actor, "Why did the export stop with too many open files?", reply)
    assert "each ticket's attachments were opened and never closed" in hit.text


RUNBOOK = """# Lantern runbook

## Restarts

Restart Lantern every night from the operations console.

## Monitoring

Lantern's dashboards are checked every night by the engineer on call.

## Backups

The whole store is copied to the vault in Oslo, and a copy older than a week is deleted.
"""


def test_a_word_most_passages_of_the_page_hold_counts_less_than_one_only_the_answer_holds(actor):
    page = save(actor, "Lantern runbook", RUNBOOK, content_type="text/markdown", source_kind="wiki")
    ids = list(Chunk.objects.filter(document=page).order_by("ordinal").values_list("id", flat=True))
    restarts, monitoring, backups = ids
    # Each passage holds two of the question's words; "Lantern" and "night", which two of the three
    # hold, tell them apart less than "copied" and "vault", which only the answer holds.
    question = "Is Lantern copied to the vault every night?"
    assert _best_of_each_document(ids, question) == ([backups], {backups: 2})
    # A word every candidate of the page holds tells them apart no better than its title.
    assert _best_of_each_document([restarts, monitoring], "When is Lantern restarted?") == ([restarts], {restarts: 1})
