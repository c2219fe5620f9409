"""Conversations found by when things were said: the time a question speaks of read as a window
of days, timestamps as exports write them, and "when" questions favouring turns that say a time."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from memory.index.fusion import REPEAT_SHARES, repeats
from memory.search.passages import search_chunks
from memory.search.rerank import SAYS_A_TIME
from memory.search.when import Window, parse_moment, window
from memory.tests.factories import said

TODAY = date(2026, 12, 1)


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("What did Maya say in May?", Window(date(2026, 5, 1), date(2026, 6, 1), yearless=True)),
        ("What was decided in December?", Window(date(2026, 12, 1), date(2027, 1, 1), yearless=True)),  # this month
        ("plans for March 2025", Window(date(2025, 3, 1), date(2025, 4, 1))),
        ("what happened on 8 May 2023", Window(date(2023, 5, 8), date(2023, 5, 9))),
        ("the deploy of 2026-05-04", Window(date(2026, 5, 4), date(2026, 5, 5))),
        ("March 3rd plans", Window(date(2026, 3, 3), date(2026, 3, 4), yearless=True)),
        ("When did she go camping during the summer?", Window(date(2026, 6, 1), date(2026, 9, 1), yearless=True)),
        ("plans for the winter of 2025", Window(date(2025, 12, 1), date(2026, 3, 1))),
        ("what did we ship in the fall?", Window(date(2026, 9, 1), date(2026, 12, 1), yearless=True)),
        ("summer plans", None),
        ("what if prices fall", None),
        ("spring cleaning of the backlog", None),
        ("What broke last week?", Window(date(2026, 11, 23), date(2026, 11, 30))),
        ("What did we say yesterday?", Window(date(2026, 11, 30), date(2026, 12, 1))),
        ("the budget during 2025", Window(date(2025, 1, 1), date(2026, 1, 1))),
        ("what may happen next", None),
        ("May we ship it?", None),
        ("What is the refund policy?", None),
    ],
)
def test_the_time_a_question_speaks_of_is_read_as_a_window_of_days(question, expected):
    assert window(question, TODAY) == expected


def test_a_month_still_to_come_this_year_means_last_years():
    expected = Window(date(2025, 12, 1), date(2026, 1, 1), yearless=True)
    assert window("What was decided in December?", date(2026, 3, 1)) == expected


def test_a_window_without_a_year_moves_back_a_year_at_a_time():
    june, leap_day = window("in June", TODAY), window("on 29 February", date(2024, 3, 1))
    assert june is not None
    assert leap_day is not None
    assert june.years_earlier(3) == Window(date(2023, 6, 1), date(2023, 7, 1), yearless=True)
    assert leap_day.years_earlier(1) is None


@pytest.mark.parametrize(
    "question",
    ["deploy of 9999-12-31", "in December 9999", "on 31 December 9999", "in May 0000", "in the winter of 9999"],
)
def test_a_time_at_the_edge_of_the_calendar_is_no_window(question):
    assert window(question, TODAY) is None


@pytest.mark.django_db
def test_a_search_for_a_time_at_the_edge_of_the_calendar_answers_like_any_other(actor):
    said(actor, "Maya", "The deploy freeze starts in December.", datetime(2026, 12, 1, tzinfo=UTC))
    hits = search_chunks(actor=actor, query="What happens on 31 December 9999 with the deploy freeze?", top_k=3).hits
    assert [h.speaker for h in hits] == ["Maya"]


def test_absurd_counts_and_dates_never_fail():
    assert window("99999999999 years ago", TODAY) is not None
    assert parse_moment("31 February 2023") is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2023-05-08T13:56:00+02:00", datetime.fromisoformat("2023-05-08T13:56:00+02:00")),
        ("2023-05-08", datetime(2023, 5, 8, tzinfo=UTC)),
        ("1:56 pm on 8 May, 2023", datetime(2023, 5, 8, 13, 56, tzinfo=UTC)),
        ("12:30 am on 2 June, 2023", datetime(2023, 6, 2, 0, 30, tzinfo=UTC)),
        ("May 8, 2023 1:56 PM", datetime(2023, 5, 8, 13, 56, tzinfo=UTC)),
        ("1683554160", datetime(2023, 5, 8, 13, 56, tzinfo=UTC)),
        ("1683554160000", datetime(2023, 5, 8, 13, 56, tzinfo=UTC)),
        ("2023/05/08 13:56", datetime(2023, 5, 8, 13, 56, tzinfo=UTC)),
        ("2023/5/8", datetime(2023, 5, 8, tzinfo=UTC)),
        ("2023/05/08T13:56:00+02:00", datetime.fromisoformat("2023-05-08T13:56:00+02:00")),
        ("20230508T135600Z", datetime(2023, 5, 8, 13, 56, tzinfo=UTC)),
        ("20230508", datetime(2023, 5, 8, tzinfo=UTC)),
        ("2023/05/20 (Sat) 02:21", datetime(2023, 5, 20, 2, 21, tzinfo=UTC)),
        ("2023/05/20 (Sat) 2:21 pm", datetime(2023, 5, 20, 14, 21, tzinfo=UTC)),
        ("20/05/2023 14:00", datetime(2023, 5, 20, 14, 0, tzinfo=UTC)),
        ("05/20/2023 2:00 PM", datetime(2023, 5, 20, 14, 0, tzinfo=UTC)),
        ("5/8/2023", datetime(2023, 5, 8, tzinfo=UTC)),
        ("08.05.2023 13:56", datetime(2023, 5, 8, 13, 56, tzinfo=UTC)),
        ("08-05-2023", datetime(2023, 5, 8, tzinfo=UTC)),
        ("2023/05/20 (Sat) 27:99", None),
        ("12/31/99999", None),
        ("2023/13/45", None),
        ("999999999999", None),
        ("sometime", None),
    ],
)
def test_timestamps_are_read_as_exports_write_them(text, expected):
    assert parse_moment(text) == expected


@pytest.mark.django_db
def test_a_question_about_a_month_favours_what_was_said_in_it(actor):
    said(actor, "Maya", "The price for the starter plan is under review.", datetime(2026, 3, 10, tzinfo=UTC))
    said(actor, "Maya", "We discussed the starter plan price again.", datetime(2026, 5, 12, tzinfo=UTC))
    hits = search_chunks(actor=actor, query="What did we say about the starter plan price in May?", top_k=2).hits
    assert hits[0].said_at == datetime(2026, 5, 12, tzinfo=UTC)
    assert "time" in hits[0].ranks


@pytest.mark.django_db
@pytest.mark.parametrize("when", ["in June", "on 20 June", "during the summer"])
def test_a_month_named_without_a_year_is_the_latest_one_anything_was_said_in(actor, when):
    # An archive of 2023, asked in 2026: "in June" is June 2023, not the June of this year.
    said(actor, "Maya", "We went camping by the lake with the kids.", datetime(2023, 3, 10, tzinfo=UTC))
    said(actor, "Maya", "We went camping in the mountains, the kids loved it.", datetime(2023, 6, 20, tzinfo=UTC))
    said(actor, "Maya", "Camping again soon, maybe by the sea.", datetime(2024, 1, 5, tzinfo=UTC))
    result = search_chunks(actor=actor, query=f"Where did Maya go camping {when}?", top_k=3)
    assert result.candidates["time"] == 1
    assert result.hits[0].said_at == datetime(2023, 6, 20, tzinfo=UTC)
    assert "time" in result.hits[0].ranks


@pytest.mark.django_db
def test_the_year_a_month_is_moved_to_depends_only_on_what_the_caller_may_read(actor, insider):
    said(insider, "Maya", "Board: we agreed the camping budget.", datetime(2025, 6, 3, tzinfo=UTC), category="board")
    said(actor, "Maya", "We went camping in the mountains.", datetime(2023, 6, 20, tzinfo=UTC))
    said(actor, "Maya", "Camping by the lake was fun.", datetime(2023, 3, 10, tzinfo=UTC))
    result = search_chunks(actor=actor, query="Where did Maya go camping in June?", top_k=3)
    assert result.hits[0].said_at == datetime(2023, 6, 20, tzinfo=UTC)
    assert result.candidates["time"] == 1
    assert {h.said_at.year for h in result.hits if h.said_at} == {2023}


@pytest.mark.django_db
def test_a_time_that_holds_the_whole_conversation_narrows_nothing(actor):
    # Everything was said in May: the May arm would only repeat the vector arm, weighing it up.
    for day, text in enumerate(["Camping was fun.", "The lake was cold.", "We hiked all day.", "Rain again."], 1):
        said(actor, "Maya", text, datetime(2023, 5, day, tzinfo=UTC))
    result = search_chunks(actor=actor, query="Where did Maya go camping in May?", top_k=3)
    assert result.candidates["time"] == 0
    assert all("time" not in hit.ranks for hit in result.hits)


def test_a_narrowed_arm_repeats_the_vector_arm_when_it_holds_most_of_its_rows():
    nearest = [(1, 0.9), (2, 0.8), (3, 0.7), (4, 0.6)]
    assert repeats([(1, 0.9), (2, 0.8), (3, 0.7)], nearest, REPEAT_SHARES["time"])
    assert not repeats([(1, 0.9), (2, 0.8)], nearest, REPEAT_SHARES["time"])  # half of them
    assert not repeats([(9, 0.5)], nearest, REPEAT_SHARES["time"])
    assert not repeats([], nearest, REPEAT_SHARES["time"])


@pytest.mark.django_db
def test_a_month_with_nothing_said_in_any_recent_year_adds_nothing(actor):
    said(actor, "Maya", "We went camping in the mountains.", datetime(2003, 6, 20, tzinfo=UTC))
    result = search_chunks(actor=actor, query="Where did Maya go camping in June?", top_k=3)
    assert result.candidates["time"] == 0
    assert [h.speaker for h in result.hits] == ["Maya"]


@pytest.mark.parametrize(
    "text",
    [
        "I went two weeks ago",
        "a few days ago we met",
        "booked ages ago",
        "see you in a month",
        "last summer",
        "the other day at lunch",
        "on Friday",
        "at 3pm",
        "on the 12th",
    ],
)
def test_a_turn_saying_a_time_the_way_people_chat_is_seen_to_say_one(text):
    assert SAYS_A_TIME.search(text)


def test_a_turn_without_a_time_is_not_seen_to_say_one():
    assert not SAYS_A_TIME.search("the agonizing wait for the app to load")


@pytest.mark.django_db
@pytest.mark.parametrize("asking", ["When does", "On what day does", "Roughly when does", "Which day does"])
def test_a_question_asking_when_favours_the_turn_that_says_a_time(actor, asking):
    at = datetime(2026, 4, 1, 9, 0, tzinfo=UTC)
    said(actor, "Maya", "The Lisbon trip is for the warehouse audit with the client.", at, conversation="a")
    said(actor, "Maya", "I fly to Lisbon on Thursday for the audit.", at.replace(minute=5), conversation="b")
    hits = search_chunks(actor=actor, query=f"{asking} Maya fly to Lisbon for the warehouse audit?", top_k=2).hits
    assert hits[0].text == "I fly to Lisbon on Thursday for the audit."
