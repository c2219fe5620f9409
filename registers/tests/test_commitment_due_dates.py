"""A promise's due date: read from the day it was said, and never before it."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from memory.tests.factories import save
from registers.commitments.extraction import Utterance, extract_commitments
from registers.commitments.services import list_commitments
from registers.nightly import run_nightly
from registers.tests.helpers import switch_on

MONDAY = date(2025, 11, 24)


@pytest.mark.django_db
def test_by_friday_said_on_a_monday_is_due_that_friday_in_the_register(actor, settings):
    settings.BRAIN_EXTRACT_FACTS = False
    switch_on(actor.org, "commitments")
    save(
        actor,
        "Re: quote",
        "Marta Ruiz will send the quote by Friday.",
        source_kind="email",
        occurred_at=datetime(2025, 11, 24, 9, tzinfo=UTC),
    )
    run_nightly(actor.org, only="commitments")
    [item] = list_commitments(actor=actor, state="all")
    promise = item.commitment
    assert (promise.owner_name, promise.promised_on, promise.due_on) == ("Marta Ruiz", MONDAY, date(2025, 11, 28))


def due(text: str, said_on: date) -> date | None:
    [draft] = extract_commitments([Utterance(speaker="Marta Ruiz", text=text, said_on=said_on, ref=1)])
    return draft.due_on


@pytest.mark.parametrize(
    ("text", "wanted"),
    [
        ("I'll send the quote by Friday.", date(2025, 11, 28)),  # never the Friday before
        ("I'll send the quote by 14 November 2025.", MONDAY),  # a date already past: due the day promised
        ("I'll send the quote by 14 November.", date(2026, 11, 14)),  # no year: the next one
        ("I'll send the quote next week.", date(2025, 12, 5)),  # a week: its Friday
        ("I'll send the quote on Monday.", date(2025, 12, 1)),  # said on a Monday: the next one
        ("I'll draft the Q1 forecast by the 12th.", date(2025, 12, 12)),  # the deadline, not the quarter
    ],
)
def test_a_promise_is_never_due_before_it_was_made(text, wanted):
    assert due(text, MONDAY) == wanted
