"""One thing said twice is one entry: a promise said in two places is one commitment with both places
as its sources, and one disagreement found in two pairs of statements is one contradiction."""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Any

import pytest

from brain.core.actors import Actor
from brain.models import Category
from conftest import make_actor, make_user
from memory.models import Document, Fact
from memory.tests.factories import save
from registers.commitments.services import list_commitments
from registers.commitments.twins import alike
from registers.contradictions.services import answer_contradiction, list_contradictions, raise_or_find_contradiction
from registers.models import Commitment, Contradiction, Scan
from registers.nightly import run_nightly
from registers.tests.helpers import stated, switch_on

MONDAY = datetime(2026, 3, 2, 10, tzinfo=UTC)
TUESDAY = datetime(2026, 3, 3, 15, tzinfo=UTC)


def mail(actor: Actor, text: str, *, at: datetime = MONDAY, **kw: Any) -> Document:
    return save(actor, "Re: BigCo quote", f"Priya: {text}", occurred_at=at, source_kind="email", **kw)


def chat(actor: Actor, text: str, *, at: datetime = TUESDAY, speaker: str = "Priya") -> Document:
    return save(
        actor,
        f"#sales {at:%d %b}",
        f"{speaker}: {text}",
        speaker=speaker,
        conversation="sales",
        occurred_at=at,
        source_kind="slack",
    )


@pytest.fixture
def promised_twice(actor, settings):
    settings.BRAIN_EXTRACT_FACTS = False
    switch_on(actor.org, "commitments")
    first = mail(actor, "I'll send the revised quote to BigCo by Friday.")
    second = chat(actor, "I will send BigCo the revised quote on Friday, promise.")
    return actor, first, second


@pytest.mark.django_db
def test_the_same_promise_in_a_mail_and_a_chat_is_one_commitment_with_both_sources(promised_twice):
    actor, first, second = promised_twice
    assert run_nightly(actor.org)["commitments found"] == 1
    [item] = list_commitments(actor=actor)
    promise = item.commitment
    assert (promise.owner_name, promise.due_on, promise.document_id) == ("Priya", date(2026, 3, 6), first.pk)
    [also] = promise.said_also  # type: ignore[attr-defined]
    assert (also.document_id, also.due_on, also.promised_on) == (second.pk, date(2026, 3, 6), date(2026, 3, 3))
    assert "revised quote" in also.what
    # Read again (a second night, a redelivered scan): nothing is added twice.
    Scan.objects.filter(org=actor.org, register="commitments").update(last_id=0)
    run_nightly(actor.org)
    assert promise.sources.count() == 1
    assert Commitment.objects.filter(org=actor.org).count() == 1


@pytest.mark.django_db
def test_another_undertaking_another_owner_or_next_weeks_deadline_stays_its_own_commitment(actor, settings):
    settings.BRAIN_EXTRACT_FACTS = False
    switch_on(actor.org, "commitments")
    mail(actor, "I'll send the revised quote to BigCo by Friday.")
    chat(actor, "I will book the demo room in Lyon by Friday.")  # another undertaking
    chat(actor, "I will send the revised quote to BigCo by Friday.", speaker="Sam")  # another owner
    chat(actor, "I'll send the revised quote to BigCo by Friday.", at=datetime(2026, 3, 10, 9, tzinfo=UTC))
    run_nightly(actor.org)
    assert Commitment.objects.filter(org=actor.org).count() == 4
    assert not Commitment.objects.filter(org=actor.org, sources__isnull=False).exists()


