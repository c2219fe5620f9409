"""Admins' fixes to the graph (memory.graph.fixes): merging entities and undoing it, retyping,
flagging broken facts; what readers see afterwards."""

from __future__ import annotations

from typing import Any

import pytest

from brain.core.errors import InvalidArgument, NotFound, PermissionDenied
from brain.models import AuditRecord
from memory.graph import reads as graph
from memory.graph.entities import get_or_create_entity
from memory.graph.entity_views import entity_views
from memory.graph.fixes import (
    change_entity_type,
    entity_references,
    merge_entities,
    reference_key,
    undo_merge,
)
from memory.graph.writes import FactDraft
from memory.models import Entity, EntityMerge, Fact, Mention, Value
from memory.tests.graph_world import GraphWorld, graph_world, stated
from registers.models import Commitment

pytestmark = pytest.mark.django_db


@pytest.fixture
def world() -> GraphWorld:
    return graph_world()


def pointers(world: GraphWorld) -> dict[str, Any]:
    """Every row that points at an entity of the organisation, and the entities' own names."""
    org = world.org
    return {
        "facts": sorted(Fact.objects.filter(org=org).values_list("pk", "subject_id", "object_id")),
        "mentions": sorted(Mention.objects.filter(document__org=org).values_list("pk", "entity_id")),
        "values": sorted(Value.objects.filter(org=org).values_list("pk", "entity_id")),
        "commitments": sorted(Commitment.objects.filter(org=org).values_list("pk", "owner_entity_id")),
        "entities": sorted(Entity.objects.filter(org=org).values_list("pk", "name", "aliases", "merged_into_id")),
    }


def promise_by(world: GraphWorld, entity: Entity) -> Commitment:
    return Commitment.objects.create(
        org=world.org,
        owner_name="Helena Quorvane",
        owner_entity=entity,
        what="Helena Quorvane will sign the offer",
        promised_on="2026-03-03",
        category=world.board_fact.category,
        scope="shared",
    )


# --- merging and undoing -----------------------------------------------------------------------


def test_merging_moves_facts_aliases_mentions_values_and_commitments_to_the_kept_entity(world):
    kept, merged = world.entity("Ms Quorvane"), world.entity("Helena Quorvane")
    assert kept.pk != merged.pk, "the open notes must not have linked to the board's name"
    promise = promise_by(world, merged)
    merge = merge_entities(actor=world.admin, kept_id=kept.pk, merged_id=merged.pk)
    kept.refresh_from_db()
    merged.refresh_from_db()
    assert Fact.objects.get(pk=world.board_fact.pk).subject_id == kept.pk
    assert set(Mention.objects.filter(entity=kept).values_list("surface", flat=True)) == {
        "Ms Quorvane", "Helena Quorvane"}  # fmt: skip
    assert not Mention.objects.filter(entity=merged).exists()
    assert "Helena Quorvane" in kept.aliases
    assert Commitment.objects.get(pk=promise.pk).owner_entity_id == kept.pk
    assert merged.merged_into_id == kept.pk, "retired, not deleted"
    assert merge.moved[reference_key(Fact, "subject")] == [world.board_fact.pk]
    assert merge.moved[reference_key(Commitment, "owner_entity")] == [promise.pk]
    record = AuditRecord.objects.get(org=world.org, action="entity.merged")
    assert (record.target, record.user, record.details["merged"]) == (kept.public_id, world.admin.user,
                                                                       merged.public_id)  # fmt: skip


def test_undoing_a_merge_puts_back_exactly_what_it_moved(world):
    kept, merged = world.entity("Ms Quorvane"), world.entity("Helena Quorvane")
    promise_by(world, merged)
    before = pointers(world)
    merge = merge_entities(actor=world.admin, kept_id=kept.pk, merged_id=merged.pk)
    assert pointers(world) != before
    undo_merge(actor=world.admin, merge_id=merge.pk)
    assert pointers(world) == before
    merge.refresh_from_db()
    assert merge.undone_at is not None
    assert merge.undone_by == world.admin.user
    assert AuditRecord.objects.filter(org=world.org, action="entity.merge_undone", target=merged.public_id).exists()
    with pytest.raises(InvalidArgument, match="already undone"):
        undo_merge(actor=world.admin, merge_id=merge.pk)


def test_a_name_both_entities_have_in_one_document_stays_behind_and_comes_back_on_undo(world):
    kept, merged = world.entity("Ms Quorvane"), world.entity("Helena Quorvane")
    memo = world.board_fact.document
    assert memo is not None
    both = Mention.objects.create(entity=kept, document=memo, surface="Helena Quorvane")
    left = Mention.objects.get(entity=merged, document=memo, surface="Helena Quorvane")
    before = pointers(world)
    merge = merge_entities(actor=world.admin, kept_id=kept.pk, merged_id=merged.pk)
    assert Mention.objects.get(pk=left.pk).entity_id == merged.pk
    assert left.pk not in merge.moved.get(reference_key(Mention, "entity"), [])
    assert graph.find_entities(actor=world.reader, name="Helena Quorvane") == [kept.pk]
    undo_merge(actor=world.admin, merge_id=merge.pk)
    assert pointers(world) == before
    assert Mention.objects.get(pk=both.pk).entity_id == kept.pk


