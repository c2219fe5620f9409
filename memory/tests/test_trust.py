"""Inside one organisation, what a caller cannot see is never changed and never betrayed."""

from __future__ import annotations

from datetime import date

import pytest
from django.contrib.auth.models import Group
from django.db import connection
from django.test.utils import CaptureQueriesContext

from brain.core.actors import Actor, one_call
from brain.core.errors import InvalidArgument, NotFound
from brain.models import Category
from conftest import make_actor, make_user
from memory.access import readable_category_ids
from memory.documents.saving import add_document
from memory.graph import memories as fact_services
from memory.graph.writes import FactDraft, record_facts
from memory.models import Document, Fact
from memory.search.passages import search_chunks
from memory.tests.factories import save

pytestmark = pytest.mark.django_db


@pytest.fixture
def board(actor: Actor) -> Actor:
    """A member of the restricted 'board' category; ``actor`` is not."""
    group = Group.objects.create(name=f"board-{actor.org.pk}")
    category = Category.objects.create(org=actor.org, slug="board", name="Board", restricted=True)
    category.groups.add(group)
    insider = make_actor(actor.org, make_user(actor.org))
    insider.user.groups.add(group)
    return insider


def titles(actor: Actor, query: str) -> list[str]:
    return [h.title for h in search_chunks(actor=actor, query=query, top_k=10).hits]


# --- versions -------------------------------------------------------------------------------


def test_a_save_under_someone_elses_personal_external_id_is_a_separate_document(actor):
    owner = make_actor(actor.org)
    mine = save(owner, "Diary", "Quorvane zebra notes.", external_id="notes", scope="personal")
    fresh = add_document(actor=actor, title="Diary", content="Other text.", external_id="fresh-id").document
    theirs = add_document(actor=actor, title="Diary", content="Other text.", external_id="notes").document
    assert (theirs.version, theirs.previous_id) == (fresh.version, fresh.previous_id) == (1, None)
    save(actor, "x", "y", ingest=False)  # nothing else changes either
    mine.refresh_from_db()
    assert mine.superseded_at is None
    assert titles(owner, "Quorvane zebra") == ["Diary"]


def test_a_save_under_a_restricted_documents_external_id_leaves_it_alone(actor, board):
    hidden = save(board, "Minutes", "Quorvane merger minutes.", external_id="minutes", category="board")
    saved = save(actor, "Minutes", "An open agenda.", external_id="minutes")
    assert (saved.version, saved.previous_id) == (1, None)
    hidden.refresh_from_db()
    assert hidden.superseded_at is None
    assert "Minutes" in titles(board, "Quorvane merger")


def test_a_shared_save_does_not_continue_a_personal_document_of_the_same_writer(actor):
    personal = save(actor, "Plan", "Quorvane plan draft.", external_id="plan", scope="personal")
    shared = save(actor, "Plan", "Team plan.", external_id="plan")
    assert (shared.version, shared.previous_id) == (1, None)
    personal.refresh_from_db()
    assert personal.superseded_at is None


def test_a_visible_document_of_the_same_audience_still_gets_a_new_version(actor):
    colleague = make_actor(actor.org)
    first = save(colleague, "Prices", "The starter plan costs 10 euros.", external_id="prices")
    second = save(actor, "Prices", "The starter plan costs 12 euros.", external_id="prices")
    assert (second.version, second.previous_id) == (2, first.pk)
    first.refresh_from_db()
    assert first.superseded_by_id == second.pk
    from brain.models import AuditRecord

    record = AuditRecord.objects.get(org=actor.org, action="document.version_added")
    assert (record.target, record.details["by"], record.user_id) == (first.public_id, second.public_id, actor.user.pk)


def test_a_new_version_keeps_the_category_of_the_one_it_continues(board):
    first = save(board, "Minutes", "Board minutes one.", external_id="m", category="board")
    second = save(board, "Minutes", "Board minutes two.", external_id="m")
    assert (second.version, second.category_id) == (2, first.category_id)


# --- supersession -----------------------------------------------------------------------------


def state(actor: Actor, statement: str, **kw: object) -> Fact:
    """One document stating one single-valued role fact, in the document's audience."""
    document = save(actor, statement[:60], statement, ingest=False, **kw)
    Document.objects.filter(pk=document.pk).update(status="ready")
    draft = FactDraft(
        statement=statement,
        subject=statement.split()[0],
        object="Support",
        relation="head_of",
        single_valued=True,
        valid_from=date(2026, 1, 1),
    )
    return record_facts(document=document, drafts=[draft])[0]


def test_a_members_statement_does_not_supersede_a_restricted_fact(actor, board):
    hidden = state(board, "Helena is head of support.", category="board")
    state(actor, "Sam is head of support.")
    hidden.refresh_from_db()
    assert hidden.superseded_at is None


