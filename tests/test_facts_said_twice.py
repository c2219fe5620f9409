"""One fact said in two documents is one fact with both sources, through saving, ingestion and the
MCP tools: search_facts shows it once and names where else it is said, each document still lists
its own facts, and a source only some readers may read is never joined to a shared fact."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from conftest import make_actor, make_org, make_token, make_user
from memory.graph.fixes import flag_fact
from memory.graph.provenance import document_facts
from memory.models import Fact
from memory.tests.factories import save
from tests.conftest import call

pytestmark = pytest.mark.django_db(transaction=True)
SAID = "Northwind renewed its support contract for EUR 48,000 a year."


def on(day: int) -> datetime:
    return datetime(2025, 11, day, 9, tzinfo=UTC)


def renewals(result) -> list[dict]:
    return [f for f in result.structured_content["facts"] if "48,000" in f["statement"]]


@pytest.fixture
def said_twice():
    org = make_org()
    admin = make_user(org, role="admin")
    actor = make_actor(org, admin)
    mail = save(actor, "Re: Northwind renewal", SAID, occurred_at=on(24))
    notes = save(actor, "Account review notes", f"Account review. {SAID}", occurred_at=on(26))
    return actor, make_token(org, admin).plaintext, mail, notes


def test_search_facts_shows_the_fact_once_naming_both_documents(brain_url, said_twice):
    actor, token, mail, notes = said_twice
    [fact] = renewals(call(brain_url, token, "search_facts", {"query": "Northwind support contract renewal"}))
    assert fact["source_document_id"] == mail.public_id
    assert fact["also_in"] == [{"document_id": notes.public_id, "title": "Account review notes"}]
    # Each document still lists what it says.
    assert [f.statement for f in document_facts(actor=actor, document=notes) if "48,000" in f.statement] == [SAID]


def test_flagging_the_first_shows_the_other_on_its_own_and_deleting_it_too(brain_url, said_twice):
    actor, token, mail, notes = said_twice
    first = Fact.objects.get(document=mail, statement=SAID)
    flag_fact(actor=actor, fact_id=first.pk, reason="Checking the amount with finance.")
    [fact] = renewals(call(brain_url, token, "search_facts", {"query": "Northwind support contract renewal"}))
    assert (fact["source_document_id"], fact["also_in"]) == (notes.public_id, [])
    twin = Fact.objects.get(document=notes, statement=SAID)
    assert twin.same_as_id is None


def test_a_personal_note_saying_the_same_is_its_owners_own_fact(brain_url, said_twice):
    actor, token, mail, _ = said_twice
    member = make_user(actor.org)
    mine = save(make_actor(actor.org, member), "My notes", SAID, occurred_at=on(27), scope="personal")
    assert Fact.objects.get(document=mine, statement=SAID).same_as_id is None
    shared = renewals(call(brain_url, token, "search_facts", {"query": "Northwind support contract renewal"}))
    assert all(ref["document_id"] != mine.public_id for f in shared for ref in f["also_in"])
    own = make_token(actor.org, member).plaintext
    seen = renewals(call(brain_url, own, "search_facts", {"query": "Northwind support contract renewal"}))
    assert {f["source_document_id"] for f in seen} == {mail.public_id, mine.public_id}


def test_another_amount_or_another_account_is_another_fact(said_twice):
    actor, _, mail, _ = said_twice
    other = save(
        actor, "Contoso renewal", "Contoso renewed its support contract for EUR 48,000 a year.", occurred_at=on(27)
    )
    assert not Fact.objects.filter(document=other, same_as__isnull=False).exists()
