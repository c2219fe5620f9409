"""The facts ask_company_memory gives about the entities a question names: the newest of each
entity as subject or object, read per entity and side in index order, are the newest of all its
facts the caller may read, as one query sorting them all would give."""

import pytest
from django.db.models import Q

from conftest import make_actor
from memory.graph.entity_views import entities_named
from memory.search.evidence import Question, _believed_facts, _entity_facts
from memory.tests.factories import save

pytestmark = pytest.mark.django_db


def everything_sorted(actor, ids, question):
    facts = _believed_facts(actor, question).filter(Q(subject_id__in=ids) | Q(object_id__in=ids))
    return [f.pk for f in facts.order_by("-recorded_at", "-pk")[: question.max_claims * 3]]


PEOPLE = ["Priya Shah", "Tomas Berg", "Aiko Tanaka", "Lena Vogel", "Omar Haddad", "Marta Ruiz"]


def test_an_entitys_newest_facts_as_subject_and_object_under_the_callers_access(actor, org):
    for n, person in enumerate(PEOPLE):
        save(actor, f"Org chart {n}", f"{person} reports to Sam Carter.")
        save(actor, f"Plan {n}", f"Sam Carter leads the launch of release {n + 4}.")
    other = make_actor(org)
    save(other, "Private", "Nadia Okafor reports to Sam Carter.", scope="personal")
    question = Question(text="Who works with Sam Carter?", max_claims=10)
    ids = entities_named(actor=actor, text=question.text, limit=5)
    assert ids
    found = _entity_facts(actor, ids, question)
    assert [f.pk for f in found] == everything_sorted(actor, ids, question)
    assert {f.subject_id in ids for f in found} == {True, False}  # as subject, and as object
    assert all("Nadia" not in f.statement for f in found)
    assert any("Nadia" in f.statement for f in _entity_facts(other, ids, question))
    few = Question(text=question.text, max_claims=1)
    assert [f.pk for f in _entity_facts(actor, ids, few)] == everything_sorted(actor, ids, few)
    assert len(everything_sorted(actor, ids, few)) == 3
    assert _entity_facts(actor, [], question) == []