def test_a_restricted_statement_does_not_supersede_an_open_fact(actor, board):
    open_fact = state(actor, "Sam is head of support.")
    state(board, "Helena is head of support.", category="board")
    open_fact.refresh_from_db()
    assert open_fact.superseded_at is None


def test_statements_of_the_same_audience_still_supersede(actor):
    old = state(actor, "Sam is head of support.")
    new = state(make_actor(actor.org), "Priya is now head of support.")
    old.refresh_from_db()
    assert old.superseded_by_id == new.pk


def test_two_documents_disagreeing_for_the_same_period_both_stand(actor):
    old = state(actor, "Sam is head of support.")
    new = state(make_actor(actor.org), "Priya is head of support.")
    old.refresh_from_db()
    new.refresh_from_db()
    assert old.superseded_at is None
    assert new.superseded_at is None


def test_replacing_a_memory_of_another_audience_is_refused(actor):
    shared = fact_services.remember(actor=actor, content="The office is in Lisbon.")
    with pytest.raises(InvalidArgument, match="same"):
        fact_services.remember(
            actor=actor, content="The office is in Porto.", scope="personal", replaces_memory_id=shared.pk
        )
    shared.refresh_from_db()
    assert shared.superseded_at is None


# --- answers that betray ----------------------------------------------------------------------


def test_forget_answers_a_hidden_memory_exactly_as_a_missing_one(actor, board):
    hidden = fact_services.remember(actor=board, content="Quorvane is confidential.", scope="personal")
    restricted_doc = save(board, "Minutes", "Quorvane minutes.", ingest=False, category="board")
    restricted = record_facts(document=restricted_doc, drafts=[FactDraft(statement="Quorvane minutes.")])[0]
    missing = Fact.objects.order_by("-pk").first().pk + 1000  # type: ignore[union-attr]
    messages = []
    for memory_id in (hidden.pk, restricted.pk, missing):
        with pytest.raises(NotFound) as caught:
            fact_services.forget(actor=actor, memory_id=memory_id)
        messages.append(caught.value.message.replace(str(memory_id), "N"))
    assert len(set(messages)) == 1


def test_keyword_scores_do_not_depend_on_passages_the_caller_cannot_see(actor, board):
    save(actor, "Open note", "The zebra migration plan for the warehouse.")

    def keyword_score() -> float:
        hits = search_chunks(actor=actor, query="zebra warehouse", mode="keyword").hits
        return hits[0].scores["keyword"]

    before = keyword_score()
    for n in range(30):
        save(board, f"Board {n}", f"Zebra zebra item {n} for the board.", category="board")
        save(make_actor(actor.org), f"Private {n}", f"Zebra diary {n}.", scope="personal")
    from django.core.cache import cache

    cache.clear()
    assert keyword_score() == before


# --- entities as each reader's sources show them -----------------------------------------------


def test_a_personal_summary_and_type_show_only_to_their_owner(actor):
    from memory.graph.entity_views import entity_views
    from memory.graph.reads import find_entities, overview

    owner = make_actor(actor.org)
    save(actor, "Kickoff", "Zorvex Labs joined the call.", ingest=False)
    fact_services.remember(actor=actor, content="Zorvex Labs renewed.", subject="Zorvex Labs")
    fact_services.remember(
        actor=owner,
        content="Zorvex Labs is my secret pick.",
        scope="personal",
        entities=[{"name": "Zorvex Labs", "type": "customer", "summary": "Quorvane acquisition target"}],
    )
    for reader, summary, kind in ((actor, "", "other"), (owner, "Quorvane acquisition target", "customer")):
        found = find_entities(actor=reader, name="Zorvex Labs")
        view = entity_views(actor=reader, entity_ids=found)[found[0]]
        assert (view.summary, view.type) == (summary, kind)
    assert "customer" not in overview(actor=actor).entity_types


def test_a_full_name_known_only_from_a_restricted_document_stays_hidden(actor, board):
    from memory.graph.entity_views import entity_views
    from memory.graph.reads import find_entities

    fact_services.remember(actor=actor, content="Ms Quorvane approved the budget.", subject="Ms Quorvane")
    doc = save(board, "Minutes", "Helena Quorvane resigns.", ingest=False, category="board")
    record_facts(document=doc, drafts=[FactDraft(statement="Helena Quorvane resigns.", subject="Helena Quorvane")])
    member_view = entity_views(actor=actor, entity_ids=find_entities(actor=actor, name="Quorvane"))
    assert [v.name for v in member_view.values()] == ["Ms Quorvane"]
    assert all("Helena" not in a for v in member_view.values() for a in v.aliases)
    assert find_entities(actor=actor, name="Helena") == []
    board_names = {
        v.name for v in entity_views(actor=board, entity_ids=find_entities(actor=board, name="Quorvane")).values()
    }
    assert "Helena Quorvane" in board_names


