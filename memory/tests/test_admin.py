"""The memory in the admin: personal rows hidden, content read-only, access moved by the placement service."""

import pytest
from django.contrib.auth.models import Group

from brain.models import AuditRecord, Category, OrganisationGroup
from brain.tests.admin_client import logged_in, make_operator, make_org_admin
from conftest import make_actor, make_user
from memory.graph.reads import search_facts
from memory.models import Chunk, Document, Entity, Fact, Value
from memory.search.passages import search_chunks
from memory.tests.factories import save

pytestmark = pytest.mark.django_db

SECRET = "The merger with Globex closes on 14 March; the code name is Bluebird."


def board_category(org):
    group = Group.objects.create(name=f"{org.slug}-board")
    OrganisationGroup.objects.create(group=group, org=org)
    category = Category.objects.create(org=org, slug="board", name="Board", restricted=True)
    category.groups.add(group)
    return category, group


def access_form(category, scope="shared", owner=""):
    return {"category": category.pk, "scope": scope, "owner": owner}


def test_personal_documents_and_their_chunks_are_hidden_from_admins_and_operators(actor):
    personal = save(actor, "My diary", SECRET, scope="personal")
    shared = save(actor, "Handbook", "Expenses are filed by the fifth of the month.")
    chunk = Chunk.objects.get(document=personal)
    for staff in (make_org_admin(actor.org), make_operator()):
        client = logged_in(staff)
        listing = client.get("/admin/memory/document/").content.decode()
        assert "Handbook" in listing
        assert "My diary" not in listing
        assert client.get(f"/admin/memory/document/{personal.pk}/change/").status_code == 302
        assert client.get(f"/admin/memory/document/{shared.pk}/change/").status_code == 200
        assert "Bluebird" not in client.get("/admin/memory/chunk/").content.decode()
        assert client.get(f"/admin/memory/chunk/{chunk.pk}/change/").status_code == 302


def test_a_documents_text_cannot_be_edited_in_the_admin(actor):
    document = save(actor, "Handbook", "Expenses are filed by the fifth of the month.")
    form = {**access_form(document.category), "title": "Rewritten", "content": "Expenses are never filed."}
    assert (
        logged_in(make_org_admin(actor.org)).post(f"/admin/memory/document/{document.pk}/change/", form).status_code
        == 302
    )
    document.refresh_from_db()
    assert (document.title, document.content) == ("Handbook", "Expenses are filed by the fifth of the month.")
    assert "never" not in Chunk.objects.get(document=document).text


def test_moving_a_document_to_a_restricted_category_hides_it_from_search_at_once(actor):
    document = save(actor, "Board minutes", SECRET)
    board, group = board_category(actor.org)
    insider = make_actor(actor.org, make_user(actor.org))
    insider.user.groups.add(group)
    assert search_chunks(actor=actor, query=SECRET).hits
    admin = make_org_admin(actor.org)
    page = logged_in(admin).post(f"/admin/memory/document/{document.pk}/change/", access_form(board))
    assert page.status_code == 302
    for mode in ("auto", "vector", "keyword"):
        assert search_chunks(actor=actor, query=SECRET, mode=mode, top_k=20).hits == []
    assert [hit.title for hit in search_chunks(actor=insider, query=SECRET).hits] == ["Board minutes"]
    assert set(Chunk.objects.filter(document=document).values_list("category", flat=True)) == {board.pk}
    assert set(Fact.objects.filter(document=document).values_list("category", flat=True)) <= {board.pk}
    record = AuditRecord.objects.get(org=actor.org, action="document.access_changed")
    assert record.user == admin
    assert record.target == document.public_id
    assert record.details["from"]["category"] == "general"
    assert record.details["to"]["category"] == "board"


def test_moving_a_document_moves_its_facts_out_of_fact_search(actor):
    document = save(actor, "Support", "Priya Shah leads support at BigCo since March 2026.")
    assert Fact.objects.filter(document=document).exists()
    board, _group = board_category(actor.org)
    logged_in(make_org_admin(actor.org)).post(f"/admin/memory/document/{document.pk}/change/", access_form(board))
    assert search_facts(actor=actor, query="who leads support at BigCo") == []


