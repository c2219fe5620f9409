"""What ingesting a document reads does not grow with the memory where it need not: a fact said like
many earlier ones (twins to compare, rivals to supersede) reads the values it compares in one query
per list, whether three or nine earlier sources say something like it, and derives the same either way."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from conftest import make_actor, make_org, make_user
from memory.documents.ingestion import ingest_documents
from memory.models import Fact
from memory.tests.factories import save

pytestmark = pytest.mark.django_db(transaction=True)
SAID_ON = datetime(2025, 11, 3, 9, tzinfo=UTC)  # one day for all: the amounts contradict, none replaces another
LATER = "Northwind Foods renewed its support contract at EUR 48,000 a year."


def ingest_later(sources: int) -> tuple[int, Fact]:
    """Reads of values while one document is ingested (with extraction) after ``sources`` documents
    that each state another amount of the same thing, and its fact."""
    org = make_org()
    actor = make_actor(org, make_user(org, role="admin"))
    for n in range(sources):
        amount = f"Northwind Foods renewed its support contract for EUR {40 + n},500 a year."
        save(actor, f"Renewal note {n}", amount, occurred_at=SAID_ON)
    later = save(actor, "Renewal", LATER, ingest=False, occurred_at=SAID_ON)
    with CaptureQueriesContext(connection) as queries:
        ingest_documents(document_ids=[later.pk])
    reads = [q for q in queries.captured_queries if q["sql"].startswith("SELECT") and 'FROM "memory_value"' in q["sql"]]
    return len(reads), Fact.objects.select_related("subject").get(document=later)


def test_a_fact_like_nine_earlier_ones_reads_values_as_often_as_one_like_three():
    after_few, fact_after_few = ingest_later(3)
    after_many, fact_after_many = ingest_later(9)
    assert after_many == after_few
    for fact, sources in ((fact_after_few, 3), (fact_after_many, 9)):
        assert fact.subject is not None
        assert fact.subject.name == "Northwind Foods"
        assert (fact.value_key, fact.superseded_at, fact.same_as_id) == ("deal_value", None, None)
        stood = Fact.objects.filter(org_id=fact.org_id, subject=fact.subject, superseded_at__isnull=True)
        assert stood.exclude(pk=fact.pk).count() == sources  # contradicting amounts all stand
