"""manage.py reextract: stored documents derived again with the current rules, through the
ingestion and nightly code, keeping what people decided by hand; a second run changes nothing."""

from __future__ import annotations

import dataclasses
import datetime
from io import StringIO
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from brain.models import Membership
from conftest import make_actor, make_user
from memory.extraction import sentences as pipeline
from memory.graph import document_facts
from memory.graph.fixes import change_entity_type, flag_fact
from memory.models import Entity, Fact, Mention
from memory.tests.factories import save
from registers.commitments import nightly as commitments_nightly
from registers.commitments.services import update_commitment
from registers.contradictions import nightly as contradictions_nightly
from registers.contradictions.services import answer_contradiction
from registers.models import Commitment, Contradiction
from registers.nightly import run_nightly
from registers.tests.helpers import switch_on

pytestmark = pytest.mark.django_db

NOTES = (
    "Priya Shah will send the pricing deck to Northwind by Friday.\n"
    "Sam Carter will book the venue for the offsite by Monday.\n"
    "The Lisbon office of Northwind opens on 1 May 2026.\n"
    "Northwind renewed the support contract with Kestrel in March 2026.\n"
)
GONE = ("Lisbon", "renewed", "52,000")  # sentences the changed rules no longer make facts of
PROMISES_GONE = ("pricing deck", "venue")  # promises the changed rules no longer read


@pytest.fixture
def admin(org):
    return make_actor(org, make_user(org, role=Membership.ADMIN))


@pytest.fixture
def stored(admin):
    """Three ingested documents, the nightly scans run, and a person's decisions on what they gave."""
    switch_on(admin.org, "commitments", "contradictions")
    notes = save(admin, "Weekly sync notes", NOTES)
    save(admin, "Price list", "The price of the BigCo enterprise plan is $48,000 a year.")
    save(admin, "Sales deck", "The price of the BigCo enterprise plan is $52,000 a year.")
    run_nightly(admin.org)
    lisbon = Fact.objects.get(document=notes, statement__contains="Lisbon")
    flag_fact(actor=admin, fact_id=lisbon.pk, reason="The office opens in June.")
    deck = Commitment.objects.get(org=admin.org, what__icontains="pricing deck")
    update_commitment(actor=admin, commitment_id=deck.public_id, status="done", note="Priya sent it on Friday.")
    [entry] = Contradiction.objects.filter(org=admin.org)
    answer_contradiction(actor=admin, contradiction_id=entry.public_id, answer="a", note="Billing says 48,000.")
    northwind = Entity.objects.get(org=admin.org, name="Northwind")
    change_entity_type(actor=admin, entity_id=northwind.pk, type="customer")
    return {"lisbon": lisbon, "deck": deck, "contradiction": entry, "northwind": northwind}


@pytest.fixture
def new_rules(monkeypatch):
    """Rules changed since the documents were read: some sentences and promises no longer count."""
    fact = pipeline._fact

    def fewer_facts(sent: Any, *args: Any) -> Any:
        return None if any(word in sent.text for word in GONE) else fact(sent, *args)

    read = commitments_nightly.extract_commitments

    def fewer_promises(*args: Any, **kw: Any) -> Any:
        return [d for d in read(*args, **kw) if not any(w in d.what for w in PROMISES_GONE)]

    monkeypatch.setattr(pipeline, "_fact", fewer_facts)
    monkeypatch.setattr(commitments_nightly, "extract_commitments", fewer_promises)


def reextract(org, *args: str) -> str:
    out = StringIO()
    call_command("reextract", "--org", org.slug, *args, stdout=out)
    return out.getvalue()


def test_it_rederives_with_the_new_rules_and_keeps_what_people_decided(admin, stored, new_rules):
    org = admin.org
    venue = Commitment.objects.get(org=org, what__icontains="venue")
    renewed = Fact.objects.get(org=org, statement__contains="renewed")

    report = reextract(org)

    assert "facts +0 -1 retired 1" in report  # the notes: "renewed" removed, the flagged one retired
    assert "commitments +0 -1 updated 0 kept 1" in report  # the venue removed, the deck (done by hand) kept
    assert report.strip().splitlines()[-1].startswith(f"{org.slug}: 3 document(s)")
    assert not Fact.objects.filter(pk=renewed.pk).exists()
    lisbon = Fact.objects.get(pk=stored["lisbon"].pk)
    assert lisbon.flagged_at is not None  # still waiting for its review
    assert lisbon.superseded_at is not None  # and no longer current
    assert not Commitment.objects.filter(pk=venue.pk).exists()
    deck = Commitment.objects.get(pk=stored["deck"].pk)
    assert (deck.state, deck.note) == ("landed", "Priya sent it on Friday.")
    answered = Contradiction.objects.get(pk=stored["contradiction"].pk)  # both its sides kept
    assert answered.state == "resolved"
    assert answered.fact_a is not None
    assert answered.fact_b is not None
    northwind = stored["northwind"]
    assert Entity.objects.get(pk=northwind.pk).type == "customer"  # the admin's type, and the same entity
    assert set(
        Mention.objects.filter(document=lisbon.document, surface="Northwind").values_list("entity", flat=True)
    ) == {northwind.pk}


