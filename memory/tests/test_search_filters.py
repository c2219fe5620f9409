"""Typed filters inside the search's SQL: every arm ranks among the rows that pass them, under the
caller's access, and no value of a filter becomes SQL."""

from __future__ import annotations

from datetime import UTC, date, datetime
from types import SimpleNamespace

import pytest
from django.db import connection

from brain.core.errors import InvalidArgument
from brain.models import Category
from conftest import make_actor
from memory.index.candidates import (
    FILTERS,
    SAID_BY_WHOM_SQL,
    Filtered,
    access_and_time,
    first_said_in,
    keyword_candidates,
    vector_candidates,
)
from memory.index.serving import query_vector
from memory.models import Chunk
from memory.search.filters import SearchFilters, category_named, filter_choices, filtered
from memory.search.passages import search_chunks
from memory.tests.factories import said, save

pytestmark = pytest.mark.django_db

PLACES = [
    "Lisbon",
    "Berlin",
    "Paris",
    "Madrid",
    "Rome",
    "Vienna",
    "Prague",
    "Warsaw",
    "Dublin",
    "Oslo",
    "Helsinki",
    "Athens",
    "Sofia",
    "Riga",
    "Tallinn",
]
QUESTION = "how much does the Team plan cost per seat"


def titles(actor, query, **kw):
    return [hit.title for hit in search_chunks(actor=actor, query=query, per_document=True, **kw).hits]


@pytest.fixture
def crowded(actor):
    """Sixty pages that answer the question, more than any arm's candidates, and one mail that
    hardly touches it."""
    for i in range(60):
        where, year = PLACES[i % len(PLACES)], 2020 + i // len(PLACES)
        text = f"In {where} the Team plan costs {20 + i} EUR per seat a month from {year}; ask {where} sales."
        save(actor, f"Pricing page {i}", text, source_kind="wiki")
    save(actor, "Mail from sales", "Seat counts for the renewal went to finance on Friday.", source_kind="email")
    return actor


def test_a_filtered_search_finds_what_the_unfiltered_top_twenty_leaves_out(crowded):
    assert "Mail from sales" not in titles(crowded, QUESTION, top_k=20)
    found = titles(crowded, QUESTION, top_k=20, filters=SearchFilters(source_kind="email"))
    assert found == ["Mail from sales"]


@pytest.mark.parametrize("mode", ["auto", "vector", "keyword"])
def test_each_mode_ranks_only_among_the_rows_that_pass(crowded, mode):
    result = search_chunks(
        actor=crowded, query=QUESTION, top_k=20, mode=mode, filters=SearchFilters(source_kind="email")
    )
    assert [hit.title for hit in result.hits] == ["Mail from sales"]
    assert result.found
    assert set(result.found) == {hit.chunk_id for hit in result.hits}


def conversation(actor):
    may = datetime(2025, 5, 14, 10, tzinfo=UTC)
    june = datetime(2025, 6, 20, 10, tzinfo=UTC)
    said(actor, "Priya Shah", "The pilot budget for BigCo is 40k EUR.", may, source_kind="chat")
    said(actor, "Sam Lee", "The pilot budget for BigCo might grow next quarter.", may, source_kind="chat")
    said(actor, "Priya Shah", "The BigCo pilot budget was approved at 45k EUR.", june, source_kind="chat")
    save(actor, "BigCo pilot", "Pilot budget for BigCo: 40k EUR, owner Priya.", source_kind="wiki")


def passes(chunk_id: int, *, speaker=None, kind=None, after=None, before=None) -> bool:
    chunk = Chunk.objects.select_related("document").get(pk=chunk_id)
    when = chunk.said_at or chunk.document.occurred_at or chunk.document.recorded_at
    return (
        (speaker is None or chunk.speaker == speaker)
        and (kind is None or chunk.document.source_kind == kind)
        and (after is None or when.date() >= after)
        and (before is None or when.date() <= before)
    )


