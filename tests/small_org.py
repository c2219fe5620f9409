"""A small organisation with what every tool needs to find something: for contract tests and query budgets."""

from __future__ import annotations

from brain.core.actors import Actor
from brain.core.services import mark_memory_built
from brain.models import Category, Features, Membership, Organisation
from conftest import everything_on, make_actor, make_org, make_user
from connectors.models import Connection
from connectors.sealing import seal
from contacts.models import Contact
from contacts.services import save_contact_topics
from jobs.services import schedule_job
from memory.graph.memories import remember
from memory.models import Entity
from memory.tests.factories import save
from registers.commitments.services import record_commitment
from registers.contradictions.services import raise_contradiction
from registers.glossary.services import define_term
from skills.services import approve_version, publish_skill

DOCUMENTS = {
    "Travel policy": "Flights over six hours may be booked in premium economy. Hotels are capped at 180 EUR a night.",
    "Deploy runbook": "Deploys run from the main branch every Tuesday. Roll back with the deploy tool's undo command.",
    "Office move": "The Leeds office moves to Wellington Street on 1 March 2025. Parking stays on the old site.",
}
MEMORIES = [
    ("Atlas is owned by the platform team.", "Atlas"),
    ("The platform team is led by Priya Shah.", "Platform team"),
    ("The travel budget for 2025 is 40,000 EUR.", "Travel budget"),
]


def small_organisation() -> tuple[Organisation, Actor, dict[str, str]]:
    """An organisation with three ingested documents, three remembered facts, an approved skill,
    a contact, a GitHub connection (to acme/shop, github_comment granted) and a Slack one (to
    #general, slack_post_message granted), whose tools reach the stand-ins the tests that run them
    start; returns its member actor and the ids tools need."""
    org = make_org()
    mark_memory_built(org=org)
    admin = make_actor(org, make_user(org, role=Membership.ADMIN))
    actor = make_actor(org)
    documents = [save(actor, title, content) for title, content in DOCUMENTS.items()]
    memories = [remember(actor=actor, content=content, subject=subject) for content, subject in MEMORIES]
    version = publish_skill(actor=actor, slug="deploy-guide", name="Deploy guide", content="Deploy on Tuesdays.")
    approve_version(actor=admin, version_id=version.pk)
    contact = Contact.objects.create(
        org=org, name="Sam Ops", topics="deploys, runbooks", email="sam@example.com", channels=["email"]
    )
    save_contact_topics(contact)
    general = Category.objects.get(org=org, slug=Category.DEFAULT_SLUG)
    Connection.objects.create(
        org=org,
        kind="github",
        name="Shop",
        category=general,
        created_by=admin.user,
        options={"repositories": ["acme/shop"]},
        sealed_credentials=seal({"token": "ghp_valid"}),
        granted_tools=["github_comment"],
    )
    Connection.objects.create(
        org=org,
        kind="slack",
        name="Chat",
        category=general,
        created_by=admin.user,
        options={"channels": ["general"]},
        granted_tools=["slack_post_message"],
        sealed_credentials=seal({"token": "xoxb-valid", "signing_secret": "s"}),
    )
    Features.objects.filter(org=org).update(**everything_on())
    org.refresh_from_db()
    promise = record_commitment(actor=actor, owner="Priya Shah", what="Priya Shah will review the deploy runbook")
    pair = raise_contradiction(
        actor=actor,
        question="Mondays or Tuesdays?",
        about="deploy day",
        claim_a="Tuesdays",
        source_a="runbook",
        claim_b="Mondays",
        source_b="chat",
    )
    term = define_term(actor=actor, term="Atlas", definition="The platform team's deploy service.")
    job = schedule_job(actor=actor, name="Deploy digest", prompt="What changed about deploys?", schedule="0 9 * * 1")
    known = {
        "job_id": job.job.public_id,
        "commitment_id": promise.public_id,
        "contradiction_id": pair.public_id,
        "term_id": term.public_id,
        "document_id": documents[0].public_id,
        "memory_id": memories[-1].public_id,
        "entity": Entity.objects.filter(org=org).order_by("pk").values_list("name", flat=True)[0],
    }
    return org, actor, known
