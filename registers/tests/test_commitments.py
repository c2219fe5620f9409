"""The commitment register: record, list, settle; entries keep their source's readers."""

from __future__ import annotations

from datetime import date, timedelta

import pytest

from brain.core.errors import InvalidArgument, NotFound
from conftest import make_actor, make_user
from memory.tests.factories import save
from registers.commitments.services import list_commitments, record_commitment, update_commitment
from registers.common import document_audience, local_today
from registers.models import Commitment
from registers.tests.helpers import switch_on

pytestmark = pytest.mark.django_db


def test_a_recorded_promise_is_listed_open_and_overdue_once_its_day_passes(actor):
    switch_on(actor.org, "commitments")
    today = local_today(actor.org)
    late = record_commitment(
        actor=actor,
        owner="Priya",
        what="Priya will send the revised quote to BigCo",
        due_on=today - timedelta(days=1),
        promised_on=today - timedelta(days=5),
    )
    record_commitment(actor=actor, owner="Sam", what="Sam will migrate the billing database")
    listed = list_commitments(actor=actor)
    assert [(item.commitment.owner_name, item.overdue) for item in listed] == [("Priya", True), ("Sam", False)]
    assert [i.commitment.pk for i in list_commitments(actor=actor, state="overdue")] == [late.pk]
    assert [i.commitment.owner_name for i in list_commitments(actor=actor, owner="pri")] == ["Priya"]
    assert late.due_on is not None
    assert record_commitment(actor=actor, owner="Ana", what="Ana will call Baltic").due_on is None  # never invented


def test_a_promise_needs_a_named_owner_and_sensible_dates(actor):
    with pytest.raises(InvalidArgument, match="owner is required"):
        record_commitment(actor=actor, owner="  ", what="Someone will do it")
    with pytest.raises(InvalidArgument, match="what is 301 characters"):
        record_commitment(actor=actor, owner="Sam", what="x" * 301)
    with pytest.raises(InvalidArgument, match="before the day it was promised"):
        record_commitment(
            actor=actor, owner="Sam", what="Sam will do it", due_on=date(2020, 1, 1), promised_on=date(2021, 1, 1)
        )


def test_settling_needs_a_note_reopening_clears_it_and_corrections_are_kept(actor):
    entry = record_commitment(actor=actor, owner="Priya", what="Priya will send the quote")
    with pytest.raises(InvalidArgument, match="needs a note"):
        update_commitment(actor=actor, commitment_id=entry.public_id, status="done")
    done = update_commitment(
        actor=actor, commitment_id=entry.public_id, status="done", note="Sent on 3 Dec, seen in the CRM."
    )
    assert (done.state, done.settled_by) == ("landed", actor.user)
    assert list_commitments(actor=actor) == []
    assert [i.commitment.pk for i in list_commitments(actor=actor, state="landed")] == [entry.pk]
    dropped = update_commitment(actor=actor, commitment_id=entry.public_id, status="dropped", note="Deal lost.")
    assert dropped.state == "cancelled"
    reopened = update_commitment(actor=actor, commitment_id=entry.public_id, status="open")
    assert (reopened.state, reopened.note, reopened.settled_at) == ("open", "", None)
    moved = update_commitment(
        actor=actor, commitment_id=entry.public_id, due_on=date(2031, 1, 9), what="Priya will send the revised quote"
    )
    assert (moved.due_on, moved.what) == (date(2031, 1, 9), "Priya will send the revised quote")
    with pytest.raises(InvalidArgument, match="status must be one of"):
        update_commitment(actor=actor, commitment_id=entry.public_id, status="missed", note="x")
    with pytest.raises(InvalidArgument, match="Pass what to change"):
        update_commitment(actor=actor, commitment_id=entry.public_id)


def test_unknown_foreign_and_malformed_ids_are_not_found(actor, other_org_actor):
    entry = record_commitment(actor=actor, owner="Priya", what="Priya will send the quote")
    for wrong in (entry.public_id, "cmt_999999", "ctr_1", "cmt_٣", "cmt_1; drop table"):
        with pytest.raises(NotFound):
            update_commitment(actor=other_org_actor, commitment_id=wrong, status="open")


def test_a_promise_read_from_a_personal_note_is_listed_only_to_its_owner(actor):
    note = save(actor, "My notes", "Priya: I'll send the quote to BigCo by Friday.", scope="personal")
    Commitment.objects.create(
        org=actor.org,
        owner_name="Priya",
        what="Priya will send the quote to BigCo",
        promised_on=date(2026, 3, 2),
        document=note,
        origin="extracted",
        **document_audience(note),
    )
    colleague = make_actor(actor.org, make_user(actor.org))
    assert [i.commitment.what for i in list_commitments(actor=actor)] == ["Priya will send the quote to BigCo"]
    assert list_commitments(actor=colleague) == []
    with pytest.raises(NotFound):
        update_commitment(actor=colleague, commitment_id=f"cmt_{Commitment.objects.get().pk}", status="open")