def test_running_it_twice_changes_nothing_the_second_time(admin, stored, new_rules):
    reextract(admin.org)
    facts = set(Fact.objects.filter(org=admin.org).values_list("pk", "statement", "superseded_at"))
    promises = set(Commitment.objects.filter(org=admin.org).values_list("pk", "state"))

    again = reextract(admin.org)

    assert again.count("unchanged") == 3
    assert "changed: nothing" in again
    assert set(Fact.objects.filter(org=admin.org).values_list("pk", "statement", "superseded_at")) == facts
    assert set(Commitment.objects.filter(org=admin.org).values_list("pk", "state")) == promises


def test_a_dry_run_reports_the_changes_and_makes_none(admin, stored, new_rules):
    facts = set(Fact.objects.filter(org=admin.org).values_list("pk", "superseded_at"))
    promises = Commitment.objects.filter(org=admin.org).count()

    report = reextract(admin.org, "--dry-run")

    assert "would change: facts +0 -1 retired 1" in report
    assert set(Fact.objects.filter(org=admin.org).values_list("pk", "superseded_at")) == facts
    assert Commitment.objects.filter(org=admin.org).count() == promises


def test_one_document_can_be_chosen_and_an_unknown_one_is_refused(admin, stored, new_rules):
    notes = stored["lisbon"].document_id
    report = reextract(admin.org, "--document", str(notes))
    assert report.strip().splitlines()[-1].startswith(f"{admin.org.slug}: 1 document(s)")
    with pytest.raises(CommandError, match="No ready document 999999"):
        reextract(admin.org, "--document", "999999")
    with pytest.raises(CommandError, match="No organisation"):
        call_command("reextract", "--org", "no-such-org", stdout=StringIO())


def test_a_second_run_embeds_no_statement_again(admin, stored, new_rules, monkeypatch):
    reextract(admin.org)
    embedded: list[str] = []
    real = document_facts.embed_drafts

    def spy(org_id: int, drafts: list[Any]) -> Any:
        embedded.extend(d.statement for d in drafts)
        return real(org_id, drafts)

    monkeypatch.setattr(document_facts, "embed_drafts", spy)
    reextract(admin.org)
    assert embedded == []  # every fact was found again, with its vector


def test_a_promise_read_again_takes_the_new_due_date_unless_a_person_settled_it(admin, stored, monkeypatch):
    read = commitments_nightly.extract_commitments
    later = datetime.date(2030, 1, 31)

    def later_dates(*args: Any, **kw: Any) -> Any:
        return [dataclasses.replace(d, due_on=later) for d in read(*args, **kw)]

    monkeypatch.setattr(commitments_nightly, "extract_commitments", later_dates)
    venue = Commitment.objects.get(org=admin.org, what__icontains="venue")

    report = reextract(admin.org)

    assert "updated 1" in report
    venue.refresh_from_db()
    assert venue.due_on == later  # nobody touched it: the rules' reading now
    deck = Commitment.objects.get(pk=stored["deck"].pk)
    assert deck.due_on == stored["deck"].due_on  # settled by a person: as they left it
    assert "unchanged" in reextract(admin.org)


def test_contradictions_are_checked_again_with_the_current_rules(admin, monkeypatch):
    switch_on(admin.org, "contradictions")
    save(admin, "Price list", "The price of the BigCo enterprise plan is $48,000 a year.")
    save(admin, "Sales deck", "The price of the BigCo enterprise plan is $52,000 a year.")
    run_nightly(admin.org)
    assert Contradiction.objects.filter(org=admin.org, state="open").count() == 1

    with monkeypatch.context() as rules:
        rules.setattr(contradictions_nightly, "_contradict", lambda a, b: False)
        assert "contradictions +0 -1" in reextract(admin.org)  # the rules no longer see a conflict
    assert not Contradiction.objects.filter(org=admin.org).exists()

    assert "contradictions +1 -0" in reextract(admin.org)  # and with the rules as they were, it is back
    assert Contradiction.objects.filter(org=admin.org, state="open").count() == 1