def test_every_foreign_key_to_an_entity_is_moved_including_other_apps(world):
    found = {reference_key(model, field) for model, field in entity_references()}
    assert found == {"memory.fact.subject", "memory.fact.object", "memory.mention.entity", "memory.value.entity",
                     "registers.commitment.owner_entity"}  # fmt: skip


def test_merging_across_organisations_is_refused_as_not_found(world):
    theirs = graph_world()
    ours, other = world.entity("Ms Quorvane"), theirs.entity("Helena Quorvane")
    for kept, merged in ((ours.pk, other.pk), (other.pk, ours.pk)):
        with pytest.raises(NotFound) as refused:
            merge_entities(actor=world.admin, kept_id=kept, merged_id=merged)
        assert refused.value.message == f"No entity ent_{other.pk} in this organisation."
    with pytest.raises(NotFound) as missing:
        merge_entities(actor=world.admin, kept_id=ours.pk, merged_id=9_000_000_000)
    assert missing.value.message == "No entity ent_9000000000 in this organisation."
    assert not EntityMerge.objects.exists()
    assert Entity.objects.get(pk=other.pk).merged_into_id is None


def test_a_merge_of_another_organisation_cannot_be_undone_and_is_not_confirmed(world):
    theirs = graph_world()
    merge = merge_entities(
        actor=theirs.admin, kept_id=theirs.entity("Ms Quorvane").pk, merged_id=theirs.entity("Helena Quorvane").pk
    )
    with pytest.raises(NotFound, match=f"No merge {merge.pk} in this organisation"):
        undo_merge(actor=world.admin, merge_id=merge.pk)


def test_an_entity_is_not_merged_with_itself_nor_merged_twice(world):
    kept, merged = world.entity("Ms Quorvane"), world.entity("Helena Quorvane")
    with pytest.raises(InvalidArgument, match="merged with itself"):
        merge_entities(actor=world.admin, kept_id=kept.pk, merged_id=kept.pk)
    merge_entities(actor=world.admin, kept_id=kept.pk, merged_id=merged.pk)
    with pytest.raises(InvalidArgument, match="already merged into"):
        merge_entities(actor=world.admin, kept_id=kept.pk, merged_id=merged.pk)
    vexmoor = world.entity("Vexmoor Labs")
    with pytest.raises(InvalidArgument, match=f"merge into {kept.public_id} instead"):
        merge_entities(actor=world.admin, kept_id=merged.pk, merged_id=vexmoor.pk)


def test_a_merge_into_an_entity_merged_since_is_undone_only_after_that_one(world):
    quorvane, helena, vexmoor = (world.entity(n) for n in ("Ms Quorvane", "Helena Quorvane", "Vexmoor Labs"))
    before = pointers(world)
    first = merge_entities(actor=world.admin, kept_id=helena.pk, merged_id=quorvane.pk)
    second = merge_entities(actor=world.admin, kept_id=vexmoor.pk, merged_id=helena.pk)
    with pytest.raises(InvalidArgument, match="undo that merge first"):
        undo_merge(actor=world.admin, merge_id=first.pk)
    undo_merge(actor=world.admin, merge_id=second.pk)
    undo_merge(actor=world.admin, merge_id=first.pk)
    assert pointers(world) == before


def test_only_an_admin_fixes_the_graph(world):
    kept, merged = world.entity("Ms Quorvane"), world.entity("Helena Quorvane")
    with pytest.raises(PermissionDenied):
        merge_entities(actor=world.member, kept_id=kept.pk, merged_id=merged.pk)
    with pytest.raises(PermissionDenied):
        change_entity_type(actor=world.member, entity_id=kept.pk, type="person")


# --- what readers see after a merge ----------------------------------------------------------------


def test_the_retired_entity_is_absent_from_find_entity_and_its_facts_show_under_the_kept_one(world):
    kept, merged = world.entity("Ms Quorvane"), world.entity("Helena Quorvane")
    merge_entities(actor=world.admin, kept_id=kept.pk, merged_id=merged.pk)
    reader = world.reader
    assert graph.find_entities(actor=reader, name="Helena Quorvane") == [kept.pk]
    assert merged.pk not in graph.find_entities(actor=reader, name="Quorvane")
    assert merged.pk not in set(graph.visible_entities(actor=reader).values_list("pk", flat=True))
    with pytest.raises(NotFound):
        graph.resolve_entity(actor=reader, ref=merged.public_id)
    view = graph.resolve_entity(actor=reader, ref="Helena Quorvane")
    assert (view.pk, view.name, view.aliases) == (kept.pk, "Helena Quorvane", ["Ms Quorvane"])
    hood = graph.explore(actor=reader, entity=view)
    assert {f.pk for f in hood.outgoing} == {world.board_fact.pk, *(f.pk for f in world.open_facts)}
    [hit] = [
        s
        for s in graph.search_facts(actor=reader, query="head of Vexmoor Labs", limit=5)
        if s.fact.pk == world.board_fact.pk
    ]
    assert hit.fact.subject_id == kept.pk


