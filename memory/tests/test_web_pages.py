"""The memory pages through Django's test client: each shows what the viewer's own token would
see, runs its tool through ``execute`` (charged and recorded), and escapes what documents say."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest
from django.test import Client
from django.utils import timezone

from brain.core.actors import Actor
from brain.models import ToolCall
from conftest import make_actor, make_org, make_user
from memory.graph import memories as fact_services
from memory.graph.writes import FactDraft, record_facts
from memory.models import Document, Entity, Fact
from memory.tests.factories import save
from usage.tests.test_plans import at_edge

pytestmark = pytest.mark.django_db


def client_for(actor: Actor) -> Client:
    client = Client()
    client.force_login(actor.user)
    return client


def main_of(content: bytes) -> str:
    page = content.decode()
    return page[page.index("<main") : page.index("</main>")]


def day(n: int) -> datetime:
    return timezone.make_aware(datetime(2026, 1, 1)) + timedelta(days=n)


def stated(actor: Actor, recorded: datetime, statement: str, **draft: object) -> Fact:
    """One statement recorded as Brain would have recorded it on ``recorded``."""
    document = save(actor, statement[:60], statement, ingest=False, source_kind=f"s{recorded:%s}")
    Document.objects.filter(pk=document.pk).update(recorded_at=recorded, status="ready")
    document.refresh_from_db()
    return record_facts(document=document, drafts=[FactDraft(statement=statement, **draft)])[0]  # type: ignore[arg-type]


@pytest.fixture
def members(org):
    return make_actor(org, via="web"), make_actor(org, via="web")


def test_a_personal_document_is_found_by_its_owner_and_not_found_for_another_member(members):
    owner, other = members
    document = save(owner, "My salary notes", "I asked for a raise in March.", scope="personal")
    mine = client_for(owner).get(f"/memory/documents/{document.pk}/")
    assert mine.status_code == 200
    assert b"My salary notes" in mine.content
    assert b"I asked for a raise in March." in mine.content
    theirs = client_for(other).get(f"/memory/documents/{document.pk}/")
    missing = client_for(other).get(f"/memory/documents/{document.pk + 1000}/")
    assert (theirs.status_code, missing.status_code) == (404, 404)
    assert f"No document doc_{document.pk} in this organisation.".encode() in theirs.content
    assert f"No document doc_{document.pk + 1000} in this organisation.".encode() in missing.content
    assert b"salary" not in theirs.content
    assert main_of(theirs.content).replace(f"doc_{document.pk}", "doc_N") == main_of(missing.content).replace(
        f"doc_{document.pk + 1000}", "doc_N"
    )  # the same page, whether it exists or not


def test_a_document_page_shows_its_passages_facts_entities_and_versions(actor):
    first = save(actor, "Roles", "Sam Carter is head of support.", external_id="roles")
    second = save(actor, "Roles", "Priya Shah became head of support on 1 March 2026.", external_id="roles")
    page = client_for(actor).get(f"/memory/documents/{second.pk}/").content.decode()
    assert "Priya Shah became head of support on 1 March 2026." in page
    assert "valid from 2026-03-01" in page  # its fact, with its validity
    assert f'href="/memory/entities/{Entity.objects.get(org=actor.org, name="Priya Shah").pk}/"' in page
    assert f'href="/memory/documents/{first.pk}/">Version 1</a>' in page
    assert "Version 2 (this page)" in page
    old = client_for(actor).get(f"/memory/documents/{first.pk}/").content.decode()
    assert "replaced" in old
    assert "by version 2" in old
    assert ToolCall.objects.filter(org=actor.org, tool="retrieve_company_memory", via="web").count() == 2


def test_a_written_document_is_rendered_as_markdown_without_raw_html(actor):
    text = "# Parking\n\nVisitors park in **bay C**.\n\n<script>alert(1)</script>\n\n- one\n- two"
    document = save(actor, "Visitors", text, content_type="text/markdown")
    page = main_of(client_for(actor).get(f"/memory/documents/{document.pk}/").content)
    assert "<strong>bay C</strong>" in page
    assert "<li>one</li>" in page
    assert "<script>alert" not in page
    message = save(actor, "Ines", "**not bold** in a chat", speaker="Ines", conversation="#ops")
    chat = main_of(client_for(actor).get(f"/memory/documents/{message.pk}/").content)
    assert "**not bold**" in chat


def test_a_document_still_being_ingested_says_so(actor):
    document = save(actor, "Fresh notes", "Written just now.", ingest=False)
    page = client_for(actor).get(f"/memory/documents/{document.pk}/").content.decode()
    assert "Being ingested" in page
    assert "Written just now." in page


def test_another_organisations_entity_is_not_found(actor):
    elsewhere = make_actor(make_org())
    save(elsewhere, "Their team", "Dana Lee is head of sales at Initech.")
    entity = Entity.objects.get(org=elsewhere.org, name="Dana Lee")
    response = client_for(actor).get(f"/memory/entities/{entity.pk}/")
    assert response.status_code == 404
    assert f"No entity ent_{entity.pk} that you can see.".encode() in response.content
    assert b"Dana" not in response.content


def test_as_of_changes_what_the_entity_page_shows(actor):
    role = dict(object="Support", relation="head_of", single_valued=True)
    stated(actor, day(0), "Sam is head of support.", subject="Sam", valid_from=date(2025, 1, 1), **role)
    stated(actor, day(60), "Priya is head of support.", subject="Priya", valid_from=date(2026, 3, 1), **role)
    support = Entity.objects.get(org=actor.org, name="Support")
    client = client_for(actor)

    now = client.get(f"/memory/entities/{support.pk}/").content.decode()
    assert "Priya is head of support." in now
    assert f"replaced {day(60):%Y-%m-%d}" in now  # Sam's fact, marked
    assert "replaced by: Priya is head of support." in now
    assert "memory replaced it" in now
    assert "became true" in now

    then = client.get(f"/memory/entities/{support.pk}/?as_of={day(30):%Y-%m-%d}").content.decode()
    assert "Sam is head of support." in then
    assert "Priya" not in then  # recorded later: not known then, nor drawn, nor among the documents
    assert "badge-replaced" not in then


def test_as_of_reads_imported_history_by_when_it_was_said(actor):
    """An archive loaded today still has its history: as of a day, the page shows what the sources
    had said by then, unless asked for what memory had learned by then."""
    role = dict(object="Billing", relation="head_of", single_valued=True)
    for when, who in ((date(2024, 2, 1), "Ana"), (date(2024, 9, 1), "Ben")):
        document = save(
            actor,
            f"{who} note",
            f"{who} is head of billing.",
            ingest=False,
            occurred_at=timezone.make_aware(datetime.combine(when, datetime.min.time())),
        )
        Document.objects.filter(pk=document.pk).update(status="ready")
        draft = FactDraft(statement=f"{who} is head of billing.", subject=who, valid_from=when, **role)  # type: ignore[arg-type]
        record_facts(document=document, drafts=[draft])
    billing = Entity.objects.get(org=actor.org, name="Billing")
    client = client_for(actor)
    then = main_of(client.get(f"/memory/entities/{billing.pk}/?as_of=2024-05-01").content)
    assert "Ana is head of billing." in then
    assert "Ben" not in then
    assert "what the sources had said by the end of 2024-05-01" in then
    later = main_of(client.get(f"/memory/entities/{billing.pk}/?as_of=2024-12-01").content)
    assert "Ben is head of billing." in later
    assert "badge-replaced" in later  # Ana's, replaced by Ben's by then
    learned = main_of(client.get(f"/memory/entities/{billing.pk}/?as_of=2024-05-01&by=learned").content)
    assert "No current facts about it as of that day" in learned  # memory learned all of it today


def test_the_entity_page_draws_its_neighbours_as_links_and_escapes_their_names(actor):
    works = [{"from": "Acme", "to": "<b>Bold</b> Corp", "relation": "works_with"}]
    fact_services.remember(actor=actor, content="Acme works with <b>Bold</b> Corp.", relations=works)
    acme = Entity.objects.get(org=actor.org, name="Acme")
    bold = Entity.objects.get(org=actor.org, name="<b>Bold</b> Corp")
    page = client_for(actor).get(f"/memory/entities/{acme.pk}/?depth=2").content.decode()
    assert '<svg class="graph"' in page
    assert f'<a href="/memory/entities/{bold.pk}/?depth=2" class="node">' in page
    assert "&lt;b&gt;Bold&lt;/b&gt; Corp" in page
    assert "<b>Bold</b>" not in page


def test_search_shows_marked_passages_and_the_facts_behind_them(actor):
    document = save(actor, "Roles 2026", "Priya Shah became head of support on 1 March 2026.")
    response = client_for(actor).get("/memory/search/", {"q": "head of support"})
    page = response.content.decode()
    assert response.status_code == 200
    assert f'href="/memory/documents/{document.pk}/#passage-' in page
    assert ">Answer<" in page
    assert "<mark>head</mark>" in page
    assert "<mark>support</mark>" in page
    assert "Facts behind it" in page
    assert "valid from 2026-03-01" in page
    call = ToolCall.objects.get(org=actor.org, tool="search_company_memory")
    assert (call.via, call.outcome) == ("web", "ok")


def test_search_shows_each_document_once_and_filters_by_the_url(actor):
    long = "\n\n".join(
        f"## Part {n}\n\nThe harbour ferry timetable, part {n}: boats leave every {n + 10} minutes." for n in range(12)
    )
    page_doc = save(actor, "Ferry handbook", long, content_type="text/markdown")
    save(actor, "Ferry chat", "Who has the ferry timetable for the harbour?", speaker="Ines", conversation="#ops")
    client = client_for(actor)
    page = client.get("/memory/search/", {"q": "harbour ferry timetable"}).content.decode()
    assert page.count(">Ferry handbook</a>") == 2  # the best match and one row, however many passages matched
    assert f'href="/memory/documents/{page_doc.pk}/#passage-' in page
    assert "more in this document" in page
    for name in ("kind", "person", "category", "after", "before"):
        assert f'name="{name}"' in page
    only_ines = client.get("/memory/search/", {"q": "harbour ferry timetable", "person": "Ines"}).content.decode()
    assert "Ferry handbook" not in only_ines
    assert "Ferry chat" in only_ines
    assert "Clear filters" in only_ines
    nothing = client.get("/memory/search/", {"q": "harbour ferry timetable", "before": "2001-01-01"}).content.decode()
    assert "with these filters" in nothing


def test_search_reads_a_day_filter_in_the_organisations_zone(actor):
    actor.org.time_zone = "Pacific/Auckland"
    actor.org.save(update_fields=["time_zone"])
    said = datetime(2026, 3, 1, 20, 0, tzinfo=UTC)  # 2 March, 09:00 in Auckland
    save(actor, "Ines", "The ferry timetable changes next week.", speaker="Ines", conversation="#ops", occurred_at=said)
    client = client_for(actor)
    kept = client.get("/memory/search/", {"q": "ferry timetable", "after": "2026-03-02"}).content.decode()
    assert "with these filters" not in kept
    gone = client.get("/memory/search/", {"q": "ferry timetable", "before": "2026-03-01"}).content.decode()
    assert "with these filters" in gone


@pytest.mark.parametrize(
    ("days", "says"),
    [
        ({"after": "1 March"}, "From must be a day written YYYY-MM-DD"),
        ({"before": "2026-02-30"}, "To must be a day written YYYY-MM-DD"),
        ({"after": "2026-03-05", "before": "2026-03-01"}, "From (2026-03-05) is after To (2026-03-01)"),
    ],
)
def test_a_day_filter_that_cannot_be_read_is_refused_not_dropped(actor, days, says):
    save(actor, "Ferry", "The ferry timetable changes next week.")
    answer = client_for(actor).get("/memory/search/", {"q": "ferry timetable", **days})
    assert answer.status_code == 400
    assert says in answer.content.decode()
    assert "The ferry timetable changes" not in answer.content.decode()


def test_search_finds_a_personal_document_only_for_its_owner(members):
    owner, other = members
    save(owner, "Private plans", "I plan to move to the Lisbon office.", scope="personal")
    assert b"Private plans" in client_for(owner).get("/memory/search/", {"q": "Lisbon office"}).content
    assert b"Private plans" not in client_for(other).get("/memory/search/", {"q": "Lisbon office"}).content


def test_search_escapes_what_documents_say_and_refuses_a_bad_day(actor):
    save(actor, "<script>alert(1)</script> notes", "The <img src=x onerror=alert(1)> launch is on Friday.")
    page = client_for(actor).get("/memory/search/", {"q": "launch"}).content.decode()
    assert "<script>alert" not in page
    assert "<img src=x" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt; notes" in page
    bad = client_for(actor).get("/memory/search/", {"q": "launch", "as_of": "2026-13-45"})
    assert bad.status_code == 400
    assert b"as_of" in bad.content


def test_a_search_out_of_credits_shows_the_refusal(actor):
    at_edge(actor.org, free_left=0, credits=0)
    response = client_for(actor).get("/memory/search/", {"q": "anything"})
    assert response.status_code == 402
    assert b"credits" in response.content


def test_forget_moves_a_memory_to_the_trash_and_refuses_what_forget_does_not_allow(members):
    owner, other = members
    fact = fact_services.remember(actor=owner, content="I prefer meetings after 10:00.", scope="personal")
    theirs = fact_services.remember(actor=other, content="The office closes at 18:00.")
    client = client_for(owner)
    assert b"I prefer meetings after 10:00." in client.get("/memory/mine/").content
    assert b"The office closes" not in client.get("/memory/mine/").content
    assert client.get("/memory/mine/forget/").status_code == 405
    refused = client.post("/memory/mine/forget/", {"memory_id": theirs.public_id}, follow=True).content.decode()
    assert "remembered by someone else" in refused
    done = client.post("/memory/mine/forget/", {"memory_id": fact.public_id}, follow=True).content.decode()
    assert "Forgotten: I prefer meetings after 10:00." in done
    assert Fact.objects.get(pk=fact.pk).trashed_at is not None
    assert b"I prefer meetings after 10:00." not in client.get("/memory/mine/").content
    assert Fact.objects.filter(pk=theirs.pk).exists()


def test_my_memories_lists_the_documents_i_saved(members):
    owner, other = members
    mine = save(owner, "Launch checklist", "Check the banners.")
    save(other, "Their checklist", "Check the mail.")
    page = client_for(owner).get("/memory/mine/").content.decode()
    assert f'href="/memory/documents/{mine.pk}/">Launch checklist</a>' in page
    assert "Their checklist" not in page


@pytest.mark.parametrize("path", ["/memory/search/", "/memory/documents/1/", "/memory/entities/1/", "/memory/mine/"])
def test_the_memory_pages_need_a_login(db, path):
    response = Client().get(path)
    assert response.status_code == 302
    assert "/login/" in response["Location"]


def test_a_member_of_two_organisations_searches_the_one_they_choose(org):
    second = make_org()
    user = make_user(org)
    from brain.core.services import add_member

    add_member(org=second, user=user)
    save(make_actor(second, user), "Second org plan", "The second organisation ships in May.")
    client = Client()
    client.force_login(user)
    assert b"Second org plan" not in client.get("/memory/search/", {"q": "ships in May", "org": org.slug}).content
    assert b"Second org plan" in client.get("/memory/search/", {"q": "ships in May", "org": second.slug}).content


def test_search_as_of_reads_what_the_sources_said_by_then_and_says_so(actor):
    imported = datetime(2025, 3, 1, 9, tzinfo=UTC)
    save(actor, "Board minutes March 2025", "The board approved the Lisbon office lease.", occurred_at=imported)
    client = client_for(actor)
    said = client.get("/memory/search/", {"q": "Lisbon office lease", "as_of": "2025-03-11"}).content.decode()
    assert ">Board minutes March 2025</a>" in said
    assert "what the sources had said by the end of 2025-03-11" in said
    learned = client.get("/memory/search/", {"q": "Lisbon office lease", "as_of": "2025-03-11", "by": "learned"})
    page = learned.content.decode()
    assert ">Board minutes March 2025</a>" not in page
    assert "what Brain had learned by the end of 2025-03-11" in page


def test_search_filters_are_the_search_tools_own(actor):
    for n in range(24):
        save(actor, f"Ferry page {n}", f"The harbour ferry timetable, edition {n}: boats leave every {n + 10} minutes.")
    save(actor, "#ops", "I printed the ferry timetable for the harbour office.", speaker="Ines", conversation="#ops")
    client = client_for(actor)
    filtered = client.get("/memory/search/", {"q": "harbour ferry timetable edition", "person": "Ines"})
    page = filtered.content.decode()
    assert "said by Ines" in page
    assert ">Ferry page 3</a>" not in page
    call = ToolCall.objects.filter(org=actor.org, tool="search_company_memory").latest("pk")
    assert call.outcome == "ok"


@pytest.mark.parametrize(
    "params",
    [
        {"q": "ferry\x00", "person": "Ines\x00"},
        {"q": "ferry", "category": "x" * 5000},
        {"q": "ferry", "after": "99999-01-01"},
        {"q": "ferry", "as_of": "2026-13-40", "by": "anything"},
        {"q": "ferry", "kind": "' OR 1=1 --"},
        {"q": "ferry", "after": "2026-03-02", "before": "2026-03-01"},
    ],
)
def test_the_search_page_answers_hostile_filters_in_words(actor, params):
    save(actor, "Ferry page", "The harbour ferry leaves every ten minutes.")
    response = client_for(actor).get("/memory/search/", params)
    page = response.content.decode()
    assert response.status_code in (200, 400)
    assert "search_company_memory" not in page
    assert "Traceback" not in page
