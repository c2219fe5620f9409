"""Documents read once into blocks at ingestion, kept with their offsets, and read back by every
later stage; the files a user uploads (a markdown page with a table, a PDF, an .eml) and a mail
pasted as text, each through ``add_document`` and the ingestion task."""

from __future__ import annotations

import re
from datetime import date
from pathlib import Path
from unittest import mock

import pytest
from django.test import Client

from brain.core.actors import Actor
from memory.documents.ingestion import ingest_documents
from memory.documents.saving import add_document
from memory.documents.source import blocks_of, read_source
from memory.extraction import Kind, parse_file
from memory.graph.document_facts import extract_document
from memory.models import Chunk, Document, DocumentBlock, Fact
from memory.tests.factories import save
from registers.models import Commitment
from registers.nightly import run_nightly
from registers.repair import rederive_document
from registers.tests.helpers import switch_on

pytestmark = pytest.mark.django_db

FIXTURES = Path(__file__).resolve().parent / "fixtures"
TABLE_SYNTAX = re.compile(r"\|\s*[-:]{3,}|\|.*\|")


def uploaded(actor: Actor, name: str) -> Document:
    """A fixture file read as an upload reads it, saved and ingested."""
    [parsed] = parse_file(FIXTURES / name)
    return save(
        actor,
        parsed.title,
        parsed.content,
        content_type=parsed.content_type,
        source_kind=parsed.source_kind,
        external_id=parsed.external_id,
        metadata=parsed.metadata,
        occurred_at=parsed.occurred_at,
        speaker=parsed.speaker,
        conversation=parsed.conversation,
    )


def kinds(document: Document) -> list[str]:
    return list(DocumentBlock.objects.filter(document=document).order_by("position").values_list("kind", flat=True))


def statements(document: Document) -> list[str]:
    return list(Fact.objects.filter(document=document).values_list("statement", flat=True))


def page_of(actor: Actor, document: Document) -> str:
    client = Client()
    client.force_login(actor.user)
    html = client.get(f"/memory/documents/{document.pk}/").content.decode()
    return html[html.index("<h2>Text</h2>") : html.index("<h2>Passages</h2>")]


# --- blocks kept at ingestion -------------------------------------------------------------------


def test_ingestion_keeps_the_blocks_with_their_offsets_and_heading_path(actor):
    document = uploaded(actor, "pricing.md")
    rows = list(DocumentBlock.objects.filter(document=document).order_by("position"))
    assert [r.kind for r in rows] == [
        "heading", "paragraph", "meta", "row", "row", "row", "heading", "paragraph", "lead", "item", "item", "quote",
        "code",
    ]  # fmt: skip
    team = next(r for r in rows if r.kind == "row" and r.data["cells"][0] == "Team")
    assert document.content[team.char_start : team.char_end] == "| Team | 29 EUR | 50 |"
    assert team.path == ["Pricing and support"]
    assert team.data["header"] == ["Plan", "Price per seat", "Seats up to"]
    item = next(r for r in rows if r.kind == "item")
    assert item.path == ["Pricing and support", "Support"]
    assert item.data["lead"] == "Tech leads are responsible for:"


def test_later_stages_read_the_kept_blocks_without_parsing_again(actor):
    document = uploaded(actor, "pricing.md")
    facts_before = sorted(statements(document))
    parsing = AssertionError("parsed again")
    with (
        mock.patch("memory.documents.source.read_blocks", side_effect=parsing),
        mock.patch("memory.documents.chunking.read_blocks", side_effect=parsing),
    ):
        kept = blocks_of(document)
        extract_document(document_id=document.pk)
    assert kept is not None
    assert [b.kind for b in kept][:3] == [Kind.HEADING, Kind.PARAGRAPH, Kind.META]
    assert sorted(statements(document)) == facts_before


def test_ingesting_again_rebuilds_the_blocks_instead_of_adding_to_them(actor):
    document = uploaded(actor, "pricing.md")
    before = kinds(document)
    Document.objects.filter(pk=document.pk).update(status=Document.Status.QUEUED)
    assert ingest_documents(document_ids=[document.pk]) == {document.pk: "ready"}
    assert kinds(document) == before


def test_a_document_ingested_before_blocks_were_kept_is_read_as_it_always_was(actor):
    document = uploaded(actor, "pricing.md")
    kept = blocks_of(document)
    DocumentBlock.objects.filter(document=document).delete()
    assert blocks_of(document) == kept


def test_reextract_reads_the_blocks_again_with_the_current_rules(actor):
    document = uploaded(actor, "pricing.md")
    before = kinds(document)
    DocumentBlock.objects.filter(document=document).update(kind="paragraph")  # as read by older rules
    rederive_document(actor.org, document.pk)
    assert kinds(document) == before


# --- a markdown page with a table ---------------------------------------------------------------


def test_a_table_row_is_said_with_its_header_and_nothing_carries_table_syntax(actor):
    document = uploaded(actor, "pricing.md")
    passages = list(Chunk.objects.filter(document=document).values_list("text", flat=True))
    lines = [line for passage in passages for line in passage.split("\n")]
    assert "Team: Price per seat: 29 EUR; Seats up to: 50." in lines  # a row is a line said with its header
    assert not [p for p in passages if TABLE_SYNTAX.search(p)]
    facts = statements(document)
    assert facts
    assert not [f for f in facts if TABLE_SYNTAX.search(f)]
    assert not [f for f in facts if f.rstrip().endswith(":")]  # a lead-in alone is no fact


