"""Promises read by the nightly scan belong to who made them, on the day they were made: a mail's
"I'll ..." is its sender's, promised on its Date: header; a quoted reply promises nothing; a page
that says nowhere when it was written is marked as dated from the upload day."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from memory.tests.factories import said, save
from registers.commitments.services import list_commitments
from registers.mcp_tools.commitments import shown
from registers.models import Commitment
from registers.nightly import run_nightly
from registers.tests.helpers import switch_on

pytestmark = pytest.mark.django_db

MAIL = """From: Marta Ruiz <marta.ruiz@kestrel.example>
To: Tom Becker <tom.becker@kestrel.example>
Date: Mon, 24 Nov 2025 09:12:40 +0100
Subject: Re: Northwind renewal quote

Hi Tom,

I'll send the revised quote to Northwind by Friday.

Best,
Marta

On Fri, 21 Nov 2025 at 17:03, Tom Becker wrote:
> I'll call Globex about the contract on Monday.
"""


@pytest.fixture
def scanning(actor, settings):
    settings.BRAIN_EXTRACT_FACTS = False
    switch_on(actor.org, "commitments")
    return actor


def test_a_mails_promise_is_its_senders_made_on_its_date_header_and_its_quoted_reply_promises_nothing(scanning):
    save(scanning, "Re: Northwind renewal quote", MAIL, source_kind="email")
    run_nightly(scanning.org, only="commitments")
    [promise] = Commitment.objects.filter(org=scanning.org)
    assert promise.owner_name == "Marta Ruiz"
    assert "revised quote to Northwind" in promise.what
    assert promise.promised_on == date(2025, 11, 24)
    assert promise.due_on is not None
    assert abs((promise.due_on - date(2025, 11, 24)).days) <= 7  # that week's Friday, not a year later
    assert not promise.dated_from_upload


def test_a_chat_message_promise_is_owned_by_its_speaker(scanning):
    at = datetime(2025, 11, 24, 9, 2, tzinfo=UTC)
    said(scanning, "Marta Ruiz", "I'll send the revised quote to Northwind tomorrow", at, source_kind="chat")
    run_nightly(scanning.org, only="commitments")
    [promise] = Commitment.objects.filter(org=scanning.org)
    assert (promise.owner_name, promise.promised_on, promise.due_on) == ("Marta Ruiz", date(2025, 11, 24),
                                                                         date(2025, 11, 25))  # fmt: skip
    assert not promise.dated_from_upload


def test_notes_titled_with_their_day_promise_on_that_day(scanning):
    notes = (
        "# Weekly sync 2025-11-24\n\nAttendees: Aiko Tanaka, Priya Shah\n\n"
        "- Aiko Tanaka will draft the holiday schedule by Thursday.\n"
    )
    save(scanning, "Weekly sync 2025-11-24", notes, content_type="text/markdown", source_kind="upload")
    run_nightly(scanning.org, only="commitments")
    [promise] = Commitment.objects.filter(org=scanning.org)
    assert (promise.owner_name, promise.promised_on) == ("Aiko Tanaka", date(2025, 11, 24))
    assert not promise.dated_from_upload


def test_notes_of_a_review_listing_attendees_are_read_for_promises_but_a_page_of_plans_is_not(scanning):
    review = (
        "# Sales pipeline review 20 Nov 2025\n\nAttendees: Marta Ruiz, Tom Becker, Diego Alves\n\n"
        "Brightline Logistics: pilot decision expected by 28 November.\n"
        "Diego Alves will prepare a pilot plan for Brightline by Tuesday.\n"
        "Okapi Print will print the paper invoices from January.\n"
    )
    save(scanning, "Sales pipeline review 20 Nov 2025", review, content_type="text/markdown", source_kind="upload")
    plans = "# Roadmap\n\nDiego Alves will own the routing engine rewrite next year.\n"
    save(scanning, "Roadmap", plans, content_type="text/markdown", source_kind="wiki")
    run_nightly(scanning.org, only="commitments")
    [promise] = Commitment.objects.filter(org=scanning.org)
    assert (promise.owner_name, promise.promised_on, promise.due_on) == ("Diego Alves", date(2025, 11, 20),
                                                                         date(2025, 11, 25))  # fmt: skip


def test_a_promise_from_notes_with_no_date_of_their_own_says_its_due_date_is_from_the_upload_day(scanning, client):
    save(
        scanning,
        "Support meeting notes",
        "- Aiko Tanaka will write the outage macro by Thursday.\n",
        content_type="text/markdown",
        source_kind="upload",
    )
    run_nightly(scanning.org, only="commitments")
    [promise] = Commitment.objects.filter(org=scanning.org)
    assert promise.dated_from_upload
    [item] = list_commitments(actor=scanning)
    assert any("dated from the upload day" in line for line in shown(item.commitment).lines())
    client.force_login(scanning.user)
    page = client.get("/registers/").content.decode()
    assert "from the upload day: check it" in page  # its due date, Thursday of the week it was saved
    assert "dated from the upload day" not in page


def test_a_one_message_yes_promises_what_the_message_before_asked_and_only_within_its_audience(scanning):
    """Chat messages are one document each: the reply is read after the request it answers. A request
    in a personal message is not read into a shared reply's promise."""
    at = datetime(2026, 1, 26, 9, 0, tzinfo=UTC)
    said(
        scanning,
        "Priya Shah",
        "Aiko, can you update the Freshdesk macros for the new invoice layout by Friday?",
        at,
        conversation="slack:#support",
        source_kind="chat",
    )
    said(
        scanning,
        "Aiko Tanaka",
        "Sure, I'll have them done by Friday",
        at.replace(minute=5),
        conversation="slack:#support",
        source_kind="chat",
    )
    run_nightly(scanning.org, only="commitments")
    [promise] = Commitment.objects.filter(org=scanning.org)
    assert promise.owner_name == "Aiko Tanaka"
    assert promise.what == "Aiko Tanaka will update the Freshdesk macros for the new invoice layout by Friday"
    assert promise.due_on == date(2026, 1, 30)
    assert promise.quote == "Sure, I'll have them done by Friday"
    said(
        scanning,
        "Priya Shah",
        "Aiko, can you send me the salary review?",
        at.replace(hour=10),
        conversation="slack:#dm",
        source_kind="chat",
        scope="personal",
    )
    said(
        scanning,
        "Aiko Tanaka",
        "Sure, I'll send it tomorrow",
        at.replace(hour=10, minute=5),
        conversation="slack:#dm",
        source_kind="chat",
    )
    run_nightly(scanning.org, only="commitments")
    later = Commitment.objects.filter(org=scanning.org).exclude(pk=promise.pk)
    assert [c.what for c in later] == ["Aiko Tanaka will send it tomorrow"]


