"""A fact flagged as broken is shown to nobody until an admin reviews it (memory.graph.fixes,
memory.access.readable_facts)."""

from __future__ import annotations

import itertools
from datetime import date, timedelta

import pytest
from django.db import connection

from brain.core.errors import InvalidArgument, NotFound
from brain.models import AuditRecord
from memory.access import believed_filter, readable_facts, readable_facts_and_believed
from memory.graph import reads as graph
from memory.graph.fixes import flag_fact, restore_fact, retire_fact
from memory.graph.memories import remember
from memory.mcp_tools.ask import AskArgs, ask_company_memory_tool
from memory.models import Fact
from memory.tests.factories import save
from memory.tests.graph_world import GraphWorld, graph_world

pytestmark = pytest.mark.django_db

QUESTION = "Who leads support at BigCo?"


@pytest.fixture
def world() -> GraphWorld:
    return graph_world()


@pytest.fixture
def support(world: GraphWorld) -> Fact:
    document = save(world.member, "Support", "Priya Shah leads support at BigCo since March 2026.")
    fact = Fact.objects.filter(document=document).order_by("pk").first()
    assert fact is not None
    return fact


def found_by_search(world: GraphWorld, fact: Fact) -> bool:
    return fact.pk in {s.fact.pk for s in graph.search_facts(actor=world.member, query=QUESTION, limit=20)}


def claimed_by_ask(world: GraphWorld, fact: Fact) -> bool:
    out = ask_company_memory_tool(world.member, AskArgs(question=QUESTION, max_claims=20))
    return fact.public_id in {claim.memory_id for claim in out.claims}


def test_a_flagged_fact_disappears_from_search_facts_and_ask_and_returns_on_restore(world, support):
    assert found_by_search(world, support)
    assert claimed_by_ask(world, support)
    flag_fact(actor=world.admin, fact_id=support.pk, reason="Priya moved to sales in May.")
    assert not found_by_search(world, support)
    assert not claimed_by_ask(world, support)
    history = graph.search_facts(actor=world.member, query=QUESTION, include_superseded=True, limit=20)
    assert support.pk not in {s.fact.pk for s in history}
    restore_fact(actor=world.admin, fact_id=support.pk)
    assert found_by_search(world, support)
    assert claimed_by_ask(world, support)
    actions = list(
        AuditRecord.objects.filter(org=world.org, target=support.public_id)
        .order_by("pk")
        .values_list("action", "details")
    )
    assert actions == [("memory.flagged", {"reason": "Priya moved to sales in May."}),
                       ("memory.restored", {"flagged_for": "Priya moved to sales in May."})]  # fmt: skip


def test_a_flagged_fact_is_hidden_from_explore_entity_and_the_timeline(world):
    fact = world.open_facts[0]
    entity = graph.resolve_entity(actor=world.member, ref="Ms Quorvane")
    assert fact in graph.explore(actor=world.member, entity=entity).outgoing
    flag_fact(actor=world.admin, fact_id=fact.pk, reason="She declined the seat.")
    hood = graph.explore(actor=world.member, entity=entity, include_superseded=True)
    assert fact not in hood.outgoing + hood.incoming
    assert fact not in graph.timeline(actor=world.member, entity=entity)
    assert fact not in graph.timeline(actor=world.member)
    assert graph.connection_counts(actor=world.member, entity_ids=[entity.pk]) == {entity.pk: 1}


def test_retiring_a_flagged_fact_supersedes_it_and_history_still_tells_it(world, support):
    flag_fact(actor=world.admin, fact_id=support.pk, reason="Priya never led support.")
    retire_fact(actor=world.admin, fact_id=support.pk)
    support.refresh_from_db()
    assert support.flagged_at is None
    assert support.superseded_at is not None
    assert not found_by_search(world, support)
    history = graph.search_facts(actor=world.member, query=QUESTION, include_superseded=True, limit=20)
    assert support.pk in {s.fact.pk for s in history}
    assert AuditRecord.objects.filter(target=support.public_id, action="memory.retired").exists()


def test_flagging_needs_a_reason_and_a_shared_fact_of_the_organisation(world, support):
    with pytest.raises(InvalidArgument, match="reason is required"):
        flag_fact(actor=world.admin, fact_id=support.pk, reason="  ")
    theirs = graph_world()
    with pytest.raises(NotFound) as other:
        flag_fact(actor=world.admin, fact_id=theirs.open_facts[0].pk, reason="wrong")
    assert other.value.message == f"No memory mem_{theirs.open_facts[0].pk} in this organisation."
    personal = remember(actor=world.member, content="I park on level 2.", scope="personal")
    with pytest.raises(NotFound):
        flag_fact(actor=world.admin, fact_id=personal.pk, reason="wrong")
    with pytest.raises(InvalidArgument, match="not flagged"):
        restore_fact(actor=world.admin, fact_id=support.pk)
    flag_fact(actor=world.admin, fact_id=support.pk, reason="wrong")
    with pytest.raises(InvalidArgument, match="flagged already"):
        flag_fact(actor=world.admin, fact_id=support.pk, reason="still wrong")


def test_flagged_facts_are_held_back_alike_in_the_orm_and_in_sql(world, support):
    flag_fact(actor=world.admin, fact_id=world.open_facts[1].pk, reason="wrong")
    flag_fact(actor=world.admin, fact_id=world.board_fact.pk, reason="wrong")
    retire = world.open_facts[0]
    flag_fact(actor=world.admin, fact_id=retire.pk, reason="wrong")
    retire_fact(actor=world.admin, fact_id=retire.pk)
    days = (None, date.today(), date.today() - timedelta(days=30))
    seen = set()
    for reader, as_of, history in itertools.product((world.member, world.reader), days, (False, True)):
        orm = set(
            Fact.objects.filter(readable_facts(reader))
            .filter(believed_filter(as_of, history))
            .values_list("pk", flat=True)
        )
        clause = readable_facts_and_believed(reader, as_of, history)
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT c.id FROM memory_fact c WHERE {clause.sql}", clause.params)  # noqa: S608
            sql = {row[0] for row in cursor.fetchall()}
        assert orm == sql, (reader.user.username, as_of, history)
        seen |= orm
    assert support.pk in seen
    assert not seen & {world.open_facts[1].pk, world.board_fact.pk}