def test_the_page_shows_the_table_as_a_table_and_the_rest_by_kind(actor):
    document = uploaded(actor, "pricing.md")
    text = page_of(actor, document)
    assert '<th scope="col">Price per seat</th>' in text
    assert "<td>Team</td><td>29 EUR</td><td>50</td>" in text
    assert "<li>reviewing every pull request before it is merged</li>" in text
    assert "<blockquote>Customers on the Enterprise plan get a named account manager.</blockquote>" in text
    assert "<pre><code>curl https://example.com/status</code></pre>" in text
    assert "<h4>Support</h4>" in text
    assert "|---" not in text
    assert "| Team |" not in text


def test_the_page_escapes_what_a_table_and_a_paragraph_say(actor):
    content = (
        "Visitors park in **bay C** <script>alert(1)</script>\n\n"
        "| Name | Note |\n|---|---|\n| <img src=x onerror=alert(1)> | a & b |\n"
    )
    document = save(actor, "Parking", content, content_type="text/markdown")
    text = page_of(actor, document)
    assert "<strong>bay C</strong>" in text
    assert "<script>" not in text
    assert "<img" not in text
    assert "&lt;script&gt;" in text
    assert "a &amp; b" in text


# --- an HTML page ------------------------------------------------------------------------------------

PAGE = """<html><head><title>Plans</title></head><body><h1>Plans</h1><p>Billed monthly, per seat.</p>
<table><tr><th>Plan</th><th>Price per seat</th></tr><tr><td>Team</td><td>29 EUR</td></tr>
<tr><td>Starter</td><td>9 EUR</td></tr></table><ul><li>Cancel at any time.</li></ul></body></html>"""


def test_an_html_pages_table_is_read_as_rows_under_its_header(actor, tmp_path):
    (tmp_path / "plans.html").write_text(PAGE)
    [parsed] = parse_file(tmp_path / "plans.html")
    document = save(actor, parsed.title, parsed.content, content_type=parsed.content_type)
    rows = [b for b in blocks_of(document) or [] if b.kind == Kind.ROW]
    assert [(b.header, b.cells) for b in rows] == [
        (("Plan", "Price per seat"), ("Team", "29 EUR")),
        (("Plan", "Price per seat"), ("Starter", "9 EUR")),
    ]
    assert "<td>Team</td><td>29 EUR</td>" in page_of(actor, document)


# --- a PDF ----------------------------------------------------------------------------------------


def test_a_pdfs_wrapped_lines_become_whole_sentences_and_its_title_line_stays_apart(actor):
    document = uploaded(actor, "minutes.pdf")
    said = [b.text for b in blocks_of(document) or [] if b.kind == Kind.PARAGRAPH]
    assert said[0] == "Minutes of the board meeting, 14 March 2026"
    assert (
        "The board approved the budget for the new warehouse in Leeds after a long discussion about the cost "
        "of the lease and the timing of the move."
    ) in said
    facts = statements(document)
    assert facts
    assert not [f for f in facts if f.rstrip(".").endswith((" a", " the", " and"))], facts
    assert not [f for f in facts if f[:1].islower()], facts


# --- mail -----------------------------------------------------------------------------------------


def test_an_eml_is_read_as_mail_its_quoted_reply_and_signature_give_no_facts(actor):
    document = uploaded(actor, "northwind-reply.eml")
    found = set(kinds(document))
    assert {"meta", "greeting", "signature", "quote", "paragraph"} <= found
    facts = statements(document)
    assert any("Lena Fischer" in f and "onboarding calls for Northwind" in f for f in facts), facts
    said = " ".join(facts)
    for structure in ("pricing sheet", "Account Director", "7946", "Hi Jonas", "wrote"):
        assert structure not in said, facts


def test_a_flowed_mails_soft_line_breaks_are_joined(actor):
    document = uploaded(actor, "northwind-reply.eml")
    assert "onboarding calls for Northwind from next week, and the kickoff workshop moves" in document.content


PASTED = """From: Marta Ruiz <marta.ruiz@kestrel.example>
To: Tom Becker <tom.becker@kestrel.example>
Date: Mon, 24 Nov 2025 09:12:40 +0100
Subject: Re: Northwind renewal quote

Hi Tom,

I'll send the revised quote to Northwind by Friday. The Lisbon office
hosts the Northwind workshop in December.

Best,
Marta

--
Marta Ruiz
Head of Sales, Kestrel

On Fri, 21 Nov 2025 at 17:03, Tom Becker wrote:
> Globex signed the renewal for three more years.
"""


def test_a_mail_pasted_as_text_is_read_as_mail(actor):
    document = add_document(actor=actor, title="Re: Northwind renewal quote", content=PASTED).document
    assert document.content_type == "text/plain"
    ingest_documents(document_ids=[document.pk])
    document.refresh_from_db()
    assert kinds(document)[0] == "meta"
    assert {"greeting", "signature", "quote"} <= set(kinds(document))
    source = read_source(document, document.content)
    assert (source.moment.origin, source.moment.day) == ("header", date(2025, 11, 24))
    assert source.fields["sender"] == "Marta Ruiz"
    facts = statements(document)
    assert any("Lisbon office hosts the Northwind workshop in December" in f for f in facts), facts
    said = " ".join(facts)
    for structure in ("Globex", "Head of Sales", "Hi Tom", "Subject", "kestrel.example"):
        assert structure not in said, facts


def test_a_promise_in_a_mail_pasted_as_text_reaches_the_register(actor, settings):
    settings.BRAIN_EXTRACT_FACTS = False
    switch_on(actor.org, "commitments")
    save(actor, "Re: Northwind renewal quote", PASTED)
    run_nightly(actor.org, only="commitments")
    [promise] = Commitment.objects.filter(org=actor.org)
    assert promise.owner_name == "Marta Ruiz"
    assert "revised quote to Northwind" in promise.what
    assert promise.promised_on == date(2025, 11, 24)
