"""The nightly work on a scripted company history: a promise made in a meeting, followed up in
chat and landed; two sources disagreeing on a price and on who heads an account; a house acronym
used and later explained. Each scan is safe to run twice and runs only for switched-on registers."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest
from django.utils import timezone
from django_celery_beat.models import PeriodicTask

from brain.core.actors import Actor
from brain.models import Features
from memory.graph.writes import FactDraft, record_facts
from memory.models import Document
from memory.tests.factories import save
from registers.commitments.services import list_commitments
from registers.contradictions.services import list_contradictions
from registers.glossary.services import glossary
from registers.nightly import run_nightly
from registers.schedule import task_name
from registers.tests.helpers import stated, switch_on

pytestmark = pytest.mark.django_db


def said(actor: Actor, conversation: str, speaker: str, text: str, at: datetime) -> Document:
    return save(
        actor,
        f"{conversation} {at:%d %b}",
        f"{speaker}: {text}",
        speaker=speaker,
        conversation=conversation,
        occurred_at=at,
        source_kind="slack",
    )


def role(actor: Actor, title: str, holder: str) -> None:
    document = save(actor, title, f"{holder} heads the BigCo account.", ingest=False)
    Document.objects.filter(pk=document.pk).update(status="ready")
    document.refresh_from_db()
    draft = FactDraft(
        statement=f"{holder} heads the BigCo account.",
        subject=holder,
        object="BigCo account",
        relation="head_of",
        single_valued=True,
    )
    record_facts(document=document, drafts=[draft])


@pytest.fixture
def history(actor, settings):
    settings.BRAIN_EXTRACT_FACTS = False
    meeting = (
        "Priya: Thanks all. I'll send the revised quote to BigCo by Friday.\n\n"
        "Sam: Maybe we could look at the discount later.\n\n"
        "Ana: I sent the contract last week.\n\n"
        "Sam: Will you join the call?\n\n"
        "Priya: The MID for the BigCo shops is still missing."
    )
    save(actor, "BigCo meeting", meeting, occurred_at=datetime(2026, 3, 2, 10, tzinfo=UTC), source_kind="transcript")
    said(actor, "sales", "Sam", "Priya, did the revised quote go to BigCo?", datetime(2026, 3, 4, 9, tzinfo=UTC))
    said(
        actor,
        "sales",
        "Priya",
        "Yes, the revised quote for BigCo went out this morning, sent and confirmed.",
        datetime(2026, 3, 5, 9, tzinfo=UTC),
    )
    for day, text in (
        (6, "We need the MID before the BigCo shops go live."),
        (9, "The MID request is with the acquirer."),
        (10, "A MID is the merchant identifier the acquirer gives each BigCo shop."),
    ):
        said(actor, "payments", "Ana", text, datetime(2026, 3, day, 9, tzinfo=UTC))
    stated(actor, "Price list", "The enterprise plan costs 48500 USD a year.", number=48500)
    stated(actor, "Sales deck", "The enterprise plan costs 52000 USD a year.", number=52000)
    role(actor, "Account plan", "Ana")
    role(actor, "CRM export", "Ben")
    return actor


def test_nothing_runs_for_registers_that_are_off(history):
    assert run_nightly(history.org) == {}
    assert list_commitments(actor=history, state="all") == []


def test_the_promise_is_found_followed_and_shown_as_likely_landed(history):
    switch_on(history.org, "commitments")
    done = run_nightly(history.org)
    assert done["commitments found"] == 1
    [item] = list_commitments(actor=history)
    promise = item.commitment
    assert (promise.owner_name, promise.due_on, promise.promised_on) == ("Priya", date(2026, 3, 6), date(2026, 3, 2))
    assert promise.what.startswith("Priya will send the revised quote to BigCo")
    assert item.verdict is not None
    assert item.verdict.suggests_landed
    assert "went out this morning" in item.verdict.found[0]["text"]
    assert promise.state == "open"  # a verdict reports; people settle
    again = run_nightly(history.org)
    assert again["commitments found"] == 0  # read once, never twice
    assert len(list_commitments(actor=history)) == 1
    assert promise.verdicts.count() == 1  # a second run the same night (a second beat) judges nothing again
    promise.verdicts.update(checked_at=timezone.now() - timedelta(days=1))
    run_nightly(history.org)
    assert promise.verdicts.count() == 2  # the next night: one more


def test_both_disagreements_are_raised_and_both_statements_stay_current(history):
    switch_on(history.org, "contradictions")
    assert run_nightly(history.org)["contradictions raised"] == 2
    raised = {c.about: c for c in list_contradictions(actor=history)}
    assert set(raised) == {"Enterprise plan price", "Ben head of"} or len(raised) == 2
    assert {c.severity for c in raised.values()} == {"high", "medium"}
    assert run_nightly(history.org)["contradictions raised"] == 0


def test_the_nightly_entry_follows_the_switches_and_the_time_zone(history):
    name = task_name(history.org)
    assert not PeriodicTask.objects.filter(name=name).exists()
    switch_on(history.org, "glossary")
    task = PeriodicTask.objects.get(name=name)
    assert (task.task, task.queue, str(task.crontab.timezone)) == ("registers.tasks.nightly_task", "nightly", "UTC")
    history.org.time_zone = "Europe/Madrid"
    history.org.save()
    assert str(PeriodicTask.objects.get(name=name).crontab.timezone) == "Europe/Madrid"
    features = Features.objects.get(org=history.org)
    features.glossary = False
    features.save()
    assert not PeriodicTask.objects.filter(name=name).exists()


def test_the_house_acronym_is_found_with_the_explanation_as_a_suggestion(history):
    switch_on(history.org, "glossary")
    run_nightly(history.org)
    [mid] = [t for t in glossary(actor=history, state="open") if t.term == "MID"]
    assert "merchant identifier" in mid.suggestion
    assert mid.definition == ""  # a suggestion is not a definition
    assert 1 <= len(mid.examples) <= 3


def test_the_scan_command_runs_the_switched_on_registers_and_refuses_the_rest(history, capsys):
    from django.core.management import call_command
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="switched off"):
        call_command("registers", "scan", "--org", history.org.slug, "--no-progress")
    switch_on(history.org, "commitments", "contradictions")
    call_command("registers", "scan", "--org", history.org.slug, "--only", "contradictions", "--no-progress")
    assert "2 contradictions raised" in capsys.readouterr().out
    with pytest.raises(CommandError, match="glossary is switched off"):
        call_command("registers", "scan", "--org", history.org.slug, "--only", "glossary")
    with pytest.raises(CommandError, match="No organisation"):
        call_command("registers", "scan", "--org", "nope")


def test_uploaded_meeting_notes_are_read_and_a_handbook_is_not(actor, settings):
    settings.BRAIN_EXTRACT_FACTS = False
    switch_on(actor.org, "commitments")
    save(
        actor,
        "Weekly sync notes",
        "Sam will migrate the billing database next week.",
        source_kind="upload",
        occurred_at=datetime(2026, 3, 2, 10, tzinfo=UTC),
    )
    save(actor, "Billing handbook", "Sam will migrate the billing database next week.", source_kind="upload")
    run_nightly(actor.org)
    [item] = list_commitments(actor=actor)
    assert (item.commitment.owner_name, item.commitment.due_on) == ("Sam", date(2026, 3, 13))  # that week's Friday
    assert item.commitment.document is not None
    assert item.commitment.document.title == "Weekly sync notes"


def test_a_remembered_fact_is_evidence_too_and_a_promise_without_any_stays_open(actor, settings):
    settings.BRAIN_EXTRACT_FACTS = False
    switch_on(actor.org, "commitments")
    from memory.graph.memories import remember
    from registers.commitments.services import record_commitment

    kept = record_commitment(
        actor=actor, owner="Priya", what="Priya will send the revised quote to BigCo", promised_on=date(2026, 3, 2)
    )
    quiet = record_commitment(
        actor=actor, owner="Sam", what="Sam will migrate the billing database", promised_on=date(2026, 3, 2)
    )
    remember(actor=actor, content="Priya sent the revised quote to BigCo on 5 March.", subject="Priya")
    run_nightly(actor.org)
    landed = kept.verdicts.get()
    assert landed.suggests_landed
    assert landed.found[0]["statement"].startswith("Priya sent the revised quote")
    silent = quiet.verdicts.get()
    assert not silent.suggests_landed
    assert "billing database" in silent.looked_for
    assert "stays open" in silent.summary
    quiet.refresh_from_db()
    assert quiet.state == "open"  # never marked missed


def test_a_fact_flagged_as_broken_is_no_evidence_that_a_promise_landed(actor, settings):
    settings.BRAIN_EXTRACT_FACTS = False
    switch_on(actor.org, "commitments")
    from memory.graph.memories import remember
    from memory.models import Fact
    from registers.commitments.services import record_commitment

    kept = record_commitment(
        actor=actor, owner="Priya", what="Priya will send the revised quote to BigCo", promised_on=date(2026, 3, 2)
    )
    said = remember(actor=actor, content="Priya sent the revised quote to BigCo on 5 March.", subject="Priya")
    Fact.objects.filter(pk=said.pk).update(flagged_at=timezone.now())  # an admin held it back for review
    run_nightly(actor.org)
    assert not kept.verdicts.get().suggests_landed