def test_names_are_not_linked_through_what_a_documents_readers_cannot_see(actor, board):
    """A board paper links "HQ" to Helena Quorvane; open notes naming each must stay apart."""
    from memory.graph.entity_views import entity_views
    from memory.graph.reads import find_entities

    doc = save(board, "Minutes", "Helena Quorvane (HQ) resigns.", ingest=False, category="board")
    record_facts(document=doc, drafts=[FactDraft(statement="Helena Quorvane resigns.", subject="Helena Quorvane")])
    from memory.graph.entities import get_or_create_entity, mention

    entity = get_or_create_entity(document=doc, name="HQ")
    mention(entity=entity, document=doc, surface="HQ")
    fact_services.remember(actor=actor, content="HQ signed off.", subject="HQ")
    fact_services.remember(actor=actor, content="Helena Quorvane called.", subject="Helena Quorvane")
    views = entity_views(actor=actor, entity_ids=find_entities(actor=actor, name="HQ"))
    assert all(set(v.aliases) | {v.name} == {"HQ"} for v in views.values())


def test_explore_counts_every_fact_in_reach_when_it_truncates(actor):
    from memory.graph.reads import explore, resolve_entity

    for n in range(7):
        fact_services.remember(actor=actor, content=f"Globex ordered part {n}.", subject="Globex")
    hood = explore(actor=actor, entity=resolve_entity(actor=actor, ref="Globex"), limit=3)
    assert (len(hood.outgoing + hood.incoming), hood.total, hood.truncated) == (3, 7, True)


def test_superseded_is_shown_only_from_the_day_it_was_replaced(actor):
    from datetime import timedelta

    from django.utils import timezone

    from memory.mcp_tools.shapes import fact_outs

    old = fact_services.remember(actor=actor, content="The office is in Lisbon.")
    fact_services.remember(actor=actor, content="The office is in Porto.", replaces_memory_id=old.pk)
    old.refresh_from_db()
    yesterday = (timezone.now() - timedelta(days=1)).date()
    [before] = fact_outs(actor, [old], as_of=yesterday)
    [now] = fact_outs(actor, [old])
    assert (before.superseded, before.superseded_by) == (False, None)
    assert now.superseded
    assert now.superseded_by


def test_replacing_a_memory_also_ends_the_relations_remembered_with_it(actor):
    old = fact_services.remember(
        actor=actor, content="Sam leads billing.", relations=[{"from": "Sam", "to": "Billing", "relation": "leads"}]
    )
    new = fact_services.remember(actor=actor, content="Priya leads billing.", replaces_memory_id=old.pk)
    relation = Fact.objects.get(document=old.document, relation="leads")
    assert relation.superseded_by_id == new.pk


def test_a_window_that_ends_before_it_starts_keeps_only_its_start(actor):
    document = save(actor, "Odd", "Odd dates.", ingest=False)
    draft = FactDraft(statement="Odd dates.", valid_from=date(2026, 5, 1), valid_to=date(2026, 4, 1))
    fact = record_facts(document=document, drafts=[draft])[0]
    assert (fact.valid_from, fact.valid_to) == (date(2026, 5, 1), None)


def test_replacing_writes_an_audit_record(actor):
    from brain.models import AuditRecord

    old = fact_services.remember(actor=actor, content="The office is in Lisbon.")
    fact_services.remember(actor=actor, content="The office is in Porto.", replaces_memory_id=old.pk)
    fact_services.forget(actor=actor, memory_id=old.pk)
    actions = list(AuditRecord.objects.filter(org=actor.org).values_list("action", "target"))
    assert ("memory.replaced", old.public_id) in actions
    assert ("memory.forgotten", old.public_id) in actions


# --- one call ---------------------------------------------------------------------------------


def test_a_call_works_out_readable_categories_once_and_the_next_call_sees_a_change_of_groups(actor, board):
    board_category = Category.objects.get(org=actor.org, slug="board")
    with one_call(), CaptureQueriesContext(connection) as queries:
        first = readable_category_ids(actor=actor)
        assert readable_category_ids(actor=actor) == first
    assert len(queries) == 1
    assert board_category.pk not in first
    actor.user.groups.add(*board.user.groups.all())
    with one_call():
        assert board_category.pk in readable_category_ids(actor=actor)
    Category.objects.filter(pk=board_category.pk).update(restricted=True)
    actor.user.groups.clear()
    assert board_category.pk not in readable_category_ids(actor=actor)  # outside a call nothing is kept
