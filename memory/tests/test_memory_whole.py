"""Memory kept whole: re-extraction keeps history, vectors know their model, one access rule."""

from __future__ import annotations

import itertools
from datetime import date, timedelta
from typing import Any

import pytest
from django.contrib.auth.models import Group
from django.db import connection
from django.utils import timezone

from brain.core.actors import Actor
from brain.models import Category
from conftest import make_actor, make_user
from contacts.models import Contact
from contacts.services import reembed_contact_topics, save_contact_topics
from memory.access import (
    READABLE_SQL,
    Clause,
    believed_filter,
    believed_sql,
    for_every_member,
    readable,
    readable_sql,
)
from memory.graph import memories as fact_services
from memory.graph.document_facts import extract_document
from memory.graph.reads import find_entities
from memory.index.candidates import access_and_time, keyword_candidates
from memory.maintenance.reembedding import reembed
from memory.models import Chunk, Document, Entity, Fact
from memory.search.passages import search_chunks
from memory.tests.factories import save

pytestmark = pytest.mark.django_db


def test_twenty_five_numbered_testers_stay_twenty_five_entities(actor):
    for n in range(25):
        fact_services.remember(actor=actor, content=f"Tester Number{n} filed a bug.", subject=f"Tester Number{n}")
    assert Entity.objects.filter(org=actor.org, name__startswith="Tester Number").count() == 25
    assert len(find_entities(actor=actor, name="Tester Number7", limit=20)) >= 1


def test_re_extracting_a_document_keeps_what_its_facts_had_superseded(actor):
    old = save(actor, "Roles 2025", "Sam Carter is head of support.")
    new = save(actor, "Roles 2026", "Priya Shah became head of support on 1 March 2026.")
    sam = Fact.objects.get(document=old, relation="head_of")
    priya = Fact.objects.get(document=new, relation="head_of")
    assert sam.superseded_by_id == priya.pk
    extract_document(document_id=new.pk)
    extract_document(document_id=new.pk)
    sam.refresh_from_db()
    assert sam.superseded_at is not None
    assert sam.superseded_by_id == priya.pk
    assert Fact.objects.filter(document=new, relation="head_of").count() == 1


def test_a_fact_no_longer_extracted_is_retired_not_deleted_when_it_had_replaced_another(actor):
    old = save(actor, "Roles 2025", "Sam Carter is head of support.")
    new = save(actor, "Roles 2026", "Priya Shah became head of support on 1 March 2026.")
    priya = Fact.objects.get(document=new, relation="head_of")
    Document.objects.filter(pk=new.pk).update(content="Nothing about roles.")
    Chunk.objects.filter(document=new).update(text="Nothing about roles.")
    extract_document(document_id=new.pk)
    priya.refresh_from_db()
    sam = Fact.objects.get(document=old, relation="head_of")
    assert priya.superseded_at is not None  # kept as history
    assert sam.superseded_by_id == priya.pk


def test_vectors_record_their_model_and_reembed_moves_every_one(actor, monkeypatch):
    from memory.index import embedding as embedding

    save(actor, "Plan", "The zebra migration starts in May.")
    fact_services.remember(actor=actor, content="The zebra migration has a budget of 40k.")
    contact = Contact.objects.create(org=actor.org, name="Ana", topics="migrations", email="ana@example.com")
    save_contact_topics(contact)
    real = embedding.get_embedder()
    assert set(Chunk.objects.filter(org=actor.org).values_list("embedding_model", flat=True)) == {real.name}
    assert set(Fact.objects.filter(org=actor.org).values_list("embedding_model", flat=True)) == {real.name}

    monkeypatch.setattr(type(real), "name", "another-model")  # as if the operator switched models
    # Before re-embedding, vector search compares nothing of the old model; keywords still find it.
    assert search_chunks(actor=actor, query="zebra migration", mode="vector").hits == []
    assert search_chunks(actor=actor, query="zebra migration", mode="keyword").hits
    done = reembed(org=actor.org, resume=True)
    assert done["chunks"] >= 1
    assert done["facts"] >= 1
    assert reembed_contact_topics(org=actor.org, resume=True) == 1
    assert reembed(org=actor.org, resume=True) == {"chunks": 0, "facts": 0}  # nothing left on the old model
    assert search_chunks(actor=actor, query="zebra migration", mode="vector").hits
    contact.refresh_from_db()
    assert contact.topics_embedding_model == "another-model"


