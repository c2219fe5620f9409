"""Switching an organisation's embedder while it is in use: the old vectors serve until the new
ones are all made, every write meanwhile gets both, and nothing of another organisation moves."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from brain.core.actors import Actor
from brain.models import Organisation
from contacts.models import Contact
from contacts.services import route, save_contact_topics
from memory.graph import memories
from memory.graph.writes import FactDraft, embed_drafts, record_facts
from memory.index.embedding import get_embedder
from memory.maintenance.reembedding import begin_switch, cancel_switch, complete_switch, fill_upcoming, switch
from memory.models import Chunk, Fact
from memory.search.passages import search_chunks
from memory.tests.embedding_stub import EmbeddingsStub
from memory.tests.factories import save

MINILM = "all-MiniLM-L6-v2 (onnx int8)"


@pytest.fixture
def remote(settings, stub_url) -> str:
    """The openai embedder pointed at the loopback stub; its model name."""
    settings.BRAIN_EMBEDDINGS_URL = stub_url
    return get_embedder("openai").name


def models(actor: Actor, model: type[Chunk] | type[Fact]) -> set[tuple[str, str]]:
    return set(model.objects.filter(org=actor.org).values_list("embedding_model", "next_embedding_model"))


def test_old_vectors_serve_until_the_switch_completes_and_then_the_new_ones_do(actor, remote):
    save(actor, "Plan", "The zebra migration starts in May.")
    memories.remember(actor=actor, content="The zebra migration has a budget of 40k.")
    assert models(actor, Chunk) == {(MINILM, "")}

    assert begin_switch(org=actor.org, to="openai")
    fill_upcoming(org=actor.org)
    assert models(actor, Chunk) == {(MINILM, remote)}
    assert models(actor, Fact) == {(MINILM, remote)}
    # Mid-switch, questions are embedded with the serving model and find its vectors.
    served = EmbeddingsStub.requests[:]
    hits = search_chunks(actor=actor, query="zebra migration", mode="vector").hits
    assert hits
    assert hits[0].text.startswith("The zebra migration starts")
    assert EmbeddingsStub.requests == served  # the question never went to the upcoming model

    # A document saved during the switch is stored with both models' vectors.
    save(actor, "Later", "The walrus survey ends in June.")
    assert models(actor, Chunk) == {(MINILM, remote)}

    complete_switch(org=actor.org)
    assert actor.org.embedder == "openai"
    assert actor.org.embedder_next == ""
    assert models(actor, Chunk) == {(remote, "")}
    assert models(actor, Fact) == {(remote, "")}
    hits = search_chunks(actor=actor, query="walrus survey", mode="vector").hits
    assert hits[0].text.startswith("The walrus survey")
    assert EmbeddingsStub.requests[-1]["body"]["input"] == ["walrus survey"]  # questions now go to it


def test_a_switch_moves_only_its_organisation(actor, other_org_actor, remote):
    save(actor, "Plan", "The zebra migration starts in May.")
    save(other_org_actor, "Plan", "The otter census starts in July.")
    switch(org=actor.org, to="openai")
    assert models(other_org_actor, Chunk) == {(MINILM, "")}
    assert Organisation.objects.get(pk=other_org_actor.org.pk).embedder == "minilm"
    assert search_chunks(actor=other_org_actor, query="otter census", mode="vector").hits


def test_a_write_embedded_before_the_switch_began_gets_the_upcoming_vector_too(actor, remote):
    document = save(actor, "Roles", "Nothing yet.")
    drafts = [FactDraft(statement="Priya leads support.")]
    vectors = embed_drafts(actor.org.pk, drafts)  # before the switch: only the serving model
    begin_switch(org=actor.org, to="openai")
    [fact] = record_facts(document=document, drafts=drafts, vectors=vectors)
    fact.refresh_from_db()
    assert (fact.embedding_model, fact.next_embedding_model) == (MINILM, remote)


def test_writes_go_on_while_the_upcoming_model_is_down_and_the_switch_fills_them(actor, settings, remote):
    begin_switch(org=actor.org, to="openai")
    live = settings.BRAIN_EMBEDDINGS_URL
    settings.BRAIN_EMBEDDINGS_URL = "http://127.0.0.1:9/v1"  # nothing listens there
    document = save(actor, "Outage", "The heron count was postponed.")
    assert document.status == "ready"
    assert models(actor, Chunk) == {(MINILM, "")}
    settings.BRAIN_EMBEDDINGS_URL = live
    complete_switch(org=actor.org)  # fills what is missing inside the swap
    assert models(actor, Chunk) == {(remote, "")}


def test_cancelling_drops_the_upcoming_vectors_and_keeps_the_serving_ones(actor, remote):
    save(actor, "Plan", "The zebra migration starts in May.")
    begin_switch(org=actor.org, to="openai")
    fill_upcoming(org=actor.org)
    assert cancel_switch(org=actor.org)
    assert models(actor, Chunk) == {(MINILM, "")}
    assert actor.org.embedder_next == ""
    assert not cancel_switch(org=actor.org)
    with pytest.raises(Exception, match="no switch"):
        complete_switch(org=actor.org)


def test_contacts_are_routed_with_the_serving_model_before_and_after(actor, remote):
    ana = Contact.objects.create(
        org=actor.org, name="Ana", topics="payroll and invoices", email="a@example.com", channels=["email"]
    )
    save_contact_topics(ana)
    switch(org=actor.org, to="openai")
    ana.refresh_from_db()
    assert ana.topics_embedding_model == remote
    assert route(actor=actor, question="who knows about payroll?").score > 0


def test_the_command_switches_reports_and_refuses_a_model_it_cannot_reach(actor, settings, remote, capsys):
    save(actor, "Plan", "The zebra migration starts in May.")
    live = settings.BRAIN_EMBEDDINGS_URL
    settings.BRAIN_EMBEDDINGS_URL = ""
    with pytest.raises(CommandError, match="BRAIN_EMBEDDINGS_URL.*the old vectors still serve"):
        call_command("reembed", "--org", actor.org.slug, "--to", "openai")
    assert Organisation.objects.get(pk=actor.org.pk).embedder_next == ""
    settings.BRAIN_EMBEDDINGS_URL = "http://127.0.0.1:9/v1"
    with pytest.raises(CommandError, match="failed"):
        call_command("reembed", "--org", actor.org.slug, "--to", "openai")
    assert Organisation.objects.get(pk=actor.org.pk).embedder_next == ""

    settings.BRAIN_EMBEDDINGS_URL = live
    call_command("reembed", "--org", actor.org.slug, "--to", "openai")
    out = capsys.readouterr().out
    assert f"{actor.org.slug}: serving text-embedding-3-small" in out
    assert "re-embedded 1 chunks" in out
    call_command("reembed", "--org", actor.org.slug, "--status")
    assert "serving text-embedding-3-small" in capsys.readouterr().out
    call_command("reembed", "--org", actor.org.slug, "--to", "minilm")  # and back again
    assert models(actor, Chunk) == {(MINILM, "")}