def test_every_version_of_a_document_moves_together(actor):
    old = save(actor, "Prices", "The starter plan costs 10 euros.", external_id="prices")
    new = save(actor, "Prices", "The starter plan costs 12 euros.", external_id="prices")
    board, _group = board_category(actor.org)
    logged_in(make_org_admin(actor.org)).post(f"/admin/memory/document/{new.pk}/change/", access_form(board))
    assert set(Document.objects.filter(pk__in=[old.pk, new.pk]).values_list("category", flat=True)) == {board.pk}
    assert set(Chunk.objects.filter(document=old).values_list("category", flat=True)) == {board.pk}


def test_a_crafted_category_of_another_organisation_is_a_form_error(actor, other_org):
    document = save(actor, "Handbook", "Expenses are filed by the fifth of the month.")
    theirs = Category.objects.get(org=other_org, slug="general")
    page = logged_in(make_org_admin(actor.org)).post(
        f"/admin/memory/document/{document.pk}/change/", access_form(theirs)
    )
    assert page.status_code == 200
    assert page.context["adminform"].form.errors["category"]
    document.refresh_from_db()
    assert document.category.org == actor.org


def test_a_personal_document_needs_an_owner_of_the_organisation(actor, other_org):
    document = save(actor, "Handbook", "Expenses are filed by the fifth of the month.")
    client = logged_in(make_org_admin(actor.org))
    url = f"/admin/memory/document/{document.pk}/change/"
    page = client.post(url, access_form(document.category, scope="personal"))
    assert "A personal document needs an owner" in page.content.decode()
    page = client.post(url, access_form(document.category, scope="personal", owner=make_user(other_org).pk))
    assert page.context["adminform"].form.errors["owner"]
    document.refresh_from_db()
    assert document.scope == "shared"


def test_a_fact_cannot_point_at_another_organisations_entity_nor_show_its_name(actor, other_org):
    save(actor, "Support", "Priya Shah leads support at BigCo since March 2026.")
    fact = Fact.objects.filter(org=actor.org).first()
    assert fact is not None
    theirs = Entity.objects.create(org=other_org, name="Initech Secret Project")
    form = {"kind": fact.kind, "subject": theirs.pk, "object": "", "relation": fact.relation,
            "value_key": "", "valid_from": "", "valid_to": "", "title": "", "description": ""}  # fmt: skip
    page = logged_in(make_org_admin(actor.org)).post(f"/admin/memory/fact/{fact.pk}/change/", form)
    assert page.status_code == 200
    assert page.context["adminform"].form.errors["subject"]
    assert "Initech" not in page.content.decode()
    fact.refresh_from_db()
    assert fact.subject_id != theirs.pk


def test_a_facts_statement_source_and_history_are_read_only(actor, other_org):
    save(actor, "Support", "Priya Shah leads support at BigCo since March 2026.")
    theirs = save(make_actor(other_org), "Their plans", "Initech plans to buy Globex next spring.")
    fact = Fact.objects.filter(org=actor.org).first()
    assert fact is not None
    form = {"kind": fact.kind, "statement": "Nobody leads support.", "superseded_at_0": "2026-01-01",
            "superseded_at_1": "00:00:00", "document": theirs.pk, "relation": fact.relation, "value_key": "",
            "valid_from": "", "valid_to": "", "title": "", "description": ""}  # fmt: skip
    url = f"/admin/memory/fact/{fact.pk}/change/"
    assert logged_in(make_org_admin(actor.org)).post(url, form).status_code == 302
    fact.refresh_from_db()
    assert fact.statement != "Nobody leads support."
    assert fact.superseded_at is None
    assert fact.document is not None
    assert fact.document.org == actor.org


def test_a_value_cannot_be_tied_to_another_organisations_fact_nor_to_a_personal_one(actor, other_org):
    other = make_actor(other_org)
    save(other, "Deals", "The Initech deal is worth $48,500.")
    save(actor, "Mine", "My private note: the Acme deal is worth $90,000.", scope="personal")
    entity = Entity.objects.create(org=actor.org, name="Umbrella")
    client = logged_in(make_org_admin(actor.org))
    for fact in (Fact.objects.filter(org=other_org).first(), Fact.objects.get(org=actor.org, scope="personal")):
        assert fact is not None
        form = {"entity": entity.pk, "fact": fact.pk, "key": "amount", "number": "1", "text": "", "unit": ""}
        page = client.post("/admin/memory/value/add/", form)
        assert page.status_code == 200
        assert page.context["adminform"].form.errors["fact"]
        assert fact.statement[:30] not in page.content.decode()
    assert not Value.objects.filter(key="amount", number=1).exists()