def test_the_speaker_and_time_arms_honour_the_filters_too(actor):
    conversation(actor)
    # The question names Priya (the speaker arm) and May (the time arm); the filters ask for Sam's
    # words in June or later, which none of the arms may bring.
    question = "what did Priya say about the BigCo pilot budget in May 2025"
    unfiltered = search_chunks(actor=actor, query=question, top_k=10)
    assert {"speaker", "time"} <= set(unfiltered.candidates)
    result = search_chunks(
        actor=actor, query=question, top_k=10, filters=SearchFilters(speaker="Sam Lee", said_after=date(2025, 5, 1))
    )
    assert {"speaker", "time", "vector", "keyword"} <= set(result.candidates)
    assert result.found
    assert all(passes(cid, speaker="Sam Lee", after=date(2025, 5, 1)) for cid in result.found)
    assert [hit.title for hit in result.hits] == ["Sam Lee"]


def test_a_range_of_days_is_the_organisations_days_both_included(actor):
    actor.org.time_zone = "Europe/Berlin"
    actor.org.save()
    # 23:30 UTC on 31 May is 1 June in Berlin.
    said(actor, "Priya Shah", "The BigCo pilot budget is settled.", datetime(2025, 5, 31, 23, 30, tzinfo=UTC))
    june = SearchFilters(said_after=date(2025, 6, 1), said_before=date(2025, 6, 1))
    may = SearchFilters(said_after=date(2025, 5, 1), said_before=date(2025, 5, 31))
    assert titles(actor, "BigCo pilot budget", filters=june) == ["Priya Shah"]
    assert titles(actor, "BigCo pilot budget", filters=may) == []


def test_the_first_and_last_days_there_are_are_days_like_any(actor):
    said(actor, "Priya Shah", "The BigCo pilot budget is settled.", datetime(2025, 5, 31, tzinfo=UTC))
    every_day = SearchFilters(said_after=date.min, said_before=date.max)
    assert titles(actor, "BigCo pilot budget", filters=every_day) == ["Priya Shah"]
    assert titles(actor, "BigCo pilot budget", as_of=date.max, as_of_by="said") == ["Priya Shah"]


def test_a_page_without_a_time_of_its_own_is_dated_by_its_document(actor):
    page = save(
        actor, "Budget page", "The BigCo pilot budget is 40k EUR.", occurred_at=datetime(2025, 3, 1, tzinfo=UTC)
    )
    Chunk.objects.filter(document=page).update(said_at=None)  # saved before passages kept a time
    assert titles(actor, "BigCo pilot budget", filters=SearchFilters(said_before=date(2025, 3, 1))) == ["Budget page"]
    assert titles(actor, "BigCo pilot budget", filters=SearchFilters(said_after=date(2025, 3, 2))) == []


def test_each_retriever_reads_the_filters_of_its_clause(actor):
    conversation(actor)
    where = Filtered(access_and_time(actor, None), (SAID_BY_WHOM_SQL,), {"filter_speaker": "Sam Lee"})
    vector = query_vector(actor.org, "BigCo pilot budget")
    sam = set(Chunk.objects.filter(org=actor.org, speaker="Sam Lee").values_list("pk", flat=True))
    assert {cid for cid, _ in vector_candidates(vector, where, 50)} == sam
    assert {cid for cid, _ in keyword_candidates("BigCo pilot budget", where, 50)} == sam
    june = (datetime(2025, 6, 1, tzinfo=UTC), datetime(2025, 7, 1, tzinfo=UTC))
    assert first_said_in(access_and_time(actor, None), [june]) == 0
    assert first_said_in(where, [june]) is None  # Sam said nothing in June


