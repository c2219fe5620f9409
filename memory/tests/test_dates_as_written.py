"""Dates in what Brain keeps, through saving and ingestion: a fact's statement is the sentence as
written; the dates it names are resolved against the day it was said and kept in the fact's fields;
a habit or a clock time is no date at all."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from memory.models import Fact
from memory.tests.factories import save

pytestmark = pytest.mark.django_db

MONDAY = datetime(2025, 11, 24, 9, 30, tzinfo=UTC)


def only_fact(actor, text: str) -> Fact:
    document = save(actor, "Ops notes", text, occurred_at=MONDAY)
    facts = list(Fact.objects.filter(document=document).prefetch_related("values"))
    assert len(facts) == 1, [f.statement for f in facts]
    return facts[0]


@pytest.mark.parametrize(
    "sentence", ["The support rota changes every Monday at 10:00.", "Deploys happen every Friday after 14:00."]
)
def test_a_recurring_time_keeps_its_words_and_gives_no_date(actor, sentence):
    fact = only_fact(actor, sentence)
    assert fact.statement == sentence
    assert (fact.valid_from, fact.valid_to) == (None, None)
    assert not [v.date for v in fact.values.all() if v.date]


def test_a_day_and_a_clock_time_keep_their_words_and_the_day_is_in_the_fields(actor):
    fact = only_fact(actor, "The fire drill is on 9 December at 11:00.")
    assert fact.statement == "The fire drill is on 9 December at 11:00."
    assert fact.valid_from == date(2025, 12, 9)  # the year of the day it was said, not of the upload


def test_a_relative_day_is_read_from_when_it_was_said_into_the_fields(actor):
    fact = only_fact(actor, "Lena Fischer will update the finance wiki page tomorrow.")
    assert fact.statement == "Lena Fischer will update the finance wiki page tomorrow."
    assert fact.valid_from == date(2025, 11, 25)


def test_a_second_date_in_a_sentence_is_kept_as_a_typed_date_value(actor):
    fact = only_fact(actor, "Priya Shah starts the pilot on 1 December and reviews it on 15 December.")
    assert fact.statement == "Priya Shah starts the pilot on 1 December and reviews it on 15 December."
    assert fact.valid_from == date(2025, 12, 1)
    assert date(2025, 12, 15) in [v.date for v in fact.values.all()]


def facts_of(document) -> list[Fact]:
    return list(Fact.objects.filter(document=document).prefetch_related("values"))


def dates_of(fact: Fact) -> list[date]:
    return [d for d in (fact.valid_from, fact.valid_to, *(v.date for v in fact.values.all())) if d]


def test_a_yearly_rule_keeps_its_days_as_words_and_is_never_pinned_to_next_year(actor):
    rule = "We work 4-day weeks from May 1 through August 31 every year."
    fact = only_fact(actor, rule)
    assert fact.statement == rule
    assert dates_of(fact) == []


def test_a_page_that_gives_no_date_of_its_own_keeps_a_day_without_a_year_as_written(actor):
    document = save(actor, "Compensation policy", "Brain Co increases everyone's pay on January 1st after reviews.")
    (fact,) = facts_of(document)
    assert dates_of(fact) == []  # not the next 1 January after the day it was saved


def test_a_day_without_a_year_takes_its_year_from_the_moment_the_source_speaks_from(actor):
    fact = only_fact(actor, "The Lisbon kickoff with Priya Shah starts on 12 May.")
    assert fact.valid_from == date(2026, 5, 12)  # said in November 2025: the coming 12 May


@pytest.mark.parametrize(
    "sentence",
    [
        "Teams of 3+ engineers get a dedicated tech lead from Brain Co.",
        "An L2 designer at Brain Co reviews the work of two juniors.",
        "Brain Co moved the billing service to version 2.14 for the Acme account.",
    ],
)
def test_counts_levels_and_versions_are_not_dates(actor, sentence):
    document = save(actor, "Team notes", sentence, occurred_at=MONDAY)
    assert all(dates_of(fact) == [] for fact in facts_of(document))
