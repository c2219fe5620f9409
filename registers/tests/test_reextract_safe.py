"""manage.py reextract over an organisation read before the current rules, and over one read with
them: it removes what the old reading made (table rows as facts, sentence-initial verbs as names),
keeps what people decided by hand, and a run over documents read with the current rules (or a
second run at once) changes nothing: the same facts, entities, promises and answers, by id."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from django.db import transaction

from brain.models import Membership
from conftest import make_actor, make_user
from memory.graph.entities import get_or_create_entity, mention
from memory.graph.fixes import change_entity_type, flag_fact, merge_entities, restore_fact, retire_fact
from memory.graph.writes import FactDraft, record_facts
from memory.models import Document, Entity, Fact, Mention
from memory.tests.factories import save
from registers.commitments.services import update_commitment
from registers.contradictions.services import answer_contradiction
from registers.models import Commitment, Contradiction
from registers.nightly import run_nightly
from registers.tests.helpers import switch_on

pytestmark = pytest.mark.django_db

HANDBOOK = """# Plans and support

Northwind Cloud sells three plans to small companies.

| Plan | Price per seat |
| --- | --- |
| Team | 29 EUR |
| Business | 45 EUR |

Support leads are responsible for:

- answering escalations within one day
- writing the monthly support report

Lena Fischer heads the support team in Berlin.
"""

MAIL = """From: Priya Shah <priya@northwind.example>
To: Tom Becker <tom@northwind.example>
Date: Mon, 24 Nov 2025 09:12:40 +0100
Subject: Re: Kestrel renewal

On Fri, 21 Nov 2025 at 17:03, Tom Becker wrote:
> Can we get the renewal terms to Kestrel soon?

I'll send the renewal terms to Kestrel by Friday.

Priya
"""

MINUTES = """# Weekly sync 2025-11-26

Attendees: Priya Shah, Tom Becker, Lena Fischer

- Tom Becker will book the venue for the offsite by 5 December.
- ACTION: Lena Fischer to update the escalation rota
"""


@pytest.fixture
def admin(org):
    return make_actor(org, make_user(org, role=Membership.ADMIN))


@pytest.fixture
def loaded(admin):
    """An organisation as a user loads it: a handbook page with a table and a list, a mail, meeting
    notes and two sources disagreeing on a price, read by ingestion and the nightly scans."""
    switch_on(admin.org, "commitments", "contradictions")
    docs = {
        "handbook": save(admin, "Plans and support", HANDBOOK, content_type="text/markdown", source_kind="wiki"),
        "mail": save(admin, "Re: Kestrel renewal", MAIL, source_kind="email"),
        "minutes": save(admin, "Weekly sync 2025-11-26", MINUTES, content_type="text/markdown"),
        "prices": save(admin, "Price list", "The price of the Kestrel enterprise plan is $48,000 a year."),
        "deck": save(admin, "Sales deck", "The price of the Kestrel enterprise plan is $52,000 a year."),
    }
    run_nightly(admin.org)
    return docs


def reextract(org, *args: str) -> str:
    out = StringIO()
    call_command("reextract", "--org", org.slug, *args, stdout=out)
    return out.getvalue()


def snapshot(org) -> dict[str, set[tuple[object, ...]]]:
    """Every derived row by id, with what a run could change in it."""
    return {
        "facts": set(Fact.objects.filter(org=org).values_list("pk", "statement", "superseded_at", "flagged_at")),
        "entities": set(Entity.objects.filter(org=org).values_list("pk", "name", "type", "merged_into")),
        "mentions": set(Mention.objects.filter(entity__org=org).values_list("pk", "entity", "surface")),
        "promises": set(Commitment.objects.filter(org=org).values_list("pk", "what", "state", "due_on")),
        "answers": set(Contradiction.objects.filter(org=org).values_list("pk", "state", "answer", "fact_a", "fact_b")),
    }


def old_reading(document: Document) -> tuple[Fact, Entity]:
    """What the reading before the current rules made of a handbook page: a table row as a fact and
    a sentence's opening verb as a person."""
    [row] = record_facts(document=document, drafts=[FactDraft(statement="| Team | 29 EUR |")])
    with transaction.atomic():
        junk = get_or_create_entity(document=document, name="Contributes", type="person")
        mention(entity=junk, document=document, surface="Contributes", type="person")
    return row, junk


def test_documents_read_with_the_current_rules_are_left_as_they_are(admin, loaded):
    before = snapshot(admin.org)
    assert before["answers"]  # something a run could re-create under a new id
    assert before["promises"]

    report = reextract(admin.org)

    assert f"{len(loaded)} document(s)" in report
    assert report.count("unchanged") == len(loaded), report
    assert "changed: nothing" in report
    assert snapshot(admin.org) == before