# --- one rule, two forms ----------------------------------------------------------------------


@pytest.fixture
def mixed(actor: Actor) -> list[Actor]:
    """Documents and facts in every audience, and readers of each kind."""
    group = Group.objects.create(name=f"finance-{actor.org.pk}")
    finance = Category.objects.create(org=actor.org, slug="finance", name="Finance", restricted=True)
    finance.groups.add(group)
    insider = make_actor(actor.org, make_user(actor.org))
    insider.user.groups.add(group)
    other = make_actor(actor.org)
    for who, scope, category in itertools.product((actor, insider, other), ("shared", "personal"), (None, "finance")):
        if category and who is not insider:
            continue
        document = save(who, f"{who.user.pk}-{scope}-{category}", "Quarterly numbers.", scope=scope, category=category)
        fact_services.remember(actor=who, content=f"A {scope} note.", scope=scope)
        Document.objects.filter(pk=document.pk).update(recorded_at=timezone.now() - timedelta(days=3))
    first = Fact.objects.filter(org=actor.org).order_by("pk")[0]
    Fact.objects.filter(pk=first.pk).update(superseded_at=timezone.now() - timedelta(days=1))
    return [actor, insider, other, for_every_member(insider)]


@pytest.mark.parametrize(
    ("table", "model"), [("memory_chunk", Chunk), ("memory_fact", Fact), ("memory_document", Document)]
)
def test_the_access_and_as_of_rules_select_the_same_rows_in_the_orm_and_in_sql(mixed, table, model):
    days = (None, date.today(), date.today() - timedelta(days=2), date.today() - timedelta(days=30))
    seen_now: list[frozenset[int]] = []
    for reader, as_of, history in itertools.product(mixed, days, (False, True)):
        orm = set(
            model.objects.filter(readable(reader)).filter(believed_filter(as_of, history)).values_list("pk", flat=True)
        )
        access, params = readable_sql(reader)
        when, more = believed_sql(as_of, history)
        with connection.cursor() as cursor:
            # The table comes from the parametrize list above, the clauses from memory.access.
            cursor.execute(f"SELECT c.id FROM {table} c WHERE {access} AND {when}", {**params, **more})  # noqa: S608
            sql = {row[0] for row in cursor.fetchall()}
        assert orm == sql, (reader.user.username, as_of, history)
        if as_of is None and not history:
            seen_now.append(frozenset(orm))
    # Every reader sees something, and each something else: the agreement is not vacuous.
    assert all(seen_now)
    assert len(set(seen_now)) == len(mixed)


@pytest.mark.parametrize("model", [Chunk, Fact, Document])
def test_an_actor_narrowed_for_every_member_reads_what_every_member_reads_and_nothing_of_its_own(mixed, model):
    actor, insider, other, narrowed = mixed

    def seen(reader: Actor) -> set[int]:
        return set(model.objects.filter(readable(reader)).values_list("pk", flat=True))

    assert seen(narrowed) == seen(actor) & seen(other)  # shared rows of open categories
    assert seen(narrowed) < seen(insider)  # not the restricted ones, nor its own personal ones


def test_a_retrieval_clause_refuses_sql_text_that_memory_access_did_not_build():
    assert Clause(READABLE_SQL, {"org": 1}).sql == READABLE_SQL
    with pytest.raises(ValueError, match="not a clause built by memory.access"):
        Clause(f"{READABLE_SQL} OR TRUE")


def test_the_retrievers_refuse_a_table_outside_their_fixed_set(actor):
    other_table: Any = "auth_user"  # what the type checker would refuse, tried at run time
    with pytest.raises(ValueError, match="not a table the retrievers read"):
        keyword_candidates("refund policy", access_and_time(actor, None), 5, table=other_table)
