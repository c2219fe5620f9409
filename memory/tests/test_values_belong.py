"""Values belong to what they describe, through saving and ingestion: a table row's cells are values
of what the row is about; a sentence's value is filed under whose value it is, never under who
reported it; a value that used to be is kept as history; totals count each entity once and say when
its values disagree."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from memory.graph.reads import lookup_values
from memory.mcp_tools.graph import ValuesArgs, lookup_values_tool
from memory.models import Fact, Value
from memory.tests.factories import save

pytestmark = pytest.mark.django_db

MONDAY = datetime(2025, 11, 24, 9, 30, tzinfo=UTC)

PRICES = """# Plans

| Plan | Price per seat | Seats up to | Launched |
| --- | --- | --- | --- |
| Team | 29 EUR a month | 50 | 2024-03-01 |
| Business | 49 EUR a month | 500 | - |
"""


def values_of(actor, key: str) -> list[tuple[str, float | None, str]]:
    return sorted((v.entity.name, v.number, v.unit) for v in lookup_values(actor=actor, key=key))


def test_a_table_row_gives_each_cell_as_a_value_of_what_the_row_is_about(actor):
    document = save(actor, "Pricing", PRICES, content_type="text/markdown")
    assert values_of(actor, "price_per_seat") == [("Business", 49.0, "EUR"), ("Team", 29.0, "EUR")]
    assert values_of(actor, "seats_up_to") == [("Business", 500.0, ""), ("Team", 50.0, "")]
    [launched] = lookup_values(actor=actor, key="launched")
    assert (launched.entity.name, launched.date) == ("Team", date(2024, 3, 1))  # "-" states nothing
    # One fact per row, about the row's subject, in words without table syntax.
    facts = Fact.objects.filter(document=document).select_related("subject").order_by("pk")
    rows = [(f.subject.name if f.subject else None, f.statement) for f in facts]
    assert ("Team", "Team: Price per seat: 29 EUR a month; Seats up to: 50; Launched: 2024-03-01.") in rows
    assert not any("|" in statement for _, statement in rows)


def test_a_row_whose_subject_is_a_bare_number_is_that_number_of_the_document(actor):
    table = "| Version | Date | Author |\n| --- | --- | --- |\n| 1.1 | 2023-05-31 | Dora Neumeier |\n"
    save(actor, "Asset Policy", table, content_type="text/markdown")
    [value] = lookup_values(actor=actor, key="date")
    assert (value.entity.name, value.date) == ("Asset Policy 1.1", date(2023, 5, 31))
    assert Value.objects.get(key="author").text == "Dora Neumeier"


@pytest.mark.parametrize(
    "sentence",
    ["BigCo renews on 1 December, Priya said.", "Priya Shah said that BigCo renews on 1 December."],
)
def test_a_value_is_filed_under_what_the_sentence_is_about_not_who_reported_it(actor, sentence):
    save(actor, "Call notes", sentence, occurred_at=MONDAY)
    [value] = lookup_values(actor=actor, key="renewal_date")
    assert (value.entity.name, value.date) == ("BigCo", date(2025, 12, 1))


def test_a_value_that_is_a_persons_own_stays_with_the_person(actor):
    save(actor, "HR notes", "Priya Shah starts on 1 December.", occurred_at=MONDAY)
    [value] = lookup_values(actor=actor, key="start_date")
    assert value.entity.name == "Priya Shah"


def test_what_it_used_to_be_is_history_and_the_value_now_is_current(actor):
    document = save(
        actor, "Office notes", "The Lisbon office rent used to be 8,000 EUR; it is now 9,500 EUR.", occurred_at=MONDAY
    )
    earlier, now = Fact.objects.filter(document=document).order_by("pk")
    assert earlier.statement == "The Lisbon office rent used to be 8,000 EUR"
    assert (earlier.superseded_by, now.superseded_at) == (now, None)
    assert [(v.number, v.unit) for v in lookup_values(actor=actor, key="amount")] == [(9500.0, "EUR")]


def test_a_later_value_of_the_same_thing_supersedes_the_earlier_and_keeps_it_as_history(actor):
    save(actor, "Price list", "The Enterprise plan costs 40,000 EUR a year.", occurred_at=MONDAY)
    later = datetime(2025, 12, 8, 9, 0, tzinfo=UTC)
    save(actor, "Price update", "The Enterprise plan now costs 45,000 EUR a year.", occurred_at=later)
    assert [v.number for v in lookup_values(actor=actor, key="price")] == [45000.0]
    old = Fact.objects.get(statement__startswith="The Enterprise plan costs")
    assert old.superseded_by is not None
    assert old.superseded_by.statement.startswith("The Enterprise plan now")


def test_a_total_counts_each_customer_once_and_says_when_its_values_disagree(actor):
    save(actor, "Pipeline", "The Globex deal is worth 40,000 EUR.", occurred_at=MONDAY)
    save(actor, "Forecast", "The Globex deal is worth 45,000 EUR.", occurred_at=datetime(2025, 11, 25, tzinfo=UTC))
    save(actor, "Deals", "The Initech deal is worth 10,000 EUR.", occurred_at=MONDAY)
    out = lookup_values_tool(actor, ValuesArgs(key="deal_value"))
    assert out.total == 55000.0  # Globex's latest stated value once, not 40k + 45k
    [conflict] = out.conflicts
    assert conflict.entity.name == "Globex"
    assert [v.number for v in conflict.values] == [45000.0, 40000.0]
    assert "Values conflict for Globex" in out.to_text()


def test_one_amount_written_two_ways_is_no_conflict(actor):
    save(actor, "Pipeline", "The Globex deal is worth 40,000 EUR.", occurred_at=MONDAY)
    save(actor, "Forecast", "The Globex deal is worth EUR 40,000.", occurred_at=datetime(2025, 11, 25, tzinfo=UTC))
    out = lookup_values_tool(actor, ValuesArgs(key="deal_value"))
    assert (out.total, out.conflicts) == (40000.0, [])


def test_two_amounts_of_one_customer_are_not_added_whatever_their_key(actor):
    save(actor, "Ledger", "Globex owes us 4,000 EUR.", occurred_at=MONDAY)
    save(actor, "Reminder", "Globex owes us 5,000 EUR.", occurred_at=datetime(2025, 11, 25, tzinfo=UTC))
    [key] = {v.key for v in Value.objects.all()}
    out = lookup_values_tool(actor, ValuesArgs(key=key))
    assert out.total == 5000.0
    assert [c.entity.name for c in out.conflicts] == ["Globex"]
