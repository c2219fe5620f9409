"""An operator can delete a whole organisation: everything it holds goes with it, nothing else."""

import io
from datetime import timedelta

import pytest
from django.apps import apps
from django.contrib.auth.models import Group
from django.core.management import CommandError, call_command
from django.urls import reverse
from django.utils import timezone
from django_celery_beat.models import PeriodicTask

from brain.core.services import create_token, report_issue
from brain.mcp.invoke import execute
from brain.mcp.registry import TOOLS
from brain.models import (
    Activity,
    Category,
    Features,
    Membership,
    MembershipInvitation,
    Organisation,
    OrganisationGroup,
    SingleSignOn,
    SsoIdentity,
)
from brain.portability.decisions import DECISIONS, org_rows
from brain.tests.admin_client import logged_in, make_operator
from conftest import make_actor, make_org, make_user
from connectors.models import Connection, Recheck, SourceAudience, SyncedItem, WebhookDelivery
from contacts.models import Contact, HumanRequest
from contacts.services import dispatch_request
from jobs.models import Job, Run
from memory.graph.fixes import merge_entities
from memory.graph.memories import remember
from memory.models import Chunk, Document, Entity, Fact, SearchEpoch, Upload
from memory.tests.factories import save
from registers.models import Commitment, CommitmentSource, Scan, Verdict
from skills.services import publish_skill
from tests.small_org import small_organisation

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


def everything(org, actor):
    """Rows of the organisation in as many tables as can hold them, beyond the small organisation's."""
    create_token(org=org, user=actor.user, scopes=["read"])
    execute(actor, TOOLS["search_company_memory"], {"query": "deploys on Tuesday"})
    execute(actor, TOOLS["search_company_memory"], {"query": "zanzibar quokka"})  # finds nothing: a miss
    report_issue(actor=actor, category="wrong_answer", observed="Mondays", expected="Tuesdays")
    fill(actor)
    group = Group.objects.create(name=f"Support of {org.slug}")
    OrganisationGroup.objects.create(group=group, org=org)
    private = Category.objects.create(org=org, slug="private", name="Private", restricted=True)
    private.groups.add(group)
    connection = Connection.objects.get(org=org, kind="slack")
    audience_group = Group.objects.create(name=f"#secret of {org.slug}")
    audience = Category.objects.create(org=org, slug="secret", name="#secret", restricted=True)
    audience.groups.add(audience_group)
    SourceAudience.objects.create(
        connection=connection, key="C1", name="#secret", category=audience, group=audience_group
    )
    document = Document.objects.filter(org=org).earliest("pk")
    SyncedItem.objects.create(connection=connection, source_id="m1", version="1", document=document)
    Recheck.objects.create(connection=connection, key="thread-1")
    WebhookDelivery.objects.create(connection=connection, digest="ab" * 32)
    Upload.objects.create(org=org, owner=actor.user, name="a.txt", data=b"x", category=private)
    MembershipInvitation.objects.create(
        org=org, user=make_user(), invited_by=actor.user, expires_at=timezone.now() + timedelta(days=1)
    )
    first, second = Entity.objects.filter(org=org, merged_into__isnull=True).order_by("pk")[:2]

    admin = make_actor(org, make_user(org, role=Membership.ADMIN))
    merge_entities(actor=admin, kept_id=first.pk, merged_id=second.pk)
    activity = Activity.objects.create(org=org, user=actor.user, label="a question")
    job = Job.objects.filter(org=org).earliest("pk")
    Run.objects.create(chat=job.chat, job=job, scheduled_for=timezone.now(), activity=activity)
    SearchEpoch.objects.get_or_create(org_id=org.pk, owner_id=0)
    promise = Commitment.objects.filter(org=org).earliest("pk")
    CommitmentSource.objects.create(
        org=org,
        commitment=promise,
        document=document,
        what=promise.what,
        promised_on=timezone.now().date(),
        fingerprint="f1",
    )
    Verdict.objects.create(commitment=promise, looked_for="the runbook review", summary="not yet")
    Scan.objects.create(org=org, register="glossary", last_id=1)
    sso = SingleSignOn.objects.create(org=org, label="Acme ID", issuer="https://id.example.com", client_id="b")
    SsoIdentity.objects.create(org=org, user=actor.user, issuer=sso.issuer, subject=f"sub-{org.slug}")
    Features.objects.get(org=org).save()  # the registers' nightly beat entry follows the switches
    return [group.pk, audience_group.pk]


def test_delete_org_leaves_no_row_of_the_organisation_in_any_table_and_the_other_untouched():
    doomed, doomed_actor, _ = small_organisation()
    kept, kept_actor, _ = small_organisation()
    doomed_groups = everything(doomed, doomed_actor)
    everything(kept, kept_actor)
    tables = {name: apps.get_model(name) for name, decision in DECISIONS.items() if decision.org is not None}

    def counts(org):
        return {name: org_rows(model, DECISIONS[name], org.pk).count() for name, model in tables.items()}

    before, kept_before = counts(doomed), counts(kept)
    empty = sorted(name for name, count in before.items() if count == 0)
    assert empty == [], f"the organisation under test should have rows in every table: none in {empty}"
    beat = [f"registers nightly for organisation {doomed.pk}"] + [
        f"job {pk}" for pk in Job.objects.filter(org=doomed).values_list("pk", flat=True)
    ]
    assert PeriodicTask.objects.filter(name__in=beat).count() == len(beat)

    call_command("delete_org", "--org", doomed.slug, "--yes", stdout=io.StringIO())

    assert counts(doomed) == dict.fromkeys(tables, 0)
    assert counts(kept) == kept_before
    assert not PeriodicTask.objects.filter(name__in=beat).exists()
    assert not Group.objects.filter(pk__in=doomed_groups).exists()
    assert PeriodicTask.objects.filter(name=f"registers nightly for organisation {kept.pk}").exists()


def test_delete_org_asks_for_yes_and_names_a_missing_organisation(org):
    with pytest.raises(CommandError, match="add --yes"):
        call_command("delete_org", "--org", org.slug)
    assert Organisation.objects.filter(pk=org.pk).exists()
    with pytest.raises(CommandError, match="No organisation with the slug 'nope'"):
        call_command("delete_org", "--org", "nope", "--yes")


def test_an_operator_deleting_an_organisation_in_the_admin_takes_its_groups_and_counters_too():
    doomed, kept = make_actor(make_org()), make_actor(make_org())
    fill(doomed)
    fill(kept)
    group = Group.objects.create(name="Doomed finance")
    OrganisationGroup.objects.create(group=group, org=doomed.org)
    Category.objects.create(org=doomed.org, slug="books", name="Books", restricted=True).groups.add(group)
    SearchEpoch.objects.get_or_create(org_id=doomed.org.pk, owner_id=0)
    page = reverse("admin:brain_organisation_delete", args=[doomed.org.pk])
    operator = logged_in(make_operator())
    asked = operator.get(page)
    assert asked.status_code == 200
    assert dict(asked.context["model_count"])["documents"] == Document.objects.filter(org=doomed.org).count()
    response = operator.post(page, {"post": "yes"})
    assert response.status_code == 302, response.content.decode()[:3000]
    assert not Organisation.objects.filter(pk=doomed.org.pk).exists()
    assert not Group.objects.filter(pk=group.pk).exists()
    assert not SearchEpoch.objects.filter(org_id=doomed.org.pk).exists()
    assert Document.objects.filter(org=kept.org).exists()