@pytest.mark.django_db
def test_a_promise_said_where_other_people_read_is_not_joined_to_their_commitment(actor, settings):
    """Said again in someone's personal note, the promise is their own entry: neither reader learns
    of the other's source through a shared twin."""
    settings.BRAIN_EXTRACT_FACTS = False
    switch_on(actor.org, "commitments")
    mail(actor, "I'll send the revised quote to BigCo by Friday.")
    other = make_actor(actor.org, make_user(actor.org))
    save(
        other,
        "My notes from the BigCo call",
        "Priya: I will send BigCo the revised quote on Friday.",
        occurred_at=TUESDAY,
        source_kind="email",
        scope="personal",
    )
    run_nightly(actor.org)
    assert Commitment.objects.filter(org=actor.org).count() == 2
    [mine] = list_commitments(actor=actor)
    assert mine.commitment.said_also == []  # type: ignore[attr-defined]
    theirs = [item.commitment for item in list_commitments(actor=other)]
    assert len(theirs) == 2
    assert all(c.said_also == [] for c in theirs)  # type: ignore[attr-defined]


def test_the_alike_threshold_separates_the_labelled_twins_from_other_promises():
    twins = [
        ("Marta will send the revised quote to Northwind", "Marta will send you the revised quote on Monday"),
        ("Rui will share the depot address lists by Friday", "Rui will send you the depot address lists"),
        ("Priya will write the incident report and send it to Erik", "Priya will send you the report by Monday"),
    ]
    others = [("Lena will send the board pack to the directors", "Lena will confirm the details with the auditors"),
              ("Marta will send the revised quote", "Marta will prepare the usage report"),
              ("Priya will send it", "Priya will send the report")]  # fmt: skip
    owner = {"M": "Marta", "R": "Rui", "P": "Priya", "L": "Lena"}
    assert all(alike(a, b, owner[a[0]]) >= 60 for a, b in twins)
    assert all(alike(a, b, owner[a[0]]) < 60 for a, b in others)


@pytest.fixture
def three_prices(actor, settings):
    """The price list says 48500; the sales deck and a later mail both say 52000: one disagreement."""
    settings.BRAIN_EXTRACT_FACTS = False
    switch_on(actor.org, "contradictions")
    listed = stated(actor, "Price list", "The enterprise plan costs 48500 USD a year.", number=48500)
    deck = stated(actor, "Sales deck", "The enterprise plan costs 52000 USD a year.", number=52000)
    mail = stated(actor, "Re: pricing", "Enterprise is 52000 USD a year.", number=52000)
    return listed, deck, mail


@pytest.mark.django_db
def test_the_same_disagreement_found_in_two_pairs_is_listed_once_and_one_answer_settles_both(actor, three_prices):
    listed, deck, mail = three_prices
    assert run_nightly(actor.org)["contradictions raised"] == 1
    [entry] = list_contradictions(actor=actor)
    assert {entry.fact_a_id, entry.fact_b_id, *(side["fact"] for side in entry.more)} == {listed.pk, deck.pk, mail.pk}
    answer_contradiction(
        actor=actor,
        contradiction_id=entry.public_id,
        answer="a" if entry.fact_a == listed else "b",
        note="The price list is signed off by finance.",
    )
    for fact in (deck, mail):
        fact.refresh_from_db()
        assert fact.superseded_at is not None  # both statements of 52000 gave way to the price list
    assert list_contradictions(actor=actor) == []
    assert run_nightly(actor.org)["contradictions raised"] == 0


@pytest.mark.django_db
def test_a_twin_found_after_the_answer_is_settled_the_same_way(actor, three_prices):
    listed, deck, mail = three_prices
    mail.delete()  # not said yet
    run_nightly(actor.org)
    [entry] = list_contradictions(actor=actor)
    answer_contradiction(actor=actor, contradiction_id=entry.public_id, answer="both", note="Two plans, two prices.")
    later = stated(actor, "Re: pricing", "Enterprise is 52000 USD a year.", number=52000)
    assert run_nightly(actor.org)["contradictions raised"] == 1
    twin = Contradiction.objects.get(twin_of=entry)
    assert (twin.state, twin.answer) == ("resolved", "both")
    later.refresh_from_db()
    assert later.superseded_at is None
    assert list_contradictions(actor=actor) == []


