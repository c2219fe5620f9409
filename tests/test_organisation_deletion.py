"""An operator can delete a whole organisation: everything it holds goes with it, nothing else."""

import pytest

from brain.models import Organisation
from conftest import make_actor, make_org
from contacts.models import Contact, HumanRequest
from contacts.services import dispatch_request
from memory.graph.memories import remember
from memory.models import Chunk, Document, Entity, Fact
from memory.tests.factories import save
from skills.services import publish_skill

pytestmark = pytest.mark.django_db


def fill(actor):
    save(actor, "Handbook", "Priya Shah leads support at BigCo since March 2026.")
    remember(actor=actor, content="The office closes on 24 December.")
    publish_skill(actor=actor, slug="triage", name="Triage", content="Steps...")
    contact = Contact.objects.create(org=actor.org, name="Farah", email="f@example.com", channels=["email"])
    dispatch_request(actor=actor, question="q", contact_id=contact.pk)


def test_deleting_an_organisation_removes_its_memory_and_keeps_the_others():
    doomed, kept = make_actor(make_org()), make_actor(make_org())
    fill(doomed)
    fill(kept)
    Organisation.objects.filter(pk=doomed.org.pk).delete()
    for model in (Document, Chunk, Fact, Entity, HumanRequest):
        assert not model.objects.filter(org=doomed.org.pk).exists(), model
        assert model.objects.filter(org=kept.org.pk).exists(), model