def test_a_category_filter_never_reaches_a_category_the_caller_may_not_read(actor, insider):
    save(insider, "Board minutes", "The BigCo pilot budget is secretly 90k EUR.", category="board")
    save(actor, "BigCo pilot", "Pilot budget for BigCo: 40k EUR.")
    board = Category.objects.get(org=actor.org, slug="board")
    with pytest.raises(InvalidArgument) as refused:
        category_named(actor=actor, name="Board")
    assert "Board" not in refused.value.message.split("categories are:")[1]
    assert "General" in refused.value.message
    # Even given the id, the access clause still holds: nothing, never the row.
    for mode in ("auto", "vector", "keyword"):
        assert titles(actor, "BigCo pilot budget", mode=mode, filters=SearchFilters(category=board.pk)) == []
    assert titles(insider, "BigCo pilot budget", filters=SearchFilters(category=board.pk)) == ["Board minutes"]
    assert category_named(actor=insider, name="board") == board.pk


def test_a_speaker_filter_never_reveals_another_members_personal_turns(actor):
    colleague = make_actor(actor.org)
    said(
        colleague,
        "Priya Shah",
        "My private note: the BigCo pilot budget is 90k.",
        datetime(2025, 5, 1, tzinfo=UTC),
        scope="personal",
    )
    for mode in ("auto", "vector", "keyword"):
        assert titles(actor, "BigCo pilot budget", mode=mode, filters=SearchFilters(speaker="Priya Shah")) == []
    assert titles(colleague, "BigCo pilot budget", filters=SearchFilters(speaker="Priya Shah")) == ["Priya Shah"]


HOSTILE = [
    "x' OR '1'='1",
    "'; DROP TABLE memory_chunk; --",
    "%(org)s",
    "%s",
    ") OR TRUE OR (",
    "Priya Shah' --",
]


@pytest.mark.parametrize("value", HOSTILE)
def test_a_filter_value_is_only_ever_a_value(actor, value):
    conversation(actor)
    for filters in (SearchFilters(source_kind=value), SearchFilters(speaker=value)):
        for mode in ("auto", "vector", "keyword"):
            assert titles(actor, "BigCo pilot budget", mode=mode, filters=filters) == []
    with pytest.raises(InvalidArgument):
        category_named(actor=actor, name=value)
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM memory_chunk WHERE org_id = %s", [actor.org.pk])
        assert cursor.fetchone()[0] == 4


def test_a_filtered_clause_takes_only_the_filters_texts_in_their_order(actor):
    where = access_and_time(actor, None)
    for texts in [("TRUE",), ("c.speaker = 'x' OR TRUE",), (FILTERS[1], FILTERS[0]), (FILTERS[0], FILTERS[0])]:
        with pytest.raises(ValueError, match="not filters"):
            Filtered(where, texts)
    with pytest.raises(ValueError, match="named filter_"):
        Filtered(where, (SAID_BY_WHOM_SQL,), {"org": 0})
    with pytest.raises(ValueError, match="memory.access clause"):
        Filtered(SimpleNamespace(sql="TRUE", params={}), (SAID_BY_WHOM_SQL,))  # type: ignore[arg-type]


def test_days_out_of_order_are_refused():
    with pytest.raises(InvalidArgument, match="swap"):
        SearchFilters(said_after=date(2025, 6, 2), said_before=date(2025, 6, 1))


def test_no_filters_leave_the_clause_as_it_is(actor):
    where = access_and_time(actor, None)
    assert filtered(where, SearchFilters(), actor.org) is where
    assert filtered(where, None, actor.org) is where


def test_the_choices_count_documents_among_what_a_search_found(actor, insider):
    conversation(actor)
    save(insider, "Board minutes", "The BigCo pilot budget is secretly 90k EUR.", category="board")
    found = search_chunks(actor=insider, query="BigCo pilot budget", top_k=10).found
    mine = filter_choices(actor=actor, chunk_ids=found)
    assert {(c.value, c.documents) for c in mine.kinds} == {("chat", 3), ("wiki", 1)}
    assert [(c.value, c.documents) for c in mine.speakers] == [("Priya Shah", 2), ("Sam Lee", 1)]
    assert [c.value for c in mine.categories] == ["General"]  # never the board's, though found for another
    theirs = filter_choices(actor=insider, chunk_ids=found)
    assert {c.value for c in theirs.categories} == {"General", "Board"}
