"""When a thing was said and who said it, through saving and ingestion: relative dates resolve
against the document's own moment, a mail's structure gives no facts, and a first person is its
speaker."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime

import pytest
from django.urls import reverse

from memory.documents.source import read_source
from memory.graph.writes import FactDraft, record_facts
from memory.mcp_tools.shapes import fact_outs
from memory.models import Document, Entity, Fact, Mention
from memory.tests.factories import said, save
from memory.web.facts import fact_row

pytestmark = pytest.mark.django_db

MAIL = """From: Marta Ruiz <marta.ruiz@kestrel.example>
To: Tom Becker <tom.becker@kestrel.example>
Date: Mon, 24 Nov 2025 09:12:40 +0100
Subject: Re: Northwind renewal quote

Hi Tom,

I will send the revised quote to Northwind by Friday.

Best,
Marta

--
Marta Ruiz | Account Manager | Kestrel Systems
Signed with Kestrel Systems since 3 March 2019.

On Fri, 21 Nov 2025 at 17:03, Tom Becker wrote:
> Globex signed the renewal on 14 November 2025 for EUR 90,000.
"""
HEADER = re.compile(r"^\s*(?:from|to|cc|date|subject)\s*:", re.I)
TURN_LABEL = re.compile(r"^\W*[A-Z][\w .'’-]{0,60}?\W*\s*\([^)]{0,40}\):")


def facts_of(document: Document) -> list[Fact]:
    return list(Fact.objects.filter(document=document).select_related("subject").order_by("pk"))


def test_a_mail_without_its_time_resolves_by_friday_against_its_date_header(actor):
    mail = save(actor, "Re: Northwind renewal quote", MAIL, source_kind="email")
    assert mail.occurred_at is None  # saved as an assistant saves a pasted mail, a year after it was sent
    [promise] = [f for f in facts_of(mail) if "revised quote" in f.statement]
    # Read against Monday 24 November 2025, not the day it was saved: the Friday of that week (which
    # Friday a deadline means is the phrase reader's rule; here it is the source's week that counts).
    assert promise.valid_to is not None
    assert abs((promise.valid_to - date(2025, 11, 24)).days) <= 7
    assert promise.statement.startswith("Marta Ruiz will send the revised quote to Northwind")
    assert promise.subject is not None
    assert promise.subject.name == "Marta Ruiz"
    assert not promise.dated_from_upload


def test_a_mails_headers_quoted_reply_signature_and_greeting_give_no_facts_but_fields(actor, client):
    mail = save(actor, "Re: Northwind renewal quote", MAIL, source_kind="email")
    fields = mail.metadata["source"]
    assert (fields["sender"], fields["recipients"], fields["subject"]) == (
        "Marta Ruiz", ["Tom Becker"], "Re: Northwind renewal quote")  # fmt: skip
    assert (fields["said_on"], fields["said_on_from"]) == ("2025-11-24", "header")
    client.force_login(actor.user)
    assert "said on 2025-11-24" in client.get(reverse("memory-document", args=[mail.pk])).content.decode()
    statements = [f.statement for f in facts_of(mail)]
    assert statements, "the body's promise is a fact"
    assert not [s for s in statements if HEADER.search(s)]
    assert not [s for s in statements if "Globex" in s or "Account Manager" in s or "Hi Tom" in s or "2019" in s]


def test_notes_titled_with_their_day_resolve_against_that_day(actor):
    notes = save(
        actor,
        "Weekly sync 2025-11-24",
        "- Aiko Tanaka will draft the holiday support schedule by Thursday.\n",
        content_type="text/markdown",
        source_kind="upload",
    )
    [fact] = facts_of(notes)
    assert fact.valid_to is not None
    assert abs((fact.valid_to - date(2025, 11, 24)).days) <= 7
    assert not fact.dated_from_upload


def test_a_chat_message_speaks_as_its_speaker_who_becomes_a_person(actor):
    at = datetime(2025, 11, 24, 9, 2, tzinfo=UTC)
    text = "I'll send the revised quote to Northwind tomorrow"
    message = said(actor, "Marta Ruiz", text, at, conversation="slack:#sales", source_kind="chat")
    [fact] = facts_of(message)
    assert fact.statement.startswith("Marta Ruiz will send the revised quote to Northwind")
    assert fact.subject is not None
    assert fact.subject.name == "Marta Ruiz"
    marta = Entity.objects.get(org=actor.org, name="Marta Ruiz")
    assert marta.type == "person"
    assert Mention.objects.filter(document=message, entity=marta).exists()


def test_a_speaker_saying_i_after_a_label_is_the_subject_and_a_plan_naming_nobody_is_kept(actor):
    at = datetime(2025, 11, 24, 9, 2, tzinfo=UTC)
    text = "Rota handover: I'm on support this week, Sam takes over next Monday"
    message = said(actor, "Aiko Tanaka", text, at, conversation="slack:#support", source_kind="chat")
    [fact] = facts_of(message)
    assert fact.subject is not None
    assert fact.subject.name == "Aiko Tanaka"
    plan = said(actor, "Marta Ruiz", "I'll prepare the usage report before the review", at, source_kind="chat")
    [fact] = facts_of(plan)
    assert fact.statement == "Marta Ruiz will prepare the usage report before the review"
    assert fact.subject is not None
    assert fact.subject.name == "Marta Ruiz"


def test_a_transcript_turn_never_gives_a_fact_that_opens_with_the_speakers_label(actor):
    turns = [
        ("Jonas Weber", "00:00:27", "I'll review the take-home exercise on Friday."),
        ("Samuel Osei", "00:00:35", "The candidate from Warsaw was strong on Postgres but weak on Django."),
        ("Jonas Weber", "00:00:44", "From now on interviews are held on Tuesdays and Thursdays only."),
        ("Samuel Osei", "00:00:52", "Noted, I will tell the recruiters today."),
    ]
    content = "\n\n".join(f"**{who}** (at {at}): {text}" for who, at, text in turns)
    call = save(actor, "Hiring sync 2025-11-20", content, content_type="text/markdown", source_kind="transcript")
    statements = [f.statement for f in facts_of(call)]
    assert statements
    assert not [s for s in statements if TURN_LABEL.match(s)], statements
    assert any(s.startswith("Jonas Weber will review the take-home exercise") for s in statements), statements
    assert {"Jonas Weber", "Samuel Osei"} <= set(
        Mention.objects.filter(document=call, entity__type="person").values_list("entity__name", flat=True)
    )


def test_a_page_with_a_relative_date_and_no_date_of_its_own_is_marked_dated_from_the_upload(actor):
    page = save(actor, "Office moves", "The Lyon team moves to the second floor next Monday.", source_kind="wiki")
    [fact] = facts_of(page)
    assert fact.dated_from_upload
    [out] = fact_outs(actor, [fact])
    assert out.dated_from_upload
    assert "dated from the upload day" in out.line()
    assert "from the upload day: check it" in fact_row(out).validity


def test_a_page_with_its_own_date_or_no_relative_date_is_not_marked(actor):
    dated = save(
        actor,
        "Office moves",
        "The Lyon team moves to the second floor next Monday.",
        source_kind="wiki",
        occurred_at=datetime(2025, 11, 19, 10, tzinfo=UTC),
    )
    plain = save(actor, "Offices", "The Lyon office moved to the second floor on 1 December 2025.", source_kind="wiki")
    assert [f.dated_from_upload for f in facts_of(dated) + facts_of(plain)] == [False, False]


def test_the_moment_says_where_it_was_read_from_in_the_organisations_time_zone(actor):
    actor.org.time_zone = "Pacific/Auckland"
    actor.org.save(update_fields=["time_zone"])
    late = datetime(2025, 11, 23, 20, 0, tzinfo=UTC)  # already Monday 24 November in Auckland
    cases = [
        (save(actor, "Chat", "Ok.", occurred_at=late, ingest=False), "occurred_at", date(2025, 11, 24)),
        (save(actor, "Mail", MAIL, source_kind="email", ingest=False), "header", date(2025, 11, 24)),
        (save(actor, "Sync 20 Nov 2025", "Notes.", ingest=False), "title", date(2025, 11, 20)),
        (save(actor, "Sync", "Notes of 24/11/2025\n\nOk.", ingest=False), "opening", date(2025, 11, 24)),
        (save(actor, "Report", "Ok.", occurred_at=late, metadata={"file_created": late.isoformat()}, ingest=False),
         "file", date(2025, 11, 24)),
    ]  # fmt: skip
    for document, origin, day in cases:
        moment = read_source(document, document.content).moment
        assert (moment.origin, moment.day, moment.from_upload) == (origin, day, False), document.title
    page = save(actor, "Handbook", "Ok.", ingest=False)
    assert read_source(page, page.content).moment.from_upload


def test_we_is_the_speakers_team_when_memory_knows_it_and_otherwise_stays_as_written(actor):
    known = save(actor, "Team list", "Priya Shah works at Support.", ingest=False)
    Document.objects.filter(pk=known.pk).update(status="ready")
    record_facts(
        document=known,
        drafts=[
            FactDraft(
                statement="Priya Shah works at Support.", subject="Priya Shah", object="Support", relation="works_at"
            )
        ],
    )
    at = datetime(2025, 11, 24, 9, 2, tzinfo=UTC)
    priya = said(actor, "Priya Shah", "We moved the Halvorsen Foods escalations to Jonas Weber today.", at)
    [fact] = facts_of(priya)
    assert fact.statement.startswith("Support moved the Halvorsen Foods escalations")
    assert fact.subject is not None
    assert fact.subject.name == "Support"
    marta = said(actor, "Marta Ruiz", "We moved the Northwind renewal call to Jonas Weber today.", at)
    [fact] = facts_of(marta)
    assert fact.statement.startswith("We moved the Northwind renewal call")
    assert fact.subject is None or fact.subject.name.lower() != "we"


THREAD = """# [\\#7 Issue](https://x.test/7) `open`: Export fails on long titles