@pytest.mark.django_db
def test_a_disagreement_read_by_other_people_is_not_a_twin(actor, three_prices):
    """The same price in a restricted category is its own entry: answering the shared one never
    touches a statement its reader cannot see, and a reader of only the shared one sees one entry."""
    listed, _, mail = three_prices
    board = Category.objects.create(org=actor.org, slug="board", name="Board", restricted=True)
    Fact.objects.filter(pk=mail.pk).update(category=board)
    Document.objects.filter(pk=mail.document_id).update(category=board)
    run_nightly(actor.org)
    assert Contradiction.objects.filter(org=actor.org, twin_of__isnull=False).count() == 0
    [entry] = list_contradictions(actor=actor)
    answer_contradiction(
        actor=actor, contradiction_id=entry.public_id, answer="a" if entry.fact_a == listed else "b", note="Finance."
    )
    mail.refresh_from_db()
    assert mail.superseded_at is None
    assert Contradiction.objects.filter(org=actor.org, state="open").count() == 1


@pytest.mark.django_db
def test_raising_a_disagreement_already_on_the_register_answers_with_that_entry(actor, three_prices):
    listed, deck, mail = three_prices
    mail_id = mail.pk
    mail.delete()
    run_nightly(actor.org)
    [entry] = list_contradictions(actor=actor)
    later = stated(actor, "Re: pricing", "Enterprise is 52000 USD a year.", number=52000)
    assert later.pk != mail_id
    found, new = raise_or_find_contradiction(
        actor=actor,
        question="Which price is right?",
        about="Enterprise plan price",
        claim_a=listed.statement,
        source_a="Price list",
        claim_b=later.statement,
        source_b="Re: pricing",
        memory_id_a=listed.public_id,
        memory_id_b=later.public_id,
    )
    assert (found.pk, new) == (entry.pk, False)
    assert len(list_contradictions(actor=actor)) == 1


@pytest.mark.django_db
def test_a_promise_loaded_later_but_said_earlier_dates_the_commitment_and_gives_its_deadline(actor, settings):
    settings.BRAIN_EXTRACT_FACTS = False
    switch_on(actor.org, "commitments")
    chat(actor, "I'll send the revised quote to BigCo soon.", at=TUESDAY)
    mail(actor, "I'll send the revised quote to BigCo by Friday.", at=MONDAY)
    run_nightly(actor.org)
    [item] = list_commitments(actor=actor)
    assert (item.commitment.promised_on, item.commitment.due_on) == (date(2026, 3, 2), date(2026, 3, 6))
    [also] = item.commitment.said_also  # type: ignore[attr-defined]
    assert (also.promised_on, also.due_on) == (date(2026, 3, 2), date(2026, 3, 6))


@pytest.mark.django_db
def test_the_commitment_admin_page_lists_where_else_the_promise_was_said(promised_twice):
    from brain.tests.admin_client import logged_in, make_org_admin

    actor, _, second = promised_twice
    run_nightly(actor.org)
    promise = Commitment.objects.get(org=actor.org)
    page = logged_in(make_org_admin(actor.org)).get(f"/admin/registers/commitment/{promise.pk}/change/")
    assert page.status_code == 200
    assert "also said in" in page.content.decode().lower()
    assert second.title in page.content.decode()


@pytest.mark.django_db(transaction=True)
def test_the_nightly_scan_settles_a_late_twin_outside_a_test_transaction(actor, three_prices):
    """As the worker runs it: in autocommit, where a row lock needs its own transaction."""
    listed, deck, mail = three_prices
    mail.delete()
    run_nightly(actor.org)
    [entry] = list_contradictions(actor=actor)
    answer_contradiction(actor=actor, contradiction_id=entry.public_id, answer="both", note="Two plans.")
    stated(actor, "Re: pricing", "Enterprise is 52000 USD a year.", number=52000)
    run_nightly(actor.org)
    assert Contradiction.objects.get(twin_of=entry).state == "resolved"
