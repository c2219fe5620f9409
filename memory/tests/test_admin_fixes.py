"""The graph's fixes in the admin, through Django's test client: merging entities from the entity
list, undoing from the merge history, the type on the entity form, flagging and reviewing facts."""

from __future__ import annotations

import pytest

from brain.models import AuditRecord
from brain.tests.admin_client import logged_in, make_operator, make_org_admin
from memory.graph.fixes import merge_entities
from memory.graph.memories import remember
from memory.models import Entity, EntityMerge, Fact
from memory.tests.graph_world import GraphWorld, graph_world

pytestmark = pytest.mark.django_db

ENTITIES = "/admin/memory/entity/"
FACTS = "/admin/memory/fact/"
MERGES = "/admin/memory/entitymerge/"


@pytest.fixture
def world() -> GraphWorld:
    return graph_world()


def merge_page(client, ids, *, follow=False, **extra):
    return client.post(ENTITIES, {"action": "merge_selected", "_selected_action": ids, **extra}, follow=follow)


def test_an_admin_merges_selected_entities_into_the_one_chosen_on_the_next_page(world):
    kept, merged = world.entity("Ms Quorvane"), world.entity("Helena Quorvane")
    client = logged_in(make_org_admin(world.org))
    page = merge_page(client, [kept.pk, merged.pk])
    assert page.status_code == 200
    offered = {str(value) for value, _ in page.context["form"].fields["kept"].choices}
    assert offered == {str(kept.pk), str(merged.pk)}
    done = merge_page(client, [kept.pk, merged.pk], post="yes", kept=kept.pk)
    assert done.status_code == 302
    merge = EntityMerge.objects.get(org=world.org)
    assert (merge.kept_id, merge.merged_id) == (kept.pk, merged.pk)
    listing = client.get(ENTITIES).content.decode()
    assert "Ms Quorvane" in listing
    assert f"/admin/memory/entity/{merged.pk}/change/" not in listing, "the retired entity is not listed"


def test_the_merge_page_offers_only_entities_of_one_organisation(world):
    theirs = graph_world()
    ours, other = world.entity("Ms Quorvane"), theirs.entity("Helena Quorvane")
    admin_client = logged_in(make_org_admin(world.org))
    crafted = merge_page(admin_client, [ours.pk, other.pk], follow=True)
    assert "Select two or more entities of one organisation" in crafted.content.decode()
    helena = world.entity("Helena Quorvane")
    kept_elsewhere = merge_page(admin_client, [ours.pk, helena.pk], post="yes", kept=other.pk)
    assert kept_elsewhere.status_code == 200
    assert kept_elsewhere.context["form"].errors["kept"]
    operator = merge_page(logged_in(make_operator()), [ours.pk, other.pk], follow=True)
    assert "Select two or more entities of one organisation" in operator.content.decode()
    assert not EntityMerge.objects.exists()


def test_the_undo_button_on_the_merge_history_undoes_the_merge(world):
    kept, merged = world.entity("Ms Quorvane"), world.entity("Helena Quorvane")
    merge = merge_entities(actor=world.admin, kept_id=kept.pk, merged_id=merged.pk)
    stranger = logged_in(make_org_admin(graph_world().org))
    assert stranger.get(f"{MERGES}{merge.pk}/change/").status_code == 302
    stranger.post(f"{MERGES}{merge.pk}/undo/")
    assert EntityMerge.objects.get(pk=merge.pk).undone_at is None
    client = logged_in(make_org_admin(world.org))
    page = client.get(f"{MERGES}{merge.pk}/change/").content.decode()
    assert "Undo this merge" in page
    assert "subject: 1" in page
    assert client.get(f"{MERGES}{merge.pk}/undo/").status_code == 405
    assert client.post(f"{MERGES}{merge.pk}/undo/").status_code == 302
    merge.refresh_from_db()
    assert merge.undone_at is not None
    assert Entity.objects.get(pk=merged.pk).merged_into_id is None
    assert Fact.objects.get(pk=world.board_fact.pk).subject_id == merged.pk
    assert "Undo this merge" not in client.get(f"{MERGES}{merge.pk}/change/").content.decode()


def test_an_entitys_type_is_changed_on_its_form_and_audited(world):
    quorvane = world.entity("Ms Quorvane")
    admin = make_org_admin(world.org)
    client = logged_in(admin)
    wrong = client.post(f"{ENTITIES}{quorvane.pk}/change/", {"type": "wizard"})
    assert wrong.status_code == 200
    assert wrong.context["adminform"].form.errors["type"]
    assert client.post(f"{ENTITIES}{quorvane.pk}/change/", {"type": "customer"}).status_code == 302
    quorvane.refresh_from_db()
    assert (quorvane.type, quorvane.type_fixed) == ("customer", True)
    record = AuditRecord.objects.get(org=world.org, action="entity.type_changed")
    assert (record.user, record.via, record.details["to"]) == (admin, "admin", "customer")


def test_flag_as_broken_asks_for_a_reason_and_the_flagged_list_shows_it(world):
    fact = world.open_facts[0]
    client = logged_in(make_org_admin(world.org))
    asked = client.post(FACTS, {"action": "flag_selected", "_selected_action": [fact.pk]})
    assert asked.status_code == 200
    assert "What is wrong with it" in asked.content.decode()
    blank = client.post(FACTS, {"action": "flag_selected", "_selected_action": [fact.pk], "post": "yes", "reason": ""})
    assert blank.context["form"].errors["reason"]
    done = client.post(
        FACTS,
        {"action": "flag_selected", "_selected_action": [fact.pk], "post": "yes", "reason": "She declined the seat."},
    )
    assert done.status_code == 302
    fact.refresh_from_db()
    assert fact.flagged_at is not None
    flagged = client.get(FACTS, {"flagged": "yes"}).content.decode()
    assert "Ms Quorvane joined the advisory board." in flagged
    assert "She declined the seat." in flagged
    assert "dock budget" not in flagged


@pytest.mark.parametrize(("action", "retired"), [("restore_selected", False), ("retire_selected", True)])
def test_reviewing_a_flagged_fact_restores_or_retires_it(world, action, retired):
    fact = world.open_facts[0]
    client = logged_in(make_org_admin(world.org))
    client.post(FACTS, {"action": "flag_selected", "_selected_action": [fact.pk], "post": "yes", "reason": "wrong"})
    assert client.post(FACTS, {"action": action, "_selected_action": [fact.pk]}).status_code == 302
    fact.refresh_from_db()
    assert fact.flagged_at is None
    assert (fact.superseded_at is not None) is retired


def test_personal_rows_stay_hidden_from_the_fixes(world):
    personal = remember(actor=world.member, content="Glimmerwick is my cat.", subject="Glimmerwick", scope="personal")
    mine = Entity.objects.get(org=world.org, name="Glimmerwick")
    client = logged_in(make_org_admin(world.org))
    assert "Glimmerwick" not in client.get(ENTITIES).content.decode()
    merge_page(client, [mine.pk, world.entity("Ms Quorvane").pk], post="yes", kept=mine.pk)
    client.post(FACTS, {"action": "flag_selected", "_selected_action": [personal.pk], "post": "yes", "reason": "x"})
    assert not EntityMerge.objects.exists()
    personal.refresh_from_db()
    assert personal.flagged_at is None
