"""The glossary: a definition is a memory; correcting replaces it, withdrawing removes it,
dismissing keeps the word out for good."""

from __future__ import annotations

import pytest

from brain.core.errors import InvalidArgument, NotFound
from memory.graph import reads as graph
from memory.models import Fact
from registers.glossary.services import define_term, definitions_in, glossary, update_term
from registers.models import Term

pytestmark = pytest.mark.django_db


def found(actor, query: str) -> list[str]:
    return [s.fact.statement for s in graph.search_facts(actor=actor, query=query, limit=5)]


def test_a_definition_becomes_a_memory_and_a_correction_replaces_it(actor):
    entry = define_term(actor=actor, term="MID", definition="The acquirer's merchant identifier for a shop.")
    assert entry.state == "defined"
    assert found(actor, "MID merchant identifier")[0] == "MID: The acquirer's merchant identifier for a shop."
    first = entry.memory
    assert first is not None
    wider = "The merchant identifier an acquirer gives each shop or terminal group."
    corrected = update_term(actor=actor, term_id=entry.public_id, definition=wider)
    first.refresh_from_db()
    assert first.superseded_by_id == corrected.memory_id
    assert found(actor, "MID merchant identifier")[0].startswith("MID: The merchant identifier an acquirer")
    assert [t.term for t in glossary(actor=actor)] == ["MID"]
    assert [t.term for t in glossary(actor=actor, term="mid")] == ["MID"]
    assert [t.term for t in definitions_in(actor=actor, text="What is the MID of the Lisbon shop?")] == ["MID"]
    assert definitions_in(actor=actor, text="a midsize shop") == []


def test_reopening_withdraws_the_definition_and_its_memory(actor):
    entry = define_term(actor=actor, term="the pod", definition="The on-call team of the week.")
    memory_id = entry.memory_id
    reopened = update_term(actor=actor, term_id=entry.public_id, state="open", note="Wrong: it is the squad.")
    assert (reopened.state, reopened.definition, reopened.memory) == ("open", "", None)
    assert memory_id is not None
    assert not Fact.objects.filter(pk=memory_id).exists()
    assert glossary(actor=actor) == []
    assert [t.term for t in glossary(actor=actor, state="open")] == ["the pod"]


def test_an_open_entry_is_answered_by_its_id_and_only_for_its_own_word(actor):
    entry = Term.objects.create(org=actor.org, term="SLA", key="sla", suggestion="service level agreement")
    with pytest.raises(InvalidArgument, match="is the entry for 'SLA'"):
        define_term(actor=actor, term="SLO", definition="x", term_id=entry.public_id)
    answered = define_term(
        actor=actor, term="SLA", definition="Our promise to a customer on uptime and response.", term_id=entry.public_id
    )
    assert answered.pk == entry.pk
    assert answered.state == "defined"


def test_bad_input_is_refused_with_the_allowed_values(actor, other_org_actor):
    entry = define_term(actor=actor, term="MID", definition="The merchant identifier.")
    with pytest.raises(InvalidArgument, match="state must be one of defined, dismissed, open"):
        update_term(actor=actor, term_id=entry.public_id, state="deleted")
    with pytest.raises(InvalidArgument, match="contradict each other"):
        update_term(actor=actor, term_id=entry.public_id, state="open", definition="x")
    with pytest.raises(InvalidArgument, match="state must be one of defined, open, all"):
        glossary(actor=actor, state="dismissed")
    with pytest.raises(InvalidArgument, match="definition is required"):
        define_term(actor=actor, term="MID", definition=" ")
    for wrong in (entry.public_id, "term_0", "term_x", "cmt_1"):
        with pytest.raises(NotFound):
            update_term(actor=other_org_actor, term_id=wrong, state="open")


def _term_form(entry: Term, **changes: str) -> dict[str, str]:
    form = {"state": entry.state, "definition": entry.definition, "note": entry.note, "org": str(entry.org_id)}
    return {**form, **changes}


def test_a_definition_corrected_in_the_admin_is_the_one_search_serves(actor):
    from brain.tests.admin_client import logged_in, make_org_admin

    entry = define_term(actor=actor, term="MID", definition="The acquirer's merchant identifier for a shop.")
    client = logged_in(make_org_admin(actor.org))
    wider = "The merchant identifier an acquirer gives each shop or terminal group."
    answer = client.post(f"/admin/registers/term/{entry.pk}/change/", _term_form(entry, definition=wider))
    assert answer.status_code == 302
    entry.refresh_from_db()
    assert entry.definition == wider
    assert found(actor, "MID merchant identifier")[0] == f"MID: {wider}"
    assert Fact.objects.filter(statement__contains="acquirer's merchant", superseded_at__isnull=True).count() == 0


def test_a_definition_reopened_in_the_admin_leaves_no_memory_behind(actor):
    from brain.tests.admin_client import logged_in, make_org_admin

    entry = define_term(actor=actor, term="the pod", definition="The on-call team of the week.")
    memory_id = entry.memory_id
    assert memory_id is not None
    client = logged_in(make_org_admin(actor.org))
    answer = client.post(f"/admin/registers/term/{entry.pk}/change/", _term_form(entry, state="open", definition=""))
    assert answer.status_code == 302
    entry.refresh_from_db()
    assert (entry.state, entry.definition, entry.memory_id) == ("open", "", None)
    assert not Fact.objects.filter(pk=memory_id, superseded_at__isnull=True).exists()
    assert found(actor, "pod on-call team") == []
