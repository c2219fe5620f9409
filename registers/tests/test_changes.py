"""A later source changing a value, and sources disagreeing: through add_document, the ingestion
task and the nightly scan, as a user's documents arrive."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest
from django.urls import reverse

from brain.tests.admin_client import logged_in, make_org_admin
from memory.models import Chunk, Document, Fact
from memory.tests.factories import save
from registers.commitments.services import list_commitments
from registers.contradictions.services import answer_contradiction, list_contradictions
from registers.models import Contradiction
from registers.nightly import run_nightly
from registers.tests.helpers import switch_on

pytestmark = pytest.mark.django_db
UTC = ZoneInfo("UTC")  # the test organisation's zone


def day(month: int, date: int) -> datetime:
    return datetime(2025, month, date, 9, 0, tzinfo=UTC)


def facts_saying(actor, words: str) -> list[Fact]:
    return list(Fact.objects.filter(org=actor.org, statement__icontains=words).order_by("pk"))


def test_an_update_in_a_later_document_supersedes_the_earlier_date_without_a_contradiction(actor):
    switch_on(actor.org, "contradictions")
    save(actor, "Office plans", "The Lisbon office opens on 1 May 2025.", occurred_at=day(3, 3))
    save(actor, "Office news", "Update: the Lisbon office now opens on 15 June 2025, not 1 May.", occurred_at=day(4, 7))
    [old] = facts_saying(actor, "opens on 1 May")
    [new] = facts_saying(actor, "now opens")
    assert old.superseded_by_id == new.pk
    assert old.superseded_at is not None
    assert new.superseded_at is None
    assert [str(v.date) for v in new.values.all()] == ["2025-06-15"]  # "not 1 May" is no value of it
    run_nightly(actor.org, only="contradictions")
    assert not Contradiction.objects.filter(org=actor.org).exists()


def test_a_later_document_giving_another_date_without_saying_it_changed_raises_a_contradiction(actor):
    switch_on(actor.org, "contradictions")
    save(actor, "Office plans", "The Lisbon office opens on 1 May 2025.", occurred_at=day(3, 3))
    save(actor, "Facilities notes", "The Lisbon office opens on 15 June 2025.", occurred_at=day(4, 7))
    both = facts_saying(actor, "Lisbon office opens")
    assert len(both) == 2
    assert all(f.superseded_at is None for f in both)
    run_nightly(actor.org, only="contradictions")
    [entry] = Contradiction.objects.filter(org=actor.org)
    assert {entry.fact_a_id, entry.fact_b_id} == {f.pk for f in both}


def test_a_new_price_said_to_be_new_supersedes_the_old_one(actor):
    save(actor, "Price list", "The Enterprise plan costs $40k a year.", occurred_at=day(1, 6))
    save(actor, "Pricing mail", "The Enterprise plan now costs $45k a year.", occurred_at=day(2, 3))
    [old] = facts_saying(actor, "costs $40k")
    [new] = facts_saying(actor, "now costs $45k")
    assert old.superseded_by_id == new.pk


def test_one_price_stated_three_ways_is_one_contradiction_naming_all_three(actor):
    switch_on(actor.org, "contradictions")
    save(actor, "Price list", "The Enterprise plan costs $40k a year.", occurred_at=day(1, 6))
    save(actor, "Sales deck", "The Enterprise plan is $45k per year.", occurred_at=day(1, 8))
    run_nightly(actor.org, only="contradictions")
    save(actor, "Board pack", "Enterprise plan price: $50k.", occurred_at=day(1, 9))
    run_nightly(actor.org, only="contradictions")
    [entry] = list_contradictions(actor=actor)
    claims = [entry.claim_a, entry.claim_b, *(s["claim"] for s in entry.more)]
    assert sorted(claims) == sorted(f.statement for f in facts_saying(actor, "Enterprise plan"))
    assert entry.severity == "high"
    assert "Board pack" in entry.more[0]["source"]
    # Choosing one settles it: the other two are superseded by it.
    answer_contradiction(actor=actor, contradiction_id=entry.public_id, answer="c", note="Board pack is current.")
    standing = [f.statement for f in facts_saying(actor, "Enterprise plan") if f.superseded_at is None]
    assert standing == ["Enterprise plan price: $50k."]


def test_two_sources_naming_different_owners_of_one_account_raise_a_contradiction(actor):
    switch_on(actor.org, "contradictions")
    save(actor, "Account map", "Anna owns the Northwind account.", occurred_at=day(1, 6))
    save(actor, "CRM export", "Tom is the account owner for Northwind.", occurred_at=day(1, 9))
    run_nightly(actor.org, only="contradictions")
    [entry] = Contradiction.objects.filter(org=actor.org)
    assert {entry.claim_a, entry.claim_b} == {
        "Anna owns the Northwind account.",
        "Tom is the account owner for Northwind.",
    }


def test_a_new_owner_said_to_have_taken_over_supersedes_the_old_one(actor):
    save(actor, "Account map", "Anna owns the Northwind account.", occurred_at=day(1, 6))
    save(actor, "Team news", "Tom took over the Northwind account.", occurred_at=day(2, 9))
    [old] = facts_saying(actor, "Anna owns")
    [new] = facts_saying(actor, "Tom took over")
    assert old.superseded_by_id == new.pk


def promise_and_replies(actor, settings):
    """A promise made in a meeting on 2 March; a mail dated 27 February (saved later) and a chat
    message of 5 March both say the quote went out."""
    settings.BRAIN_EXTRACT_FACTS = False
    switch_on(actor.org, "commitments")
    meeting = "Priya: Thanks all. I'll send the revised quote to BigCo by Friday.\n\nSam: Sounds good."
    save(actor, "BigCo meeting", meeting, occurred_at=datetime(2026, 3, 2, 10, tzinfo=UTC), source_kind="transcript")
    save(
        actor,
        "Old thread",
        "Hi all,\nPriya sent the first quote to BigCo last month.\nThanks",
        occurred_at=datetime(2026, 2, 27, 9, tzinfo=UTC),
        source_kind="mail",
    )
    reply = "Priya: Morning! Yes, the revised quote for BigCo went out this morning. Next up is the MID."
    return save(
        actor,
        "sales 05 Mar",
        reply,
        speaker="Priya",
        conversation="sales",
        occurred_at=datetime(2026, 3, 5, 9, tzinfo=UTC),
        source_kind="slack",
    )


def test_a_verdict_names_the_passages_it_rests_on_with_the_line_that_matched(actor, settings):
    reply = promise_and_replies(actor, settings)
    run_nightly(actor.org)
    [item] = list_commitments(actor=actor)
    verdict = item.verdict
    assert verdict is not None
    [found] = verdict.found  # the mail dated before the promise is no evidence, though saved after it
    passage = reply.chunks.get()
    assert (found["id"], found["document"], found["day"]) == (passage.public_id, reply.public_id, "2026-03-05")
    assert found["line"] == "Yes, the revised quote for BigCo went out this morning."
    assert passage.public_id in verdict.summary
    assert "went out this morning" in verdict.summary
    assert "passage(s)" not in verdict.summary


def test_the_registers_page_links_each_piece_of_evidence_to_its_passage(actor, settings, client):
    reply = promise_and_replies(actor, settings)
    run_nightly(actor.org)
    client.force_login(actor.user)
    page = client.get(reverse("registers"))
    passage = reply.chunks.get()
    href = f"{reverse('memory-document', args=[reply.pk])}?org={actor.org.slug}#passage-{passage.pk}"
    html = page.content.decode()
    assert "“Yes, the revised quote for BigCo went out this morning.”" in html
    assert f'<a href="{href}">sales 05 Mar</a>, 2026-03-05' in html
    assert passage.public_id not in html
    assert reply.public_id not in html


def test_a_verdict_on_a_shared_promise_never_rests_on_a_personal_note_or_a_restricted_page(actor, settings):
    """Everyone who reads the commitment reads its verdict: a line only some of them may read is no
    evidence, however well it matches."""
    from brain.models import Category

    settings.BRAIN_EXTRACT_FACTS = False
    switch_on(actor.org, "commitments")
    meeting = "Priya: Thanks all. I'll send the revised quote to BigCo by Friday.\n\nSam: Sounds good."
    save(actor, "BigCo meeting", meeting, occurred_at=datetime(2026, 3, 2, 10, tzinfo=UTC), source_kind="transcript")
    board = Category.objects.create(org=actor.org, slug="board", name="Board", restricted=True)
    done = "Priya: the revised quote for BigCo went out this morning."
    save(actor, "My notes", done, occurred_at=datetime(2026, 3, 4, 9, tzinfo=UTC), scope="personal")
    restricted = save(actor, "Board notes", done, occurred_at=datetime(2026, 3, 5, 9, tzinfo=UTC))
    Document.objects.filter(pk=restricted.pk).update(category=board)
    Chunk.objects.filter(document=restricted).update(category=board)
    run_nightly(actor.org)
    [item] = list_commitments(actor=actor)
    assert item.verdict is not None
    assert item.verdict.found == []
    assert "went out" not in item.verdict.summary


def test_notes_saved_after_the_promise_but_dated_before_it_in_their_title_are_no_evidence(actor, settings):
    settings.BRAIN_EXTRACT_FACTS = False
    switch_on(actor.org, "commitments")
    meeting = "Priya: Thanks all. I'll send the revised quote to BigCo by Friday.\n\nSam: Sounds good."
    save(actor, "BigCo meeting", meeting, occurred_at=datetime(2026, 3, 2, 10, tzinfo=UTC), source_kind="transcript")
    # Saved today, without occurred_at: its title says when it was written, before the promise.
    save(
        actor,
        "Weekly sync 2026-02-23",
        "Priya sent the revised quote to BigCo, an earlier draft.",
        source_kind="upload",
    )
    run_nightly(actor.org)
    [item] = list_commitments(actor=actor)
    assert item.verdict is not None
    assert item.verdict.found == []
    assert "stays open" in item.verdict.summary


def test_an_admin_answers_an_entry_of_three_statements_with_the_third(actor):
    switch_on(actor.org, "contradictions")
    save(actor, "Price list", "The Enterprise plan costs $40k a year.", occurred_at=day(1, 6))
    save(actor, "Sales deck", "The Enterprise plan is $45k per year.", occurred_at=day(1, 8))
    save(actor, "Board pack", "Enterprise plan price: $50k.", occurred_at=day(1, 9))
    run_nightly(actor.org, only="contradictions")
    [entry] = Contradiction.objects.filter(org=actor.org)
    client = logged_in(make_org_admin(actor.org))
    url = reverse("admin:registers_answer", args=[entry.pk])
    page = client.get(url).content.decode()
    assert "Enterprise plan price: $50k." in page
    assert 'value="c"' in page
    assert 'value="d"' not in page  # only the letters of its own statements
    client.post(url, {"answer": "c", "note": "The board pack is the current list."})
    entry.refresh_from_db()
    assert (entry.state, entry.answer) == ("resolved", "c")
    assert [f.statement for f in facts_saying(actor, "Enterprise plan") if f.superseded_at is None] == [
        "Enterprise plan price: $50k."
    ]


def test_reading_a_stored_document_again_gives_its_facts_their_topic(actor):
    from memory.graph.document_facts import extract_document

    switch_on(actor.org, "contradictions")
    first = save(actor, "Price list", "The Enterprise plan costs $40k a year.", occurred_at=day(1, 6))
    second = save(actor, "Sales deck", "The Enterprise plan is $45k per year.", occurred_at=day(1, 8))
    Fact.objects.filter(org=actor.org).update(topic="")  # as stored before topics were read
    for document in (first, second):
        extract_document(document_id=document.pk)
    [kept] = facts_saying(actor, "costs $40k")
    assert kept.topic == "enterprise plan|price"
    run_nightly(actor.org, only="contradictions")
    assert Contradiction.objects.filter(org=actor.org).count() == 1