PASTED = """From: Lena Fischer <lena@kestrel.example>
To: Tom Becker <tom@kestrel.example>
Date: Tue, 2 Dec 2025 08:30:00 +0100
Subject: Re: onboarding

On Mon, 1 Dec 2025 at 17:03, Tom Becker wrote:
> Could the new starters get their laptops before Monday?

Yes. I'll order the laptops for the new starters by Thursday.

> And I'll ask Globex about the badge readers.

Thanks, that helps.

Lena
"""

EML = b"""From: Lena Fischer <lena@kestrel.example>
To: Tom Becker <tom@kestrel.example>
Date: Tue, 2 Dec 2025 08:30:00 +0100
Subject: Re: onboarding
Message-ID: <onboarding-2@kestrel.example>
MIME-Version: 1.0
Content-Type: text/plain; charset=utf-8

On Mon, 1 Dec 2025 at 17:03, Tom Becker wrote:
> Could the new starters get their laptops before Monday?

Yes. I'll order the laptops for the new starters by Thursday.

> And I'll ask Globex about the badge readers.

Thanks, that helps.

--=20
Lena Fischer
"""


def test_a_mail_pasted_as_text_is_read_for_promises_and_its_reply_between_quotes_is_its_senders(scanning):
    save(scanning, "Re: onboarding", PASTED, source_kind="upload")  # pasted: no mail source, nor a meeting title
    run_nightly(scanning.org, only="commitments")
    [promise] = Commitment.objects.filter(org=scanning.org)  # the quoted "I'll ask Globex" is Tom's, not read
    assert (promise.owner_name, promise.promised_on, promise.due_on) == ("Lena Fischer", date(2025, 12, 2),
                                                                         date(2025, 12, 4))  # fmt: skip
    assert "order the laptops" in promise.what


def test_a_mail_uploaded_as_an_eml_file_is_read_for_promises_like_the_synced_one(scanning, tmp_path):
    from memory.extraction import parse_file

    path = tmp_path / "onboarding.eml"
    path.write_bytes(EML)
    [parsed] = parse_file(path)
    save(
        scanning,
        parsed.title,
        parsed.content,
        source_kind=parsed.source_kind,
        speaker=parsed.speaker,
        occurred_at=parsed.occurred_at,
        external_id=parsed.external_id,
    )
    run_nightly(scanning.org, only="commitments")
    [promise] = Commitment.objects.filter(org=scanning.org)
    assert (promise.owner_name, promise.promised_on) == ("Lena Fischer", date(2025, 12, 2))
    assert "order the laptops" in promise.what


MINUTES = """# 2026-01-07

Present: Matteo Rossi, Priya Shah, Lena Fischer

## Agenda

* Retire the old status page
  * Matteo: I will take care of it
* Conference budget
  * Priya Shah: we'll know more in March.

## Action items

- ACTION: Priya Shah to send the budget summary to the board
- [ ] @lena update the onboarding checklist by Friday
- Decision: close the Lyon office.
"""


def test_minutes_titled_with_their_date_give_their_action_items_to_the_people_they_name(scanning):
    save(scanning, "2026-01-07", MINUTES, content_type="text/markdown", source_kind="upload")
    run_nightly(scanning.org, only="commitments")
    found = {(c.owner_name, c.what, c.promised_on, c.due_on) for c in Commitment.objects.filter(org=scanning.org)}
    assert found == {
        ("Matteo", "Matteo will take care of it: Retire the old status page", date(2026, 1, 7), None),
        ("Priya Shah", "Priya Shah will send the budget summary to the board", date(2026, 1, 7), None),
        ("lena", "lena will update the onboarding checklist by Friday", date(2026, 1, 7), date(2026, 1, 9)),
    }
