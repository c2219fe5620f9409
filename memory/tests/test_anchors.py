"""Questions that give their time by an event or a date on one side of it: "before the launch",
"since Priya's trip", "after May 2025"."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from memory.index.candidates import access_and_time
from memory.search.anchors import Anchor, anchor, anchored_window
from memory.search.passages import search_chunks
from memory.search.when import Window
from memory.tests.factories import said, save

TODAY = date(2026, 12, 1)


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("What did Priya say about pricing before the launch?", Anchor("before", event="launch")),
        ("How did Tom feel after the Reno go-live?", Anchor("after", event="Reno go-live")),
        ("What did Nadia cook since her trip to Boston?", Anchor("since", event="trip to Boston")),
        ("What worried Clara in the weeks leading up to the wedding?", Anchor("before", event="wedding")),
        ("Prior to our offsite, who owned hiring?", Anchor("before", event="offsite")),
        ("Following the database outage, what did Sam change?", Anchor("after", event="database outage")),
        ("What did Maya plan ahead of the Reno go-live when Tom called?", Anchor("before", event="Reno go-live")),
        ("Ahead of Mother's Day, what did Nadia plan to cook?", Anchor("before", event="Mother's Day")),
        ("After Halloween, which prize was Tara after?", Anchor("after", event="Halloween")),
        (
            "Since finishing her last exam, what class has Hannah taken?",
            Anchor("since", event="finishing her last exam"),
        ),
        ("What changed after May 2025?", Anchor("after", time=Window(date(2025, 5, 1), date(2025, 6, 1)))),
        ("What broke since last week?", Anchor("since", time=Window(date(2026, 11, 23), date(2026, 11, 30)))),
        ("What did we agree before June?", Anchor("before")),  # no year: no window, and not June itself
        ("Plans for the weekend before the 4th of July?", Anchor("before")),
        ("What shipped after the 4th of July 2025?", Anchor("after", time=Window(date(2025, 7, 4), date(2025, 7, 5)))),
        ("What did we do before the weekend?", None),  # a time, not an event anyone dated
        ("What happened after that?", None),
        ("Who called before Priya did?", None),
        ("What did Tom change after Raj complained?", None),  # a clause, not an event's name
        ("I will do it before it rains", None),
        ("What is the refund policy?", None),
    ],
)
def test_a_side_of_an_event_or_a_date_is_read_from_the_question(question, expected):
    assert anchor(question, TODAY) == expected


def _pricing_before_and_after_the_launch(actor):
    said(actor, "Priya", "Pricing will be twenty dollars a seat for everyone.", datetime(2026, 1, 10, tzinfo=UTC))
    said(actor, "Tom", "We launched today, the site is live!", datetime(2026, 2, 1, tzinfo=UTC))
    said(actor, "Priya", "Pricing moved to twenty-five dollars a seat.", datetime(2026, 3, 5, tzinfo=UTC))
    # Pages with no date: in no window, so neither side holds most of what the question is near.
    for title in ("Office plants", "Projector booking", "Lunch rota", "Parking", "Fire drill"):
        save(actor, title, f"{title}: see the notice board for details.")


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("side", "month"), [("before the launch", 1), ("after the launch", 3), ("since the launch", 3)]
)
def test_a_question_about_one_side_of_an_event_favours_what_was_said_on_that_side(actor, side, month):
    _pricing_before_and_after_the_launch(actor)
    result = search_chunks(actor=actor, query=f"What did Priya say about pricing {side}?", top_k=3)
    assert result.hits[0].said_at is not None
    assert result.hits[0].said_at.month == month
    assert "side" in result.hits[0].ranks


@pytest.mark.django_db
def test_a_date_on_one_side_favours_what_was_said_on_that_side_not_on_the_date(actor):
    said(actor, "Priya", "The pricing page copy is final.", datetime(2025, 4, 20, tzinfo=UTC))
    said(actor, "Priya", "The pricing page copy changed again.", datetime(2025, 5, 20, tzinfo=UTC))
    said(actor, "Maya", "Lunch at noon?", datetime(2025, 7, 1, tzinfo=UTC))
    hits = search_chunks(actor=actor, query="What did Priya say about the pricing page before May 2025?", top_k=2).hits
    assert hits[0].said_at == datetime(2025, 4, 20, tzinfo=UTC)


@pytest.mark.django_db
def test_only_what_the_caller_may_read_dates_an_event(actor, insider):
    # The only message dating the launch is one the caller may not read: no window, and nothing
    # the caller receives depends on when the hidden message was written.
    said(insider, "Tom", "Board only: the launch happened today.", datetime(2026, 2, 1, tzinfo=UTC), category="board")
    said(actor, "Priya", "Pricing will be twenty dollars a seat.", datetime(2026, 1, 10, tzinfo=UTC))
    said(actor, "Priya", "Pricing moved to twenty-five dollars a seat.", datetime(2026, 3, 5, tzinfo=UTC))
    result = search_chunks(actor=actor, query="What did Priya say about pricing before the launch?", top_k=3)
    assert result.candidates["side"] == 0
    assert all(hit.speaker == "Priya" for hit in result.hits)


@pytest.mark.django_db
@pytest.mark.parametrize("question", ["What did Priya say before the merger?", "What did Priya say before June?"])
def test_an_event_no_one_mentioned_or_a_date_without_a_year_adds_nothing(actor, question):
    _pricing_before_and_after_the_launch(actor)
    result = search_chunks(actor=actor, query=question, top_k=3)
    assert result.candidates["side"] == 0
    assert len(result.hits) == 3


@pytest.mark.django_db
def test_a_side_holding_most_of_what_the_question_is_near_still_narrows_it(actor):
    # Two of three messages fall before the launch (the launch message itself is on its day):
    # more than a month's window may hold, and still the question's own condition.
    said(actor, "Priya", "Pricing will be twenty dollars a seat for everyone.", datetime(2026, 1, 10, tzinfo=UTC))
    said(actor, "Tom", "We launched today, the site is live!", datetime(2026, 2, 1, tzinfo=UTC))
    said(actor, "Priya", "Pricing moved to twenty-five dollars a seat.", datetime(2026, 3, 5, tzinfo=UTC))
    result = search_chunks(actor=actor, query="What did Priya say about pricing before the launch?", top_k=3)
    assert result.candidates["side"] == 2
    assert result.hits[0].said_at == datetime(2026, 1, 10, tzinfo=UTC)


@pytest.mark.django_db
@pytest.mark.parametrize(
    "question",
    [
        "before " * 280,
        "before the " * 180,
        "after the " + "x" * 1900,
        "since " + "May " * 400,
        "before Mother's " * 120,
        "after the launch, " * 110,
        "before the 'launch' & !(pricing) | :*",
        "before 1 January 0001",
        "after 31 December 9999",
        "since 9999-12-31",
        "after 99999999999999 May 2025",
    ],
)
def test_absurd_sides_never_fail(actor, question):
    _pricing_before_and_after_the_launch(actor)
    assert len(search_chunks(actor=actor, query=question[:2000], top_k=3).hits) == 3


@pytest.mark.django_db
def test_after_an_event_starts_from_its_first_mention_not_a_later_look_back(actor):
    said(
        actor,
        "Tom",
        "We launched the new site this morning, and the launch went fine.",
        datetime(2026, 2, 1, tzinfo=UTC),
    )
    said(actor, "Tom", "Launch retro.", datetime(2026, 4, 20, tzinfo=UTC))  # the shortest, so the best match
    said(actor, "Priya", "Pricing moved to twenty-five dollars a seat.", datetime(2026, 3, 5, tzinfo=UTC))
    where = access_and_time(actor, None)
    after = anchored_window(Anchor("after", event="launch"), where)
    before = anchored_window(Anchor("before", event="launch"), where)
    assert after == Window(date(2026, 2, 1), date.max)
    assert before == Window(date.min, date(2026, 4, 21))  # to the end of the best match's day


@pytest.mark.django_db
def test_another_organisations_messages_never_date_an_event(actor, other_org_actor):
    said(other_org_actor, "Tom", "We launched today!", datetime(2026, 2, 1, tzinfo=UTC))
    said(actor, "Priya", "Pricing will be twenty dollars a seat.", datetime(2026, 1, 10, tzinfo=UTC))
    said(actor, "Priya", "Pricing moved to twenty-five dollars a seat.", datetime(2026, 3, 5, tzinfo=UTC))
    where = access_and_time(actor, None)
    assert anchored_window(Anchor("before", event="launch"), where) is None
    result = search_chunks(actor=actor, query="What did Priya say about pricing before the launch?", top_k=3)
    assert result.candidates["side"] == 0
    assert all(hit.speaker == "Priya" for hit in result.hits)
