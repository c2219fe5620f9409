"""A scripted company history: as_of answers, the timeline, SUPERSEDED marks and explore agree."""

from __future__ import annotations

from datetime import date, datetime, timedelta

import pytest
from django.utils import timezone

from brain.core.actors import Actor
from memory.extraction.shapes import ExtractedValue
from memory.graph import reads as graph
from memory.graph.writes import FactDraft, record_facts
from memory.models import Document, Fact
from memory.tests.factories import save

pytestmark = pytest.mark.django_db


def state(actor: Actor, recorded: datetime, statement: str, **draft: object) -> Fact:
    """Record one statement as Brain would have on ``recorded``."""
    document = save(actor, statement[:60], statement, ingest=False, source_kind=f"s{recorded:%s}")
    Document.objects.filter(pk=document.pk).update(recorded_at=recorded, status="ready")
    document.refresh_from_db()
    fact = record_facts(document=document, drafts=[FactDraft(statement=statement, **draft)])[0]  # type: ignore[arg-type]
    fact.refresh_from_db()
    return fact


def day(n: int) -> datetime:
    return timezone.make_aware(datetime(2026, 1, 1)) + timedelta(days=n)


def current(actor: Actor, query: str, as_of: date | None = None) -> list[str]:
    return [s.fact.statement for s in graph.search_facts(actor=actor, query=query, limit=10, as_of=as_of)]


@pytest.fixture
def history(actor):
    role = dict(object="Support", relation="head_of", single_valued=True)  # support has one head at a time
    sam = state(actor, day(0), "Sam is head of support.", subject="Sam", valid_from=date(2025, 1, 1), **role)
    priya = state(actor, day(60), "Priya is head of support.", subject="Priya", valid_from=date(2026, 3, 1), **role)
    price = dict(subject="Starter plan", single_valued=True)
    ten, twelve = [ExtractedValue("price", number=10.0, unit="EUR")], [ExtractedValue("price", number=12.0, unit="EUR")]
    wrong = state(actor, day(10), "The starter plan costs 10 euros.", values=ten, valid_from=date(2026, 1, 1), **price)
    right = state(
        actor,
        day(12),
        "Correction: the starter plan costs 12 euros.",
        values=twelve,
        valid_from=date(2026, 1, 1),
        **price,
    )
    deal = dict(subject="Globex deal", single_valued=True)
    first_value = state(
        actor,
        day(20),
        "The Globex deal is worth 40000 USD.",
        values=[ExtractedValue("deal_value", number=40000.0, unit="USD")],
        **deal,
    )
    restated = state(
        actor,
        day(40),
        "The Globex deal is now worth 55000 USD after the upsell.",
        values=[ExtractedValue("deal_value", number=55000.0, unit="USD")],
        **deal,
    )
    office = dict(subject="Acme", relation="office_in", single_valued=True)
    lisbon = state(
        actor, day(30), "Acme's office is in Lisbon.", object="Lisbon", valid_from=date(2025, 6, 1), **office
    )
    late = state(actor, day(50), "Acme's office was in Porto.", object="Porto", valid_from=date(2024, 1, 1), **office)
    unrelated = state(actor, day(65), "Priya likes tea.", subject="Priya", relation="likes", object="tea")
    return {k: v for k, v in locals().items() if isinstance(v, Fact)}


def refreshed(fact: Fact) -> Fact:
    return Fact.objects.get(pk=fact.pk)


def test_a_role_that_changes_hands_closes_and_supersedes_the_old_holder(history):
    sam = refreshed(history["sam"])
    assert sam.superseded_by_id == history["priya"].pk
    assert sam.valid_to == date(2026, 3, 1)
    assert refreshed(history["priya"]).superseded_at is None


def test_a_corrected_price_supersedes_the_wrong_one_and_keeps_its_window(history):
    wrong = refreshed(history["wrong"])
    assert wrong.superseded_by_id == history["right"].pk
    assert wrong.valid_from == date(2026, 1, 1)
    assert wrong.valid_to is None


def test_a_restated_deal_value_replaces_the_first(history):
    assert refreshed(history["first_value"]).superseded_by_id == history["restated"].pk


def test_a_fact_recorded_late_about_an_earlier_time_is_closed_instead(history):
    late, lisbon = refreshed(history["late"]), refreshed(history["lisbon"])
    assert late.valid_to == date(2025, 6, 1)
    assert late.superseded_at is None
    assert lisbon.superseded_at is None
    assert lisbon.valid_to is None


def test_unrelated_facts_are_never_touched(history):
    assert all(refreshed(f).superseded_at is None for f in (history["unrelated"], history["priya"]))
    assert refreshed(history["unrelated"]).valid_to is None


def test_as_of_answers_tell_what_was_believed_then(actor, history):
    assert "Sam is head of support." in current(actor, "who is head of support", as_of=(day(30)).date())
    now = current(actor, "who is head of support")
    assert "Priya is head of support." in now
    assert "Sam is head of support." not in now
    assert "The starter plan costs 10 euros." in current(actor, "starter plan price", as_of=day(11).date())
    assert "The starter plan costs 10 euros." not in current(actor, "starter plan price")
    assert current(actor, "head of support", as_of=date(2025, 12, 1)) == []


def test_the_timeline_tells_the_same_story_oldest_first(actor, history):
    support = graph.resolve_entity(actor=actor, ref="Support")
    rows = graph.timeline(actor=actor, entity=support)
    assert [f.statement for f in rows] == ["Sam is head of support.", "Priya is head of support."]
    assert rows[0].superseded_by_id == rows[1].pk
    window = graph.timeline(actor=actor, start=day(55).date(), end=day(61).date())
    # day 60: Priya's fact was recorded and Sam's was superseded by it; nothing else changed then
    assert [f.statement for f in window] == ["Sam is head of support.", "Priya is head of support."]
    assert window[0].superseded_at == day(60)


def test_explore_shows_current_facts_and_history_on_request(actor, history):
    support = graph.resolve_entity(actor=actor, ref="support")
    now = graph.explore(actor=actor, entity=support)
    assert [f.statement for f in now.incoming] == ["Priya is head of support."]
    full = graph.explore(actor=actor, entity=support, include_superseded=True)
    assert {f.statement for f in full.incoming} == {"Priya is head of support.", "Sam is head of support."}
    then = graph.explore(actor=actor, entity=support, as_of=day(30).date())
    assert [f.statement for f in then.incoming] == ["Sam is head of support."]


def test_values_follow_the_current_facts(actor, history):
    values = graph.lookup_values(actor=actor, key="deal_value")
    assert [(v.entity.name, v.number) for v in values] == [("Globex deal", 55000.0)]
    then = graph.lookup_values(actor=actor, key="deal_value", as_of=day(30).date())
    assert [v.number for v in then] == [40000.0]
    assert ("price", 1) in graph.value_keys(actor=actor)


def test_nothing_is_deleted_by_supersession(actor, history):
    assert Fact.objects.filter(org=actor.org).count() == len(history)


def test_explore_two_hops_out_keeps_facts_between_neighbours_apart_from_those_about_the_entity(actor, history):
    support = graph.resolve_entity(actor=actor, ref="support")
    hood = graph.explore(actor=actor, entity=support, depth=2)
    assert [f.statement for f in hood.incoming] == ["Priya is head of support."]
    assert [f.statement for f in hood.further] == ["Priya likes tea."]  # Priya's, not about support
    assert not hood.outgoing