def test_a_statement_made_twice_in_one_document_keeps_both_its_facts(admin, loaded):
    twice = "# Escalations\n\nLena Fischer answers escalations.\n\n# Rota\n\nLena Fischer answers escalations.\n"
    document = save(admin, "Support rota", twice, content_type="text/markdown", source_kind="wiki")
    facts = set(Fact.objects.filter(document=document).values_list("pk", flat=True))
    assert len(facts) == 2

    report = reextract(admin.org, "--document", str(document.pk))

    assert "unchanged" in report
    assert set(Fact.objects.filter(document=document).values_list("pk", flat=True)) == facts


def test_a_page_is_read_again_with_what_was_known_when_it_was_first_read(admin):
    # The first page names Matteo and Ben in passing; pages stored after it introduce them in full.
    first = save(admin, "Sync notes", "Matteo reached out to Ben, let's leave it on the agenda to next week.")
    save(admin, "Team", "Matteo Collina leads the performance team. Ben Noordhuis reviews the releases.")
    save(admin, "Roles", "Matteo is the chair of the steering committee.")
    before = snapshot(admin.org)

    report = reextract(admin.org, "--document", str(first.pk))

    assert "unchanged" in report, report
    assert snapshot(admin.org) == before


def test_a_second_run_at_once_changes_nothing(admin, loaded):
    row, junk = old_reading(loaded["handbook"])
    assert "changed: nothing" not in reextract(admin.org)
    after_first = snapshot(admin.org)

    again = reextract(admin.org)

    assert "changed: nothing" in again
    assert snapshot(admin.org) == after_first


def test_the_old_readings_table_rows_and_junk_names_go(admin, loaded):
    row, junk = old_reading(loaded["handbook"])

    report = reextract(admin.org)

    assert not Fact.objects.filter(pk=row.pk).exists()
    assert not Entity.objects.filter(pk=junk.pk).exists()
    assert "facts +0 -1" in report
    assert "entities +0 -1" in report
    assert not Fact.objects.filter(org=admin.org, statement__contains="|").exists()


def test_what_people_decided_by_hand_stays(admin, loaded):
    org = admin.org
    row, junk = old_reading(loaded["handbook"])
    lena = Fact.objects.get(org=org, statement__contains="heads the support team")
    offsite = Fact.objects.filter(document=loaded["minutes"]).first()
    assert offsite is not None
    # A person confirmed the table row after a review, retired another fact, and flagged a third.
    flag_fact(actor=admin, fact_id=row.pk, reason="Check the price.")
    restore_fact(actor=admin, fact_id=row.pk)
    flag_fact(actor=admin, fact_id=offsite.pk, reason="Not what was said.")
    retire_fact(actor=admin, fact_id=offsite.pk)
    flag_fact(actor=admin, fact_id=lena.pk, reason="She moved to Lisbon.")
    # Typed an entity, merged two, settled a promise and answered the disagreement.
    northwind = Entity.objects.get(org=org, name="Northwind Cloud")
    change_entity_type(actor=admin, entity_id=northwind.pk, type="organisation")
    priya = Entity.objects.get(org=org, name="Priya Shah")
    tom = Entity.objects.get(org=org, name="Tom Becker")
    merge_entities(actor=admin, kept_id=priya.pk, merged_id=tom.pk)  # a wrong merge is still a person's call
    terms = Commitment.objects.get(org=org, what__icontains="renewal terms")
    update_commitment(actor=admin, commitment_id=terms.public_id, status="done", note="Sent on Thursday.")
    [entry] = Contradiction.objects.filter(org=org)
    answer_contradiction(actor=admin, contradiction_id=entry.public_id, answer="a", note="Billing says 48,000.")
    decided = snapshot(org)

    reextract(admin.org)

    row.refresh_from_db()
    assert (row.superseded_at, row.flagged_at) == (None, None)  # confirmed by a person: kept, and current
    offsite.refresh_from_db()
    assert offsite.superseded_at is not None  # retired by a person: not brought back
    lena.refresh_from_db()
    assert lena.flagged_at is not None  # still waiting for its review
    assert not Entity.objects.filter(pk=junk.pk).exists()  # nobody decided anything about it
    assert Entity.objects.get(pk=northwind.pk).type == "organisation"
    assert Entity.objects.get(pk=tom.pk).merged_into_id == priya.pk
    assert not Mention.objects.filter(entity=tom).exists()  # the merged name links to the kept entity
    terms.refresh_from_db()
    assert (terms.state, terms.note) == ("landed", "Sent on Thursday.")
    entry.refresh_from_db()
    assert (entry.state, entry.answer) == ("resolved", "a")
    after = snapshot(org)
    assert after["answers"] == decided["answers"]  # the same answer, under the same id
    assert after["promises"] == decided["promises"]
    assert "changed: nothing" in reextract(admin.org)  # and a second run keeps all of it as it is