#### <img src="a.png">[Dana Okafor](https://github.com/dokafor) opened issue at [2025-11-19 08:10](https://x.test/7):

The export stops on long titles.

#### <img src="b.png">[Lee Park](https://github.com/leepark) commented at [2025-11-23 18:30](https://x.test/7):

I will cut long titles in the next release.
"""


def test_each_comment_of_a_thread_is_said_by_its_author_on_its_day_and_its_heading_is_no_body(actor):
    thread = save(actor, "Issue acme/widgets#7: Export fails", THREAD, source_kind="connector", ingest=False)
    source = read_source(thread, thread.content)
    opened, reply = thread.content.index("The export"), thread.content.index("I will cut")
    assert (source.speaker_at(opened), source.speaker_at(reply)) == ("Dana Okafor", "Lee Park")
    said_on = {thread.content[s.start : s.end].strip(): source.said_on(s) for s in source.segments}
    assert said_on == {
        "The export stops on long titles.": date(2025, 11, 19),
        "I will cut long titles in the next release.": date(2025, 11, 23),
    }
    assert "commented at" not in source.body(thread.content)


def test_a_comment_in_a_synced_thread_speaks_as_its_author_in_its_facts(actor):
    text = "The export stops on long titles.\n\nleepark on 2025-11-23:\nI will cut long titles in the next release.\n"
    thread = save(
        actor,
        "Issue acme/widgets#7: Export fails",
        text,
        source_kind="connector",
        metadata={"kind": "issue", "author": "dokafor"},
    )
    statements = [f.statement for f in facts_of(thread)]
    assert any(s.startswith("leepark will cut long titles") for s in statements), statements


def test_a_dotted_date_in_a_title_is_the_documents_moment(actor):
    for title in ("2019.01.04", "Steering meeting 2019.1.4"):
        notes = save(actor, title, "Notes.", ingest=False)
        moment = read_source(notes, notes.content).moment
        assert (moment.origin, moment.day) == ("title", date(2019, 1, 4)), title
    version = save(actor, "Release 2019.13.40", "Notes.", ingest=False)
    assert read_source(version, version.content).moment.from_upload


def test_a_label_said_in_the_negative_in_minutes_is_no_speaker(actor):
    text = (
        "Present: Ines Moreau, Tariq Bell\n\nNot Present: Dana Okafor, Lee Park\n\n"
        "Ines Moreau: I will send the draft to the steering group on Friday.\n"
    )
    minutes = save(actor, "Steering minutes", text, source_kind="upload", ingest=False)
    speakers = {s.speaker for s in read_source(minutes, minutes.content).segments}
    assert "Not Present" not in speakers
    assert "Ines Moreau" in speakers
