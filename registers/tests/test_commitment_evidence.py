"""Only what was said after a promise, and says its subject was done, is cited as evidence that it
landed. The rule alone (no database), then on a sales team's real-looking week."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from memory.tests.factories import save
from registers.commitments.evidence import evidence_line, mentions_subject, said_after, says_done, subject_words
from registers.commitments.services import list_commitments, record_commitment
from registers.nightly import run_nightly
from registers.tests.helpers import switch_on

QUOTE = "Priya will send the revised quote to BigCo"


def test_a_sentence_saying_the_promised_thing_went_out_is_evidence():
    line = evidence_line("Morning! Yes, the revised quote for BigCo went out this morning.", what=QUOTE, owner="Priya")
    assert line is None  # the passage neither names Priya nor is hers
    line = evidence_line(
        "Morning! Yes, the revised quote for BigCo went out this morning.", speaker="Priya", what=QUOTE, owner="Priya"
    )
    assert line == "Yes, the revised quote for BigCo went out this morning."


def test_a_sentence_about_something_else_done_is_no_evidence_though_the_passage_names_the_subject():
    text = "Priya: I sent the invoice to Acme this morning. The BigCo call moved to Tuesday."
    assert evidence_line(text, speaker="Priya", what=QUOTE, owner="Priya") is None


def test_the_subject_is_what_was_promised_not_the_owner_nor_the_words_of_doing():
    subject = subject_words(QUOTE, "Priya")
    assert {"revis", "quot", "bigco"} <= subject
    assert not subject & {"priya", "send", "sent", "will"}
    assert mentions_subject("The quotes are ready", subject)  # "quote", "quotes", "quoted" are one word
    assert not mentions_subject("Priya sent it", subject)
    assert subject_words("Priya will get it done", "Priya") == frozenset()  # nothing to recognise it by


@pytest.mark.parametrize(
    "sentence",
    [
        "Has the revised quote been sent to BigCo?",
        "I'll have the revised quote sent to BigCo by Friday.",
        "The revised quote is not sent yet.",
        "The revised quote still needs to be sent.",
    ],
)
def test_a_question_a_new_promise_or_a_denial_is_no_evidence(sentence):
    assert not says_done(sentence)
    assert evidence_line(sentence, speaker="Priya", what=QUOTE, owner="Priya") is None


def test_said_after_is_strict_for_a_moment_and_from_the_start_of_the_day_for_a_day():
    promise = datetime(2026, 3, 2, 10, tzinfo=UTC)
    assert not said_after(promise, promise, exact=True)
    assert said_after(datetime(2026, 3, 2, 10, 1, tzinfo=UTC), promise, exact=True)
    day = datetime(2026, 3, 2, tzinfo=UTC)
    assert said_after(day, day, exact=False)
    assert not said_after(datetime(2026, 3, 1, 23, 59, tzinfo=UTC), day, exact=False)


def chat(actor, speaker, text, at):
    return save(
        actor,
        f"sales {at:%d %b}",
        f"{speaker}: {text}",
        speaker=speaker,
        conversation="sales",
        occurred_at=at,
        source_kind="slack",
    )


@pytest.mark.django_db
def test_a_busy_week_cites_only_the_line_said_after_the_promise_about_its_subject(actor, settings):
    settings.BRAIN_EXTRACT_FACTS = False
    switch_on(actor.org, "commitments")
    meeting = "Priya: Thanks all. I'll send the revised quote to BigCo by Friday.\n\nSam: Sounds good."
    save(actor, "BigCo meeting", meeting, occurred_at=datetime(2026, 3, 2, 10, tzinfo=UTC), source_kind="transcript")
    chat(
        actor,
        "Priya",
        "Quick one: the revised quote for BigCo went out, old version.",
        datetime(2026, 3, 1, 9, tzinfo=UTC),
    )
    chat(actor, "Priya", "I sent the invoice to Acme. The BigCo call is Tuesday.", datetime(2026, 3, 3, 9, tzinfo=UTC))
    chat(actor, "Priya", "Deployed the fix for the login page, done.", datetime(2026, 3, 3, 11, tzinfo=UTC))
    chat(actor, "Sam", "Priya, has the revised quote been sent to BigCo?", datetime(2026, 3, 4, 9, tzinfo=UTC))
    answer = chat(
        actor, "Priya", "Yes! The revised quote went out to BigCo this morning.", datetime(2026, 3, 5, 9, tzinfo=UTC)
    )
    run_nightly(actor.org)
    [item] = list_commitments(actor=actor)
    assert item.verdict is not None
    [found] = item.verdict.found
    assert found["document_pk"] == answer.pk
    assert found["line"] == "The revised quote went out to BigCo this morning."


@pytest.mark.django_db
def test_a_recorded_promise_with_only_unrelated_news_after_it_stays_open_with_nothing_cited(actor, settings):
    settings.BRAIN_EXTRACT_FACTS = False
    switch_on(actor.org, "commitments")
    kept = record_commitment(
        actor=actor, owner="Marta", what="Marta will renew the Northwind support contract", promised_on=date(2026, 3, 2)
    )
    chat(actor, "Marta", "Shipped the new onboarding checklist to the team.", datetime(2026, 3, 3, 9, tzinfo=UTC))
    chat(
        actor,
        "Marta",
        "Northwind signed the NDA, by the way, still waiting on them for the rest.",
        datetime(2026, 2, 27, 9, tzinfo=UTC),
    )
    run_nightly(actor.org)
    verdict = kept.verdicts.get()
    assert verdict.found == []
    assert not verdict.suggests_landed
    assert "stays open" in verdict.summary
