"""A run's report without a model is a digest people read: whole sentences, links to the document
pages rather than ids, times in the organisation's zone, and a registers section where the prompt
asks for one."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime

import pytest
from django.urls import reverse

from brain.models import Features
from conftest import make_actor, make_user
from jobs.digest import best_sentences, sentences
from jobs.runs import tick
from jobs.services import schedule_job
from memory.tests.factories import save
from registers.commitments.services import record_commitment

FRIDAY = datetime(2026, 12, 4, 16, 0, 30, tzinfo=UTC)  # 17:00 in Berlin
# Long enough that the excerpt is cut, with sentences that wrap over lines.
PLAN = (
    "BigCo pricing notes\n\n"
    "The Team plan costs 29 EUR per seat a month and is billed\nyearly in advance. "
    + " ".join(f"Filler sentence number {n} talks about office plants and coffee." for n in range(200))
    + "\n\nBigCo renewed the enterprise plan for 52,000 USD this week. The renewal was signed by Priya Shah."
)


def test_a_passage_that_starts_inside_a_sentence_or_is_cut_keeps_only_its_whole_sentences():
    excerpt = (
        "of the price list. The Team plan costs 29 EUR.\nIt is billed yearly.\n…\nand so on. BigCo renewed it in Ma"
    )
    assert sentences(excerpt, truncated=True) == ["The Team plan costs 29 EUR.", "It is billed yearly."]
    chosen = best_sentences(excerpt, {"bigco", "team", "plan"}, truncated=True)
    assert chosen == ["The Team plan costs 29 EUR.", "It is billed yearly."]


def test_headings_table_rows_and_soft_wrapped_lines_read_as_sentences():
    text = (
        "# Pricing\n| plan | price |\n|---|---|\n- The Team plan costs 29 EUR per seat\n  a month.\n"
        "- Support is included."
    )
    assert sentences(text) == ["The Team plan costs 29 EUR per seat a month.", "Support is included."]


def test_a_sentence_too_long_to_show_ends_at_a_word():
    long = "The plan " + "covers a great many things " * 40 + "in the end."
    (shown,) = best_sentences(long, {"plan"})
    assert shown.endswith(" …")
    assert long.startswith(shown.removesuffix(" …"))


@pytest.fixture
def berlin(org):
    org.time_zone = "Europe/Berlin"
    org.save(update_fields=["time_zone"])
    return org


def _report(actor, prompt: str) -> str:
    job = schedule_job(
        actor=actor, name="BigCo weekly", prompt=prompt, schedule="0 17 * * 5", time_zone="Europe/Berlin"
    )
    run = tick(job.job.pk, now=FRIDAY)
    assert run is not None
    run.refresh_from_db()
    assert run.status == "ok", run.report
    return run.report


@pytest.mark.django_db
def test_the_digest_links_its_sources_quotes_whole_sentences_and_says_times_in_the_organisations_zone(berlin, settings):
    settings.BRAIN_EXTRACT_FACTS = False
    actor = make_actor(berlin, make_user(berlin, username="mira"))
    plan = save(actor, "BigCo pricing notes", PLAN)
    report = _report(actor, "What does the BigCo Team plan cost?")

    assert "No language model wrote this" in report
    assert "Evidence digest for 2026-12-04 17:00 Europe/Berlin" in report
    assert "UTC" not in report
    assert not re.search(r"\b(doc|chunk|mem|ent)_\d+", report)  # no ids: links
    link = f"[BigCo pricing notes]({settings.BRAIN_BASE_URL}{reverse('memory-document', args=[plan.pk])})"
    assert link in report
    assert "The Team plan costs 29 EUR per seat a month and is billed yearly in advance." in report
    flat = " ".join(PLAN.split())
    holds = report.split("## What memory holds")[1].split("##")[0]
    for line in holds.splitlines():
        if line.startswith("- **["):
            quoted = line.split(": ", 1)[1]
            for sentence in sentences(quoted):  # every sentence quoted is one of the source's, whole
                assert re.search(r"[.!?]$", sentence), sentence
                assert sentence in flat, sentence


@pytest.mark.django_db
def test_a_job_that_asks_about_promises_gets_a_registers_section_with_linked_sources(berlin, settings):
    settings.BRAIN_EXTRACT_FACTS = False
    Features.objects.filter(org=berlin).update(commitments=True)
    actor = make_actor(berlin, make_user(berlin, username="omar"))
    notes = save(actor, "BigCo kick-off notes", "Priya will send BigCo the signed contract by Friday.")
    record_commitment(
        actor=actor,
        owner="Priya",
        what="Send BigCo the signed contract",
        due_on=date(2026, 12, 11),
        made_in=f"{notes.title} ({notes.public_id})",
    )
    record_commitment(actor=actor, owner="Omar", what="Order new chairs for the office")
    report = _report(actor, "What did we promise BigCo, and is anything overdue?")

    registers = report.split("## Registers")[1]
    assert "### Commitments" in registers
    assert "**Priya**: Send BigCo the signed contract (due 2026-12-11" in registers
    assert f"[BigCo kick-off notes]({settings.BRAIN_BASE_URL}{reverse('memory-document', args=[notes.pk])})" in (
        registers
    )
    assert "chairs" not in registers  # not about BigCo
    assert not re.search(r"\b(doc|chunk|mem|com)_\d+", report)


@pytest.mark.django_db
def test_a_job_that_does_not_ask_for_a_register_has_no_registers_section(berlin, settings):
    settings.BRAIN_EXTRACT_FACTS = False
    Features.objects.filter(org=berlin).update(commitments=True)
    actor = make_actor(berlin, make_user(berlin, username="nils"))
    report = _report(actor, "What changed about BigCo this week?")
    assert "## Registers" not in report


@pytest.mark.django_db
def test_a_register_switched_off_is_said_in_words(berlin, settings):
    settings.BRAIN_EXTRACT_FACTS = False
    actor = make_actor(berlin, make_user(berlin, username="ada"))
    report = _report(actor, "Which contradictions are open?")
    assert "The contradictions register is switched off in this organisation." in report
