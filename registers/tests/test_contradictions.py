"""The contradiction register: two sources that disagree stay current and are raised once; an
answer supersedes in memory; nobody sees a pair with a side they may not read."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group

from brain.core.errors import InvalidArgument, NotFound
from brain.models import Category, Membership
from conftest import make_actor, make_user
from memory.extraction.shapes import ExtractedValue
from memory.graph import reads as graph
from memory.graph.fixes import flag_fact, merge_entities
from memory.graph.writes import FactDraft
from memory.tests.graph_world import graph_world
from memory.tests.graph_world import stated as stated_by
from registers.contradictions.nightly import rescan_document, scan_contradictions
from registers.contradictions.services import answer_contradiction, list_contradictions, raise_contradiction
from registers.models import Contradiction
from registers.tests.helpers import stated, switch_on

pytestmark = pytest.mark.django_db


@pytest.fixture
def prices(actor):
    switch_on(actor.org, "contradictions")
    a = stated(actor, "Price list", "The enterprise plan costs 48500 USD a year.", number=48500)
    b = stated(actor, "Sales deck", "The enterprise plan costs 52000 USD a year.", number=52000)
    return a, b


def test_two_sources_disagreeing_on_a_price_are_raised_once_with_both_sides(actor, prices):
    a, b = prices
    assert scan_contradictions(actor.org) == 1
    assert scan_contradictions(actor.org) == 0  # nothing new: the same pair never twice
    [entry] = list_contradictions(actor=actor)
    assert {entry.claim_a, entry.claim_b} == {a.statement, b.statement}
    assert entry.severity == "high"
    assert "Price list" in entry.source_a
    assert entry.date_a is not None
    a.refresh_from_db()
    b.refresh_from_db()
    assert a.superseded_at is None
    assert b.superseded_at is None


def test_answering_a_supersedes_b_in_search_facts_and_the_timeline(actor, prices):
    a, b = prices
    scan_contradictions(actor.org)
    [entry] = list_contradictions(actor=actor)
    stands, loses = entry.fact_a, entry.fact_b
    assert stands is not None
    assert loses is not None
    answered = answer_contradiction(actor=actor, contradiction_id=entry.public_id, answer="a",
                                    note="Checked the billing system: 48500.")  # fmt: skip
    assert answered.state == "resolved"
    loses.refresh_from_db()
    assert loses.superseded_by_id == stands.pk
    current = [s.fact.pk for s in graph.search_facts(actor=actor, query="enterprise plan price", limit=10)]
    assert stands.pk in current
    assert loses.pk not in current
    history = graph.timeline(actor=actor, entity=graph.resolve_entity(actor=actor, ref="Enterprise plan"))
    assert [f.pk for f in history if f.superseded_by_id == stands.pk] == [loses.pk]
    with pytest.raises(InvalidArgument, match="already answered"):
        answer_contradiction(actor=actor, contradiction_id=entry.public_id, answer="b", note="changed my mind")
    scan_contradictions(actor.org)
    assert Contradiction.objects.filter(org=actor.org).count() == 1  # an answered pair never comes back


@pytest.mark.parametrize("answer", ["both", "neither"])
def test_both_and_neither_close_it_without_touching_memory(actor, prices, answer):
    scan_contradictions(actor.org)
    [entry] = list_contradictions(actor=actor)
    closed = answer_contradiction(actor=actor, contradiction_id=entry.public_id, answer=answer, note="Two plans.")
    assert closed.state == ("dismissed" if answer == "neither" else "resolved")
    assert all(f is not None and f.superseded_at is None for f in (entry.fact_a, entry.fact_b))
    assert list_contradictions(actor=actor) == []
    assert list_contradictions(actor=actor, state="all") == [closed]


def test_an_answer_needs_a_note_a_known_answer_and_an_id_of_this_organisation(actor, other_org_actor, prices):
    scan_contradictions(actor.org)
    [entry] = list_contradictions(actor=actor)
    with pytest.raises(InvalidArgument, match="note is required"):
        answer_contradiction(actor=actor, contradiction_id=entry.public_id, answer="a", note="  ")
    with pytest.raises(InvalidArgument, match="answer must be one of a, b, both, neither"):
        answer_contradiction(actor=actor, contradiction_id=entry.public_id, answer="c", note="x")
    for wrong in (f"ctr_{entry.pk}", "ctr_999999", "cmt_1", "ctr_²", "nonsense"):
        with pytest.raises(NotFound):
            answer_contradiction(actor=other_org_actor, contradiction_id=wrong, answer="a", note="x")


@pytest.fixture
def insider(actor):
    """A member who reads the restricted finance category."""
    group = Group.objects.create(name=f"finance-{actor.org.pk}")
    finance = Category.objects.create(org=actor.org, slug="finance", name="Finance", restricted=True)
    finance.groups.add(group)
    reader = make_actor(actor.org, make_user(actor.org))
    reader.user.groups.add(group)
    return reader


def test_a_pair_with_a_side_the_reader_may_not_read_is_not_shown_to_them(actor, prices, insider):
    stated(insider, "Board pack", "The enterprise plan costs 61000 USD a year.", number=61000, category="finance")
    scan_contradictions(actor.org)
    assert len(list_contradictions(actor=insider)) == 3
    seen = list_contradictions(actor=actor)
    assert len(seen) == 1
    assert all("61000" not in c.claim_a + c.claim_b for c in seen)
    hidden = (
        Contradiction.objects.filter(claim_b__contains="61000").first()
        or Contradiction.objects.filter(claim_a__contains="61000").first()
    )
    assert hidden is not None
    with pytest.raises(NotFound):
        answer_contradiction(actor=actor, contradiction_id=hidden.public_id, answer="a", note="x")


def test_a_statement_some_readers_cannot_see_never_replaces_one_they_can(actor, prices, insider):
    board = stated(
        insider, "Board pack", "The enterprise plan costs 61000 USD a year.", number=61000, category="finance"
    )
    a, _ = prices
    sides = {"claim_a": board.statement, "source_a": "board pack", "claim_b": a.statement, "source_b": "price list"}
    entry = raise_contradiction(actor=insider, question="61000 or 48500?", about="enterprise plan price",
                                memory_id_a=board.public_id, memory_id_b=a.public_id, **sides)  # fmt: skip
    with pytest.raises(InvalidArgument, match="hidden from some people"):
        answer_contradiction(actor=insider, contradiction_id=entry.public_id, answer="a", note="board says so")
    a.refresh_from_db()
    assert a.superseded_at is None
    answer_contradiction(actor=insider, contradiction_id=entry.public_id, answer="b", note="price list wins")
    board.refresh_from_db()
    assert board.superseded_by_id == a.pk  # everyone who reads the board pack reads the price list too


def test_raising_one_checks_the_memories_and_the_words(actor, other_org_actor, prices):
    a, b = prices
    base = {"question": "Is it 48500 or 52000?", "about": "enterprise plan price", "claim_a": a.statement,
            "source_a": "price list", "claim_b": b.statement, "source_b": "sales deck"}  # fmt: skip
    entry = raise_contradiction(actor=actor, memory_id_a=a.public_id, memory_id_b=b.public_id, **base)
    assert entry.pair == f"{a.pk}:{b.pk}"
    assert scan_contradictions(actor.org) == 0  # raised by hand: the scan does not raise it again
    with pytest.raises(NotFound, match="memory_id_a"):
        raise_contradiction(actor=other_org_actor, memory_id_a=a.public_id, **base)
    with pytest.raises(InvalidArgument, match="severity must be one of"):
        raise_contradiction(actor=actor, severity="urgent", **base)
    with pytest.raises(InvalidArgument, match="three to six words"):
        raise_contradiction(actor=actor, **{**base, "about": " ".join(["word"] * 12)})
    with pytest.raises(InvalidArgument, match="claim_b"):
        raise_contradiction(actor=actor, **{**base, "claim_b": "x\x00"})


def test_an_entry_names_its_subject_as_its_sources_do_after_a_merge_into_a_hidden_name():
    world = graph_world()
    switch_on(world.org, "contradictions")

    def price(actor, title, subject, number, category=None):
        draft = FactDraft(statement=f"The {subject} is priced at {number} USD.", subject=subject, single_valued=True,
                          values=[ExtractedValue("price", number=number, unit="USD")])  # fmt: skip
        return stated_by(actor, title, draft, category=category)

    price(world.reader, "Board memo", "Zorblatt acquisition", 4200000, category="board")
    price(world.member, "Deal notes", "Z deal", 48500)
    price(world.member, "Sales deck", "Z deal", 52000)
    merge_entities(actor=world.admin, kept_id=world.entity("Zorblatt acquisition").pk,
                   merged_id=world.entity("Z deal").pk)  # fmt: skip
    scan_contradictions(world.org)
    [entry] = list_contradictions(actor=world.member)
    assert (entry.subject, entry.about) == ("Z deal", "Z deal price")


def test_a_fact_flagged_for_review_takes_part_in_no_new_contradiction(actor, prices):
    a, b = prices
    quote = stated(actor, "Old quote", "The enterprise plan costs 61000 USD a year.", number=61000)
    admin = make_actor(actor.org, make_user(actor.org, role=Membership.ADMIN))
    flag_fact(actor=admin, fact_id=quote.pk, reason="A quote for another plan.")
    assert scan_contradictions(actor.org) == 1
    assert quote.document_id is not None
    assert rescan_document(actor.org, quote.document_id) == {"added": 0, "removed": 0}
    [entry] = Contradiction.objects.filter(org=actor.org)
    sides = {entry.fact_a_id, entry.fact_b_id, *(side["fact"] for side in entry.more)}
    assert sides == {a.pk, b.pk}  # the other two still disagree: the flag alone kept the quote out
