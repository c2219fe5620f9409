"""The two readings of "as of" in search: what the sources had said by then (``said``) and what
Brain had learned by then (``learned``); imported history answers as of its own dates."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest
from django.utils import timezone

from memory.models import Document
from memory.search.evidence import Question, gather_evidence
from memory.search.passages import search_chunks
from memory.tests.factories import save

pytestmark = pytest.mark.django_db

QUESTION = "BigCo pilot budget"
DAY = date(2025, 3, 11)


def titles(actor, **kw):
    return [hit.title for hit in search_chunks(actor=actor, query=QUESTION, per_document=True, **kw).hits]


def test_imported_history_is_found_as_of_its_own_date_by_said_not_by_learned(actor):
    save(actor, "BigCo mail", "The BigCo pilot budget is 40k EUR.", occurred_at=datetime(2025, 3, 1, 9, tzinfo=UTC))
    assert titles(actor, as_of=DAY, as_of_by="said") == ["BigCo mail"]
    assert titles(actor, as_of=DAY, as_of_by="learned") == []
    assert titles(actor, as_of=DAY) == []  # the engine's default is the reading it always had
    assert titles(actor, as_of=timezone.localdate(), as_of_by="learned") == ["BigCo mail"]


def test_a_document_dated_after_the_day_is_not_found_by_said(actor):
    save(actor, "Later mail", "The BigCo pilot budget grew to 60k EUR.", occurred_at=datetime(2025, 4, 2, tzinfo=UTC))
    save(actor, "Undated note", "The BigCo pilot budget needs a review.")  # dated by when it was recorded: today
    assert titles(actor, as_of=DAY, as_of_by="said") == []
    assert set(titles(actor, as_of=date(2025, 4, 2), as_of_by="said")) == {"Later mail"}
    assert set(titles(actor, as_of=timezone.localdate(), as_of_by="said")) == {"Later mail", "Undated note"}


def test_the_end_of_the_day_is_the_organisations(actor):
    actor.org.time_zone = "Asia/Tokyo"
    actor.org.save()
    # 20:00 UTC on 11 March is 12 March in Tokyo.
    save(actor, "BigCo mail", "The BigCo pilot budget is 40k EUR.", occurred_at=datetime(2025, 3, 11, 20, tzinfo=UTC))
    assert titles(actor, as_of=DAY, as_of_by="said") == []
    assert titles(actor, as_of=date(2025, 3, 12), as_of_by="said") == ["BigCo mail"]


def version(actor, content: str, occurred: datetime) -> Document:
    return save(actor, "BigCo pricing", content, external_id="pricing", occurred_at=occurred)


def test_a_version_reads_as_of_its_own_date_until_a_version_dated_by_then_replaces_it(actor):
    """Two versions imported today: the first dated February, the second June. As of March the
    sources said the first (replaced only by a version said later); as of July, the second."""
    first = version(actor, "The BigCo pilot budget is 40k EUR.", datetime(2025, 2, 1, tzinfo=UTC))
    second = version(actor, "The BigCo pilot budget is 60k EUR.", datetime(2025, 6, 1, tzinfo=UTC))
    first.refresh_from_db()
    assert first.superseded_by_id == second.pk
    ids = lambda **kw: [h.document_id for h in search_chunks(actor=actor, query=QUESTION, **kw).hits]  # noqa: E731
    assert ids(as_of=DAY, as_of_by="said") == [first.pk]
    assert ids(as_of=date(2025, 7, 1), as_of_by="said") == [second.pk]
    assert ids(as_of=date(2025, 1, 1), as_of_by="said") == []
    assert ids() == [second.pk]
    # By what Brain learned, both were taken in today: the first is replaced already.
    assert ids(as_of=timezone.localdate(), as_of_by="learned") == [second.pk]


def test_a_withdrawn_document_is_not_read_as_of_any_day(actor):
    document = save(
        actor, "BigCo mail", "The BigCo pilot budget is 40k EUR.", occurred_at=datetime(2025, 3, 1, tzinfo=UTC)
    )
    now = timezone.now()
    Document.objects.filter(pk=document.pk).update(superseded_at=now)
    document.chunks.update(superseded_at=now)
    assert titles(actor, as_of=DAY, as_of_by="said") == []


def test_ask_reads_as_of_the_same_way(actor):
    save(actor, "BigCo mail", "The BigCo pilot budget is 40k EUR.", occurred_at=datetime(2025, 3, 1, 9, tzinfo=UTC))
    said = gather_evidence(actor=actor, question=Question(text=QUESTION, as_of=DAY, as_of_by="said"))
    learned = gather_evidence(actor=actor, question=Question(text=QUESTION, as_of=DAY, as_of_by="learned"))
    assert [h.title for h in said.hits] == ["BigCo mail"]
    assert learned.hits == []


def test_ask_at_high_risk_lists_as_conflicts_only_what_had_been_said_by_the_day(actor):
    """Two org charts imported today, dated 2025 and March 2026. As of April 2026 the earlier
    holder is a replaced statement beside the answer; as of mid-2025 the later one had not been
    said, so it is no conflict; by what Brain had learned then, neither was known."""
    old = datetime(2025, 1, 10, tzinfo=UTC)
    save(actor, "Old org chart", "Sam Carter was head of support from January 2025.", occurred_at=old)
    new = datetime(2026, 3, 3, tzinfo=UTC)
    save(actor, "New org chart", "On 3 March 2026 Priya Shah became head of support.", occurred_at=new)

    def conflicts(day: date, by: str) -> list[str]:
        question = Question(text="Who is head of support?", as_of=day, as_of_by=by, high_risk=True)
        return [fact.statement for fact in gather_evidence(actor=actor, question=question).conflicts or []]

    assert conflicts(date(2026, 4, 1), "said") == ["Sam Carter was head of support from January 2025."]
    assert all("Priya" not in statement for statement in conflicts(date(2025, 6, 1), "said"))
    assert conflicts(date(2026, 4, 1), "learned") == []
