"""The glossary's waiting words on the registers page: members see the candidates found in what they
may read and propose what a word means; admins accept or reject. Pages cite passages by link, never
by id."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from brain.models import Category, Membership
from conftest import make_actor, make_user
from memory.models import Chunk, Document, Fact
from memory.tests.factories import save
from registers.glossary.proposals import accept_term, list_candidates, propose_term, reject_term
from registers.glossary.services import glossary
from registers.models import Contradiction, Term
from registers.tests.helpers import stated, switch_on

pytestmark = pytest.mark.django_db


def candidate(actor, word: str, sentence: str, title: str = "Payments chat") -> tuple[Term, Chunk]:
    """An open entry as the nightly scan leaves it: its uses point at passages of shared text."""
    document = save(actor, title, sentence)
    passage = document.chunks.get()
    term = Term.objects.create(
        org=actor.org, term=word, key=word.lower(), uses=4, examples=[{"sentence": sentence, "passage": passage.pk}]
    )
    return term, passage


def page(user, org) -> str:
    client = Client()
    client.force_login(user)
    return client.get(reverse("registers"), {"org": org.slug}).content.decode()


def test_a_member_sees_the_candidates_and_their_uses_linked_to_their_passages(actor):
    switch_on(actor.org, "glossary")
    term, passage = candidate(actor, "MID", "A MID is the merchant identifier the acquirer gives each shop.")
    html = page(actor.user, actor.org)
    assert "Waiting for a definition (1)" in html
    assert "No term is defined yet: 1 word waits for a definition below." in html
    assert "No defined terms yet." not in html
    href = f"{reverse('memory-document', args=[passage.document_id])}?org={actor.org.slug}#passage-{passage.pk}"
    assert f'<a href="{href}">Payments chat</a>' in html
    assert "Propose what it means" in html
    assert passage.public_id not in html
    assert term.public_id not in html


def test_a_candidate_whose_only_use_became_restricted_is_not_shown_to_a_member_outside_the_group(actor):
    switch_on(actor.org, "glossary")
    term, passage = candidate(actor, "Falcon Console", "The Falcon Console shows every shop's payouts.")
    board = Category.objects.create(org=actor.org, slug="board", name="Board", restricted=True)
    Document.objects.filter(pk=passage.document_id).update(category=board)
    Chunk.objects.filter(pk=passage.pk).update(category=board)
    assert list_candidates(actor=actor) == []
    assert "Falcon Console" not in page(actor.user, actor.org)
    reader = make_user(actor.org)
    board.groups.create(name="board members").user_set.add(reader)
    [seen] = list_candidates(actor=make_actor(actor.org, reader))
    assert seen.term == term
    assert [c.sentence for c in seen.uses] == ["The Falcon Console shows every shop's payouts."]


def test_a_members_proposal_waits_and_an_admin_accepts_it_as_the_definition(actor):
    switch_on(actor.org, "glossary")
    term, passage = candidate(actor, "MID", "Ana: the MID request is with the acquirer.")
    link = f"https://brain.example/memory/documents/{passage.document_id}/#passage-{passage.pk}"
    proposed = propose_term(
        actor=actor, term="MID", definition="The merchant identifier an acquirer gives a shop.", passage=link
    )
    assert (proposed.pk, proposed.state, proposed.proposal_passage) == (term.pk, "open", passage)
    assert glossary(actor=actor) == []  # not defined until an admin says so
    with pytest.raises(Exception, match="Only an admin"):
        accept_term(actor=actor, term_id=term.public_id)
    admin = make_actor(actor.org, make_user(actor.org, role=Membership.ADMIN))
    defined = accept_term(actor=admin, term_id=term.public_id)
    assert (defined.state, defined.definition) == ("defined", "The merchant identifier an acquirer gives a shop.")
    assert defined.proposal == ""
    assert defined.proposed_by is None
    assert defined.memory is not None
    assert Fact.objects.get(pk=defined.memory.pk).statement.startswith("MID: ")


def test_a_proposal_cites_only_a_passage_its_author_may_read(actor):
    switch_on(actor.org, "glossary")
    other = make_actor(actor.org)
    private = save(other, "My notes", "SLA means the service level agreement we sign.", scope="personal")
    with pytest.raises(Exception, match="No passage that you can read"):
        propose_term(
            actor=actor,
            term="SLA",
            definition="Service level agreement.",
            passage=f"#passage-{private.chunks.get().pk}",
        )
    assert not Term.objects.filter(org=actor.org, key="sla").exists()


def test_an_admin_rejects_a_proposal_and_a_word_only_the_proposal_brought_goes(actor):
    switch_on(actor.org, "glossary")
    admin = make_actor(actor.org, make_user(actor.org, role=Membership.ADMIN))
    term, _ = candidate(actor, "MID", "Ana: the MID request is with the acquirer.")
    propose_term(actor=actor, term="MID", definition="A meeting in the day.")
    kept = reject_term(actor=admin, term_id=term.public_id, note="Not what it means here.")
    assert kept is not None
    assert (kept.state, kept.proposal) == ("open", "")
    fresh = propose_term(actor=actor, term="Blue Friday", definition="Our yearly sale.")
    assert reject_term(actor=admin, term_id=fresh.public_id) is None
    assert not Term.objects.filter(pk=fresh.pk).exists()
    dismissed = reject_term(actor=admin, term_id=term.public_id)
    assert dismissed is not None
    assert dismissed.state == "dismissed"


def test_a_defined_word_cannot_be_proposed_again(actor):
    switch_on(actor.org, "glossary")
    admin = make_actor(actor.org, make_user(actor.org, role=Membership.ADMIN))
    term, _ = candidate(actor, "MID", "Ana: the MID request is with the acquirer.")
    accept_term(actor=admin, term_id=term.public_id, definition="The merchant identifier.")
    with pytest.raises(Exception, match="already defined"):
        propose_term(actor=actor, term="mid", definition="Something else.")


def test_the_pages_propose_and_decide_and_a_member_cannot_decide(actor):
    switch_on(actor.org, "glossary")
    term, _ = candidate(actor, "MID", "Ana: the MID request is with the acquirer.")
    member = Client()
    member.force_login(actor.user)
    sent = member.post(
        reverse("registers-propose"), {"org": actor.org.slug, "term": "MID", "definition": "Merchant id."}
    )
    assert sent.status_code == 302
    assert "Proposed by" in page(actor.user, actor.org)
    decide = reverse("registers-decide-term", args=[term.pk])
    assert member.post(decide, {"org": actor.org.slug, "decision": "accept"}).status_code == 403
    admin_user = make_user(actor.org, role=Membership.ADMIN)
    admin = Client()
    admin.force_login(admin_user)
    html = page(admin_user, actor.org)
    assert 'value="Merchant id."' in html
    assert "Reject the proposal" in html
    admin.post(decide, {"org": actor.org.slug, "decision": "accept", "definition": "Merchant id, from the acquirer."})
    term.refresh_from_db()
    assert (term.state, term.definition) == ("defined", "Merchant id, from the acquirer.")


def test_contradictions_name_their_sources_by_title_and_link_never_by_id(actor):
    switch_on(actor.org, "contradictions")
    from registers.contradictions.nightly import scan_contradictions

    a = stated(actor, "Price list", "The enterprise plan costs 48500 USD a year.", number=48500)
    stated(actor, "Sales deck", "The enterprise plan costs 52000 USD a year.", number=52000)
    scan_contradictions(actor.org)
    entry = Contradiction.objects.get(org=actor.org)
    assert "(doc_" in entry.source_a  # the tools keep ids for assistants
    html = page(actor.user, actor.org)
    assert "(doc_" not in html
    assert "doc_" not in html
    assert f'<a href="{reverse("memory-document", args=[a.document_id])}?org={actor.org.slug}' in html
    client = Client()
    client.force_login(actor.user)
    answer = client.get(reverse("registers-answer", args=[entry.pk]), {"org": actor.org.slug}).content.decode()
    assert "doc_" not in answer
    assert "Price list" in answer


def test_a_proposal_waits_in_the_admins_needs_you_list_until_it_is_decided(actor):
    from brain.core.needs import list_waiting_work

    switch_on(actor.org, "glossary")
    admin_user = make_user(actor.org, role=Membership.ADMIN)
    term, _ = candidate(actor, "MID", "Ana: the MID request is with the acquirer.")
    assert not [w for w in list_waiting_work(user=admin_user) if "term" in w.words]
    propose_term(actor=actor, term="MID", definition="Merchant id.")
    [waiting] = [w for w in list_waiting_work(user=admin_user) if "term" in w.words]
    assert waiting.words == "1 proposed term to accept"
    assert waiting.url == f"{reverse('registers')}?org={actor.org.slug}#glossary"
    assert list_waiting_work(user=actor.user) == []  # members administer nothing
    accept_term(actor=make_actor(actor.org, admin_user), term_id=term.public_id)
    assert not [w for w in list_waiting_work(user=admin_user) if "term" in w.words]
