"""The trash, attacked: what is in it is read by nobody; only whoever put it there and admins may
see and restore it; a restore brings it back exactly as it was; the purge deletes what is due and
nothing else, once, even when a run stops midway."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth.models import Group
from django.test import Client
from django.utils import timezone

from brain.core.errors import NotFound, PermissionDenied
from brain.models import AuditRecord, Category, Membership
from conftest import make_actor, make_user
from memory.access import readable
from memory.documents import trash
from memory.documents.placement import delete_document
from memory.documents.trash import list_trash, purge_due_trash, restore_document
from memory.graph.memories import forget, remember
from memory.graph.reads import search_facts, visible_entities, visible_facts
from memory.mcp_tools.memories import ForgetArgs, forget_tool
from memory.models import Chunk, Document, Fact
from memory.search.passages import search_chunks
from memory.tasks import purge_due_trash_task
from memory.tests.factories import save
from registers.commitments.services import visible_commitments
from registers.common import document_audience
from registers.models import Commitment

pytestmark = pytest.mark.django_db

PLAN = (
    "Duskwater launch plan. Priya Shah leads the Duskwater launch. The Duskwater kiosks cost 63,000 EUR. "
    "Priya Shah will send the kiosk contract to Pellucid Systems by Friday."
)


def rows_of(document: Document) -> dict[str, set[int]]:
    return {
        "chunks": set(Chunk.objects.filter(document=document).values_list("pk", flat=True)),
        "facts": set(Fact.objects.filter(document=document).values_list("pk", flat=True)),
    }


def found(actor, query: str = "Duskwater kiosks") -> set[str]:
    hits = search_chunks(actor=actor, query=query, top_k=10).hits
    return {hit.text for hit in hits}


def placement(document: Document) -> tuple[object, ...]:
    document.refresh_from_db()
    return (document.category_id, document.scope, document.owner_id)


@pytest.fixture
def plan(actor):
    return save(actor, "Duskwater launch plan", PLAN)


def test_a_deleted_document_is_read_by_nobody_its_author_included(actor, plan):
    assert found(actor)
    assert visible_facts(actor=actor).filter(document=plan).exists()
    trashed = delete_document(actor=actor, document_id=plan.pk)
    assert trashed.until.date() == (timezone.now() + timedelta(days=30)).date()
    assert found(actor) == set()
    assert search_facts(actor=actor, query="Duskwater kiosks cost") == []
    assert not Document.objects.filter(readable(actor), pk=plan.pk).exists()
    assert not visible_facts(actor=actor).filter(document=plan).exists()
    assert not visible_entities(actor=actor).filter(name__icontains="Duskwater").exists()
    # Nothing was deleted: the rows wait in the trash with the moment they went in.
    assert Chunk.objects.filter(document=plan, trashed_at__isnull=False).exists()
    assert not Chunk.objects.filter(document=plan, trashed_at__isnull=True).exists()
    assert not Fact.objects.filter(document=plan, trashed_at__isnull=True).exists()


def test_restoring_brings_back_the_same_passages_and_facts_with_the_same_access(actor, plan):
    before, where, facts_before = rows_of(plan), placement(plan), found(actor)
    statements = set(visible_facts(actor=actor).filter(document=plan).values_list("pk", "statement"))
    delete_document(actor=actor, document_id=plan.pk)
    restore_document(actor=actor, document_id=plan.pk)
    assert rows_of(plan) == before
    assert placement(plan) == where
    assert found(actor) == facts_before
    assert set(visible_facts(actor=actor).filter(document=plan).values_list("pk", "statement")) == statements
    actions = list(AuditRecord.objects.filter(org=actor.org).values_list("action", flat=True))
    assert "document.deleted" in actions
    assert "document.restored" in actions


def test_a_personal_document_restored_stays_its_owners_alone(actor):
    other = make_actor(actor.org)
    diary = save(actor, "Duskwater diary", PLAN, scope="personal")
    delete_document(actor=actor, document_id=diary.pk)
    restore_document(actor=actor, document_id=diary.pk)
    assert placement(diary) == (diary.category_id, "personal", actor.user.pk)
    assert found(actor)
    assert found(other) == set()


def test_a_member_neither_sees_nor_restores_another_members_trash(actor, plan):
    colleague = make_actor(actor.org)
    delete_document(actor=actor, document_id=plan.pk)
    assert list_trash(actor=colleague) == []
    with pytest.raises(NotFound):
        restore_document(actor=colleague, document_id=plan.pk)
    assert Document.objects.get(pk=plan.pk).trashed_at is not None


def test_nobody_of_another_organisation_sees_or_restores_it_not_even_an_admin(actor, plan, other_org):
    stranger = make_actor(other_org, make_user(other_org, role=Membership.ADMIN))
    delete_document(actor=actor, document_id=plan.pk)
    assert list_trash(actor=stranger) == []
    with pytest.raises(NotFound):
        restore_document(actor=stranger, document_id=plan.pk)


def test_an_admin_sees_and_restores_what_members_deleted_but_not_their_personal_or_restricted_ones(actor, plan):
    admin = make_actor(actor.org, make_user(actor.org, role=Membership.ADMIN))
    diary = save(actor, "Duskwater diary", "A note to myself about Duskwater.", scope="personal")
    board = Category.objects.create(org=actor.org, slug="board", name="Board", restricted=True)
    group = Group.objects.create(name=f"board-{actor.org.slug}")
    board.groups.add(group)
    actor.user.groups.add(group)
    minutes = save(actor, "Board minutes", "The board approved Duskwater.", category="board")
    for document in (plan, diary, minutes):
        delete_document(actor=actor, document_id=document.pk)
    assert {d.pk for d in list_trash(actor=admin)} == {plan.pk}
    for hidden in (diary, minutes):
        with pytest.raises(NotFound):
            restore_document(actor=admin, document_id=hidden.pk)
    restore_document(actor=admin, document_id=plan.pk)
    assert Document.objects.get(pk=plan.pk).trashed_at is None


def test_a_document_a_member_may_not_delete_stays_out_of_the_trash(actor, plan):
    colleague = make_actor(actor.org)
    with pytest.raises(PermissionDenied):
        delete_document(actor=colleague, document_id=plan.pk)
    assert list_trash(actor=actor) == []


def test_a_forgotten_memory_goes_to_the_trash_and_comes_back_with_its_facts(actor):
    memory = remember(actor=actor, content="The Duskwater budget owner is Priya Shah.", subject="Duskwater")
    out = forget_tool(actor, ForgetArgs(memory_id=memory.public_id))
    assert out.in_trash_until == (timezone.now() + timedelta(days=30)).date().isoformat()
    assert "in the trash until" in out.to_text()
    assert not visible_facts(actor=actor).filter(pk=memory.pk).exists()
    with pytest.raises(NotFound):  # forgotten once; the trash is not "a memory you can see"
        forget(actor=actor, memory_id=memory.pk)
    assert memory.document_id is not None
    restore_document(actor=actor, document_id=memory.document_id)
    assert visible_facts(actor=actor).filter(pk=memory.pk, statement=memory.statement).exists()


def test_the_organisations_period_decides_until_when(actor, plan):
    actor.org.trash_days = 7
    actor.org.save(update_fields=["trash_days"])
    plan.org.refresh_from_db()
    trashed = delete_document(actor=actor, document_id=plan.pk)
    assert trashed.until.date() == (timezone.now() + timedelta(days=7)).date()


def test_a_passage_written_for_a_document_in_the_trash_is_in_the_trash_too(actor, plan):
    delete_document(actor=actor, document_id=plan.pk)
    chunk = Chunk.objects.filter(document=plan).first()
    assert chunk is not None
    chunk.pk, chunk.ordinal = None, 99
    chunk.trashed_at = None  # a writer that did not know: the database gives it the document's mark
    chunk.save()
    chunk.refresh_from_db()
    assert chunk.trashed_at == Document.objects.get(pk=plan.pk).trashed_at


def test_a_fact_said_again_elsewhere_is_shown_through_the_other_source_while_the_first_is_in_the_trash(actor, plan):
    again = save(actor, "Kiosk note", PLAN.replace("Duskwater launch plan. ", "Kiosk note. "))
    twins = Fact.objects.filter(document=again, same_as__document=plan)
    if not twins.exists():
        pytest.skip("the extraction made no twins of these sentences")
    twin = twins.first()
    assert twin is not None
    assert not visible_facts(actor=actor).filter(pk=twin.pk).exists()
    delete_document(actor=actor, document_id=plan.pk)
    assert visible_facts(actor=actor).filter(pk=twin.pk).exists()
    restore_document(actor=actor, document_id=plan.pk)
    assert not visible_facts(actor=actor).filter(pk=twin.pk).exists()


def test_a_register_entry_taken_from_a_trashed_document_is_not_shown(actor, plan):
    entry = Commitment.objects.create(
        org=actor.org,
        owner_name="Priya Shah",
        what="Priya Shah will send the kiosk contract",
        promised_on=plan.recorded_at.date(),
        document=plan,
        origin="extracted",
        **document_audience(plan),
    )
    assert visible_commitments(actor=actor).filter(pk=entry.pk).exists()
    delete_document(actor=actor, document_id=plan.pk)
    assert not visible_commitments(actor=actor).filter(pk=entry.pk).exists()
    restore_document(actor=actor, document_id=plan.pk)
    assert visible_commitments(actor=actor).filter(pk=entry.pk).exists()


# --- the purge ----------------------------------------------------------------------------------


def trashed_days_ago(actor, title: str, days: float) -> Document:
    document = save(actor, title, f"{title}: the Duskwater kiosks cost 63,000 EUR.")
    delete_document(actor=actor, document_id=document.pk)
    moment = timezone.now() - timedelta(days=days)
    Document.objects.filter(pk=document.pk).update(trashed_at=moment)
    Chunk.objects.filter(document=document).update(trashed_at=moment)
    Fact.objects.filter(document=document).update(trashed_at=moment)
    return document


def test_the_purge_deletes_what_is_due_once_and_audits_each(actor):
    due = [trashed_days_ago(actor, f"Old plan {n}", 31) for n in range(3)]
    not_yet = trashed_days_ago(actor, "Recent plan", 29)
    live = save(actor, "Live plan", "The Duskwater kiosks are live.")
    assert purge_due_trash_task() == 3
    assert purge_due_trash_task() == 0  # twice is once
    assert not Document.objects.filter(pk__in=[d.pk for d in due]).exists()
    assert not Chunk.objects.filter(document_id__in=[d.pk for d in due]).exists()
    assert Document.objects.filter(pk=not_yet.pk, trashed_at__isnull=False).exists()
    assert Document.objects.filter(pk=live.pk, trashed_at__isnull=True).exists()
    purged = AuditRecord.objects.filter(org=actor.org, action="document.purged")
    assert sorted(purged.values_list("target", flat=True)) == sorted(d.public_id for d in due)
    assert set(purged.values_list("via", flat=True)) == {"nightly"}
    run = AuditRecord.objects.filter(org=actor.org, action="trash.purged")  # one per run and organisation
    assert [(r.who, r.details) for r in run] == [("trash purge", {"documents": 3, "memories": 0, "days": 30})]


def test_the_purge_follows_each_organisations_period(actor, other_org_actor):
    other_org_actor.org.trash_days = 3
    other_org_actor.org.save(update_fields=["trash_days"])
    mine = trashed_days_ago(actor, "Mine", 5)
    theirs = trashed_days_ago(other_org_actor, "Theirs", 5)
    assert purge_due_trash() == 1
    assert Document.objects.filter(pk=mine.pk).exists()
    assert not Document.objects.filter(pk=theirs.pk).exists()


def test_a_purge_stopped_midway_loses_nothing_and_the_next_run_finishes(actor, monkeypatch):
    due = [trashed_days_ago(actor, f"Old plan {n}", 40) for n in range(4)]
    not_yet = trashed_days_ago(actor, "Recent plan", 1)
    real, calls = trash.delete_documents, []

    def dies_after_the_first(documents):
        calls.append(documents)
        if len(calls) > 1:
            raise ConnectionError("the worker went away")  # Redis gone, the worker killed
        real(documents)

    monkeypatch.setattr(trash, "delete_documents", dies_after_the_first)
    with pytest.raises(ConnectionError):
        purge_due_trash()
    left = set(Document.objects.filter(pk__in=[d.pk for d in due]).values_list("pk", flat=True))
    assert left == {d.pk for d in due[1:]}  # the first is gone with its record; the others wait, whole
    for pk in left:
        assert Chunk.objects.filter(document_id=pk).exists()
    assert AuditRecord.objects.filter(action="document.purged").count() == 1
    monkeypatch.setattr(trash, "delete_documents", real)
    assert purge_due_trash() == 3
    assert not Document.objects.filter(pk__in=[d.pk for d in due]).exists()
    assert Document.objects.filter(pk=not_yet.pk).exists()
    assert AuditRecord.objects.filter(action="document.purged").count() == 4


def test_a_restore_racing_the_purge_wins_or_loses_whole(actor):
    old = trashed_days_ago(actor, "Old plan", 40)
    restore_document(actor=actor, document_id=old.pk)
    assert purge_due_trash() == 0  # restored after the batch was read: checked again under the lock
    assert Document.objects.filter(pk=old.pk, trashed_at__isnull=True).exists()


# --- the pages ----------------------------------------------------------------------------------


def web(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_delete_then_undo_on_the_pages_restores_it(actor, plan):
    client = web(actor.user)
    page = client.post(f"/memory/documents/{plan.pk}/delete/", {"org": actor.org.slug}, follow=True)
    text = page.content.decode()
    assert "Deleted: Duskwater launch plan. It is in the trash until" in text
    undo = f"/memory/trash/{plan.pk}/restore/?org={actor.org.slug}"
    assert f'action="{undo}"' in text
    back = client.post(undo, follow=True)
    assert back.status_code == 200
    assert "Restored: Duskwater launch plan" in back.content.decode()
    assert Document.objects.get(pk=plan.pk).trashed_at is None


def test_the_trash_page_lists_only_the_viewers_own_and_restore_refuses_others(actor, plan):
    delete_document(actor=actor, document_id=plan.pk)
    mine = web(actor.user).get(f"/memory/trash/?org={actor.org.slug}").content.decode()
    assert "Duskwater launch plan" in mine
    assert "Restore" in mine
    colleague = make_user(actor.org)
    theirs = web(colleague).get(f"/memory/trash/?org={actor.org.slug}").content.decode()
    assert "Duskwater launch plan" not in theirs
    assert "The trash is empty." in theirs
    refused = web(colleague).post(f"/memory/trash/{plan.pk}/restore/", {"org": actor.org.slug}, follow=True)
    assert "No document" in refused.content.decode()
    assert Document.objects.get(pk=plan.pk).trashed_at is not None


def test_a_saved_note_has_an_undo_that_moves_it_to_the_trash(actor):
    client = web(actor.user)
    page = client.post(
        "/knowledge/add/",
        {
            "org": actor.org.slug,
            "kind": "text",
            "title": "Kiosk note",
            "content": "Kiosks open at nine.",
            "scope": "shared",
        },
        follow=True,
    )
    saved = Document.objects.get(org=actor.org, title="Kiosk note")
    undo = f"/memory/documents/{saved.pk}/delete/?org={actor.org.slug}"
    assert f'action="{undo}"' in page.content.decode()
    client.post(undo)
    assert Document.objects.get(pk=saved.pk).trashed_at is not None


def test_forget_on_my_memories_has_an_undo(actor):
    memory = remember(actor=actor, content="The Duskwater budget owner is Priya Shah.")
    page = web(actor.user).post(
        "/memory/mine/forget/", {"org": actor.org.slug, "memory_id": memory.public_id}, follow=True
    )
    text = page.content.decode()
    assert "It is in the trash until" in text
    assert f'action="/memory/trash/{memory.document_id}/restore/?org={actor.org.slug}"' in text


def test_an_admin_sets_the_period_where_the_organisations_settings_are_and_it_is_bounded(actor):
    from django.core.exceptions import ValidationError

    from brain.tests.admin_client import logged_in, make_org_admin

    page = logged_in(make_org_admin(actor.org)).get(f"/admin/brain/organisation/{actor.org.pk}/change/")
    assert b'name="trash_days"' in page.content
    for days in (0, 366):
        actor.org.trash_days = days
        with pytest.raises(ValidationError, match="trash_days"):
            actor.org.full_clean()


def test_saving_again_under_the_id_of_a_trashed_document_stores_nothing_and_says_so(actor):
    from memory.mcp_tools.documents import AddKnowledgeArgs, add_company_knowledge_tool

    first = save(actor, "Duskwater plan", PLAN, external_id="wiki:duskwater", source_kind="mcp")
    delete_document(actor=actor, document_id=first.pk)
    args = AddKnowledgeArgs(title="Duskwater plan", content=PLAN + " Kiosks ship in May.", external_id="wiki:duskwater")
    out = add_company_knowledge_tool(actor, args)
    assert out.unchanged
    assert "in the trash" in out.detail
    assert list(Document.objects.filter(org=actor.org).values_list("pk", flat=True)) == [first.pk]
    restore_document(actor=actor, document_id=first.pk)
    assert not add_company_knowledge_tool(actor, args).unchanged  # restored: the save is its next version
    assert Document.objects.get(org=actor.org, version=2).previous_id == first.pk


def test_whoever_may_restore_may_delete_for_good_at_once_and_nobody_else(actor, plan):
    from memory.documents.trash import delete_for_good

    colleague = make_actor(actor.org)
    delete_document(actor=actor, document_id=plan.pk)
    with pytest.raises(NotFound):
        delete_for_good(actor=colleague, document_id=plan.pk)
    delete_for_good(actor=actor, document_id=plan.pk)
    assert not Document.objects.filter(pk=plan.pk).exists()
    assert not Chunk.objects.filter(document_id=plan.pk).exists()
    assert not Fact.objects.filter(document_id=plan.pk).exists()
    record = AuditRecord.objects.get(org=actor.org, action="document.purged")
    assert (record.user_id, record.details["early"]) == (actor.user.pk, True)
    with pytest.raises(NotFound):  # once only
        delete_for_good(actor=actor, document_id=plan.pk)


def test_delete_for_good_on_the_trash_page_asks_first(actor, plan):
    client = web(actor.user)
    delete_document(actor=actor, document_id=plan.pk)
    trash = client.get(f"/memory/trash/?org={actor.org.slug}").content.decode()
    url = f"/memory/trash/{plan.pk}/delete/?org={actor.org.slug}"
    assert f'href="{url}"' in trash
    asked = client.get(url).content.decode()
    assert "Delete for good?" in asked
    assert "This cannot be undone" in asked
    assert Document.objects.filter(pk=plan.pk).exists()  # asking deletes nothing
    done = client.post(url, {"org": actor.org.slug}, follow=True).content.decode()
    assert "Deleted for good: Duskwater launch plan" in done
    assert not Document.objects.filter(pk=plan.pk).exists()
    # A colleague's attempt at someone else's trash finds nothing and deletes nothing.
    other = save(actor, "Second plan", PLAN + " Second.")
    delete_document(actor=actor, document_id=other.pk)
    colleague = web(make_actor(actor.org).user)
    refused = colleague.post(f"/memory/trash/{other.pk}/delete/?org={actor.org.slug}", follow=True)
    assert "No document" in refused.content.decode()
    assert Document.objects.filter(pk=other.pk).exists()


def test_the_audit_trail_keeps_no_words_of_what_its_admins_may_not_read(actor):
    """Admins read the trail; a member's personal document and memory, and a restricted category's
    document, are named there by id only."""
    admin = make_actor(actor.org, make_user(actor.org, role=Membership.ADMIN))
    diary = save(actor, "Diary of a hard week", PLAN, scope="personal")
    delete_document(actor=actor, document_id=diary.pk)
    memory = remember(actor=actor, content="My salary review is on Friday.", scope="personal")
    forget(actor=actor, memory_id=memory.pk)
    secret = Category.objects.create(org=actor.org, slug="board", name="Board", restricted=True)
    group = Group.objects.create(name="board-members")
    secret.groups.add(group)
    actor.user.groups.add(group)
    minutes = save(actor, "Board minutes on the merger", PLAN, category="board")
    delete_document(actor=actor, document_id=minutes.pk)
    words = " ".join(str(r.details) for r in AuditRecord.objects.filter(org=actor.org))
    for secret_words in ("Diary of a hard week", "salary review", "merger"):
        assert secret_words not in words
    page = web(admin.user).get(f"/audit/{actor.org.slug}/").content.decode()
    assert "withheld" in page
    assert "Diary" not in page