def member_sees(world: GraphWorld) -> dict[str, Any]:
    """What the member is shown of the Quorvane entity, by every way in, ids left out."""
    member = world.member
    found = {name: graph.find_entities(actor=member, name=name) for name in ("Helena Quorvane", "Helena", "Quorvane")}
    [entity_id] = found["Quorvane"]
    view = entity_views(actor=member, entity_ids=[entity_id])[entity_id]
    hood = graph.explore(actor=member, entity=view, depth=2, include_superseded=True)
    return {
        "found": {name: len(ids) for name, ids in found.items()},
        "view": (view.name, view.type, view.aliases, view.summary),
        "facts": sorted(f.statement for f in hood.outgoing + hood.incoming),
        "neighbours": sorted(n.name for n in hood.neighbours),
        "connections": graph.connection_counts(actor=member, entity_ids=[entity_id])[entity_id],
        "timeline": [f.statement for f in graph.timeline(actor=member, entity=view)],
        "types": graph.overview(actor=member).entity_types,
    }


@pytest.mark.parametrize("kept_name", ["Ms Quorvane", "Helena Quorvane"], ids=["open one kept", "board one kept"])
def test_a_member_does_not_see_a_hidden_alias_through_the_kept_entity(world, kept_name):
    other_name = "Helena Quorvane" if kept_name == "Ms Quorvane" else "Ms Quorvane"
    kept, merged = world.entity(kept_name), world.entity(other_name)
    before = member_sees(world)
    merge_entities(actor=world.admin, kept_id=kept.pk, merged_id=merged.pk)
    record = Entity.objects.get(pk=kept.pk)
    assert "Helena Quorvane" in [record.name, *record.aliases], "the admin's record has both names"
    after = member_sees(world)
    assert after == before
    assert after["view"][:3] == ("Ms Quorvane", "other", [])
    assert "Helena" not in repr([after["view"], after["facts"], after["neighbours"], after["timeline"]])
    assert graph.find_entities(actor=world.member, name="Quorvane") == [kept.pk]


def test_a_document_naming_the_merged_entity_links_to_the_kept_one(world):
    kept, merged = world.entity("Ms Quorvane"), world.entity("Helena Quorvane")
    assert merged.pk < kept.pk, "the retired entity would be found first"
    memo = world.board_fact.document
    assert memo is not None
    Mention.objects.create(entity=kept, document=memo, surface="Helena Quorvane")  # the retired one keeps its own
    merge_entities(actor=world.admin, kept_id=kept.pk, merged_id=merged.pk)
    signed = FactDraft(statement="Helena Quorvane signed the Vexmoor budget.", subject="Helena Quorvane")
    later = stated(world.reader, "Board follow-up", signed, category="board")
    assert later.subject_id == kept.pk
    assert later.document is not None
    assert get_or_create_entity(document=later.document, name="Helena Quorvane").pk == kept.pk


# --- types -------------------------------------------------------------------------------------------


def test_an_admins_type_is_shown_to_every_reader_and_audited(world):
    quorvane = world.entity("Ms Quorvane")
    assert entity_views(actor=world.member, entity_ids=[quorvane.pk])[quorvane.pk].type != "customer"
    change_entity_type(actor=world.admin, entity_id=quorvane.pk, type="customer")
    for reader in (world.member, world.reader):
        assert entity_views(actor=reader, entity_ids=[quorvane.pk])[quorvane.pk].type == "customer"
        assert graph.overview(actor=reader).entity_types.get("customer") == 1
    record = AuditRecord.objects.get(org=world.org, action="entity.type_changed")
    assert (record.target, record.details["to"]) == (quorvane.public_id, "customer")
    get_or_create_entity(document=world.open_facts[0].document, name="Ms Quorvane", type="person")
    assert Entity.objects.get(pk=quorvane.pk).type == "customer", "extraction does not undo an admin's type"


def test_a_type_outside_the_vocabulary_or_of_another_organisation_is_refused(world):
    quorvane = world.entity("Ms Quorvane")
    with pytest.raises(InvalidArgument, match="'wizard' is not an entity type"):
        change_entity_type(actor=world.admin, entity_id=quorvane.pk, type="wizard")
    theirs = graph_world()
    with pytest.raises(NotFound, match="No entity ent_"):
        change_entity_type(actor=world.admin, entity_id=theirs.entity("Ms Quorvane").pk, type="person")
    assert not AuditRecord.objects.filter(action="entity.type_changed").exists()
