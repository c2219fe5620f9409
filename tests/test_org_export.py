"""An organisation can leave with its knowledge: export_org writes an archive, import_org loads it
as a new organisation that answers the same searches, and the archive holds no secret."""

from __future__ import annotations

import gzip
import io
import json
import tarfile
from datetime import timedelta
from pathlib import Path
from typing import cast

import pytest
from django.apps import apps
from django.conf import settings
from django.contrib.auth.models import Group
from django.core.management import CommandError, call_command
from django.db import models
from django.test.utils import isolate_apps
from django.utils import timezone
from oauth2_provider.models import Application

from brain.infra.sealing import seal_secret
from brain.mcp.invoke import execute
from brain.mcp.registry import TOOLS
from brain.models import (
    ApiToken,
    AuditRecord,
    Category,
    Membership,
    Organisation,
    OrganisationGroup,
    OutboxMessage,
    SingleSignOn,
    SsoIdentity,
)
from brain.portability import archive, decisions
from brain.portability.decisions import DECISIONS, GROUP, USER, Exported, exported, label, undecided
from brain.portability.exporting import export_organisation
from brain.portability.importing import import_organisation
from conftest import make_actor, make_org, make_token
from connectors.models import Connection
from contacts.models import Contact
from memory.documents.ingestion import sweep_stuck_documents
from memory.mcp_tools.documents import SearchOut
from memory.models import Chunk, Document, Fact
from memory.tests.factories import save
from registers.models import Commitment, Contradiction, Scan, Term, Verdict
from tests.small_org import small_organisation

pytestmark = pytest.mark.django_db

QUESTIONS = [
    "who is head of support",
    "refunds for enterprise customers",
    "premium economy flights",
    "parking at the Leeds office",
    "when does the Leeds office move",
    "roll back a deploy",
]


def test_every_model_of_every_app_is_either_exported_or_skipped_with_a_reason():
    assert undecided() == [], "decide each new model in brain/portability/decisions.py: exported, or skipped and why"
    real = {label(model) for model in apps.get_models()}
    assert sorted(set(DECISIONS) - real) == [], "a decision names a model that no longer exists"


def test_a_new_model_with_an_organisation_would_be_caught(monkeypatch):
    with isolate_apps("brain"):  # a registry of its own: the real one never sees the newcomer

        class Newcomer(models.Model):
            org = models.ForeignKey(Organisation, on_delete=models.CASCADE, related_name="+")

            class Meta:
                app_label = "brain"

            def __str__(self) -> str:
                return "newcomer"

    real = apps.get_models()
    monkeypatch.setattr(decisions.apps, "get_models", lambda: [*real, Newcomer])
    assert decisions.undecided() == ["brain.newcomer"]


def test_every_key_of_an_exported_row_can_be_followed_on_import():
    order = list(DECISIONS)
    for model, decision in exported():
        for field in model._meta.concrete_fields:
            if not field.is_relation or field.name in decision.omit:
                continue
            target = label(cast(type[models.Model], field.related_model))
            if target in (USER, GROUP, "brain.organisation"):
                continue
            later = isinstance(DECISIONS[target], Exported) and order.index(target) >= order.index(label(model))
            if later or not isinstance(DECISIONS[target], Exported):
                assert field.null, f"{label(model)}.{field.name} points to {target} and cannot be left empty"


def rich_organisation():
    """The small organisation, with a document in two versions and a fact that replaced another."""
    org, actor, _ = small_organisation()
    save(actor, "Old org chart", "Sam Carter was head of support from January 2025.")
    save(actor, "New org chart", "On 3 March 2026 Priya Shah became head of support.")
    save(actor, "Refunds", "Refunds take 14 days.", external_id="refunds")
    save(actor, "Refunds", "Refunds take 30 days for enterprise customers.", external_id="refunds")
    Contact.objects.create(org=org, name="Quiet Jo")  # no topics, so no vector
    chunk = Chunk.objects.filter(org=org, text__contains="premium economy").get()
    fact = Fact.objects.filter(org=org, document__isnull=False).earliest("pk")
    other = Fact.objects.filter(org=org, document__isnull=False).latest("pk")
    Contradiction.objects.filter(org=org).update(
        more=[{"fact": fact.pk, "claim": fact.statement}], fact_a=fact, fact_b=other, pair=f"{fact.pk}:{other.pk}"
    )
    Scan.objects.create(org=org, register="glossary", last_id=chunk.pk)
    Scan.objects.create(org=org, register="contradictions", last_id=other.pk + 1)
    Term.objects.filter(org=org).update(examples=[{"sentence": "Atlas deploys", "passage": chunk.pk}])
    Verdict.objects.create(
        commitment=Commitment.objects.get(org=org),
        looked_for="the review",
        summary="found",
        found=[{"id": chunk.public_id, "passage": chunk.public_id, "passage_pk": chunk.pk, "memory": fact.public_id}],
    )
    return org, actor


def searched(actor, question):
    outcome = execute(actor, TOOLS["search_company_memory"], {"query": question})
    assert outcome.output is not None, outcome.message
    return [(hit.title, hit.snippet) for hit in cast(SearchOut, outcome.output).hits]


def facts_of(org):
    return sorted(
        (
            f.statement,
            f.valid_from,
            f.valid_to,
            f.recorded_at,
            f.superseded_at,
            f.source,
            f.kind,
            f.topic,
            f.document.title if f.document else None,
            f.superseded_by.statement if f.superseded_by else None,
        )
        for f in Fact.objects.filter(org=org).select_related("document", "superseded_by")
    )


def test_an_imported_organisation_answers_the_same_searches_with_the_same_history(tmp_path):
    org, actor = rich_organisation()
    assert Fact.objects.filter(org=org, superseded_by__isnull=False).exists(), "the fixture needs a fact's history"
    assert Document.objects.filter(org=org, previous__isnull=False).exists(), "and a document's"
    before = {question: searched(actor, question) for question in QUESTIONS}
    assert all(before.values())
    path = tmp_path / "org.tar.gz"
    manifest = export_organisation(org=org, target=path)

    done = import_organisation(path=path, slug="moved")
    moved = done.org
    assert moved.slug == "moved"
    assert moved.name == org.name
    assert moved.embedder == org.embedder
    assert done.people_matched == manifest["counts"][USER]
    assert done.people_created == 0
    again = make_actor(moved, user=actor.user)
    assert {question: searched(again, question) for question in QUESTIONS} == before
    assert facts_of(moved) == facts_of(org)
    for name, count in manifest["counts"].items():
        if name not in (USER, GROUP, "brain.organisation", "brain.auditrecord"):
            assert done.counts[name] == count, name
    versions = Document.objects.filter(org=moved, previous__isnull=False)
    assert versions.exists()
    assert not versions.exclude(previous__org=moved).exists()
    assert Category.objects.filter(org=moved).count() == Category.objects.filter(org=org).count()
    assert Membership.objects.filter(org=moved).count() == Membership.objects.filter(org=org).count()
    assert Contact.objects.get(org=moved, name="Quiet Jo").topics_embedding is None


def test_ids_inside_json_fields_are_turned_to_the_new_rows(tmp_path):
    org, _ = rich_organisation()
    path = tmp_path / "org.tar.gz"
    export_organisation(org=org, target=path)
    moved = import_organisation(path=path, slug="moved").org
    chunk = Chunk.objects.get(org=moved, text__contains="premium economy")
    fact = Fact.objects.get(pk=Contradiction.objects.get(org=moved).more[0]["fact"])
    assert fact.org_id == moved.pk
    assert fact.statement == Contradiction.objects.get(org=org).more[0]["claim"]
    assert Term.objects.get(org=moved).examples[0]["passage"] == chunk.pk
    found = Verdict.objects.get(commitment__org=moved).found[0]
    assert found["id"] == found["passage"] == chunk.public_id
    assert found["passage_pk"] == chunk.pk
    assert found["memory"] == fact.public_id
    pair = Contradiction.objects.get(org=moved)
    assert pair.pair == f"{pair.fact_a_id}:{pair.fact_b_id}"
    assert Fact.objects.filter(pk__in=[pair.fact_a_id, pair.fact_b_id], org=moved).count() == 2
    assert Scan.objects.get(org=moved, register="glossary").last_id == chunk.pk
    newest = Fact.objects.filter(org=moved).latest("pk")
    assert Scan.objects.get(org=moved, register="contradictions").last_id == newest.pk


def test_an_import_keeps_the_order_of_ids_which_the_scans_marks_rest_on(tmp_path):
    org, _ = rich_organisation()
    path = tmp_path / "org.tar.gz"
    export_organisation(org=org, target=path)
    moved = import_organisation(path=path, slug="moved").org
    for model in (Chunk, Fact):
        order = model.objects.order_by("pk").values_list("text" if model is Chunk else "statement", flat=True)
        assert list(order.filter(org=moved)) == list(order.filter(org=org))


def test_export_and_import_are_audited(tmp_path):
    org, _ = rich_organisation()
    path = tmp_path / "org.tar.gz"
    call_command("export_org", "--org", org.slug, "--out", str(path), stdout=io.StringIO())
    call_command("import_org", str(path), "--slug", "elsewhere", stdout=io.StringIO())
    exported_record = AuditRecord.objects.get(org=org, action="organisation.exported")
    assert exported_record.user is None
    assert exported_record.via == "command"
    imported_record = AuditRecord.objects.get(org__slug="elsewhere", action="organisation.imported")
    assert imported_record.details["from"] == org.slug
    assert imported_record.user is None


def test_people_without_an_account_here_are_made_inactive_without_a_password(tmp_path):
    org, actor = rich_organisation()
    path = tmp_path / "org.tar.gz"
    export_organisation(org=org, target=path)
    actor.user.email = "gone@example.com"
    actor.user.save()
    done = import_organisation(path=_with_email(path, tmp_path, actor.user.pk, "nobody-here@example.org"), slug="fresh")
    newcomer = Membership.objects.get(org=done.org, user__email="nobody-here@example.org").user
    assert newcomer.pk != actor.user.pk
    assert not newcomer.is_active
    assert not newcomer.has_usable_password()
    assert done.people_created == 1


def _with_email(path: Path, tmp_path: Path, user_id: int, email: str) -> Path:
    """The archive again with one person's address changed and the manifest written to match."""
    files = _files(path)
    people = [json.loads(line) for line in files[f"{USER}.jsonl"].splitlines()]
    for person in people:
        if person["id"] == user_id:
            person["email"] = email
    return _rewritten(files | {f"{USER}.jsonl": _lines(people)}, tmp_path / "changed")


def _files(path: Path) -> dict[str, bytes]:
    with tarfile.open(path, "r:gz") as tar:
        return {m.name: tar.extractfile(m).read() for m in tar.getmembers()}  # type: ignore[union-attr]


def _repack(files: dict[str, bytes], target: Path) -> Path:
    with tarfile.open(target, "w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return target


def test_the_archive_holds_no_secret(tmp_path):
    org, actor = rich_organisation()
    issued = make_token(org, actor.user)
    connection = Connection.objects.get(org=org, kind="github")
    app = Application.objects.create(
        name="Desk app",
        client_type="confidential",
        authorization_grant_type="authorization-code",
        client_secret="app-secret-value-123",
        redirect_uris="https://example.com/cb",
        user=actor.user,
    )
    ApiToken.objects.filter(pk=issued.token.pk).update(oauth_application=app)
    Contact.objects.filter(org=org).update(slack="https://hooks.slack.com/services/T000/B000/secretpath")
    sso = SingleSignOn.objects.create(
        org=org,
        label="Acme ID",
        issuer="https://id.example.com",
        client_id="brain-client",
        sealed_client_secret=seal_secret("sso-client-secret-456"),
    )
    SsoIdentity.objects.create(org=org, user=actor.user, issuer=sso.issuer, subject="sub-of-the-admin-789")
    actor.user.refresh_from_db()
    secrets = {
        "token": issued.plaintext,
        "token hash": issued.token.hashed,
        "password hash": actor.user.password,
        "sealed credentials": connection.sealed_credentials,
        "credential": "ghp_valid",
        "slack credential": "xoxb-valid",
        "sealed webhook secret": connection.sealed_webhook_secret,
        "webhook secret": connection.webhook_secret,
        "oauth client secret": app.client_secret,
        "oauth client secret as typed": "app-secret-value-123",
        "slack webhook": "hooks.slack.com/services/T000/B000/secretpath",
        "sealed sso client secret": sso.sealed_client_secret,
        "sso client secret": "sso-client-secret-456",
        "sign-in identity at the provider": "sub-of-the-admin-789",
    }
    assert all(len(value) >= 8 for value in secrets.values())
    path = tmp_path / "org.tar.gz"
    export_organisation(org=org, target=path)
    whole = gzip.decompress(path.read_bytes())
    for what, value in secrets.items():
        assert value.encode() not in whole, f"the archive holds the {what}"


def test_it_refuses_an_archive_of_an_unknown_format_version(tmp_path):
    org, _ = rich_organisation()
    path = tmp_path / "org.tar.gz"
    export_organisation(org=org, target=path)
    files = _files(path)
    manifest = json.loads(files[archive.MANIFEST])
    manifest["version"] = 99
    files[archive.MANIFEST] = json.dumps(manifest).encode()
    with pytest.raises(CommandError, match="format version 99; this Brain reads version 1"):
        call_command("import_org", str(_repack(files, tmp_path / "v99.tar.gz")), "--slug", "new")
    assert not Organisation.objects.filter(slug="new").exists()


def test_it_refuses_a_changed_a_short_or_a_cut_archive_and_makes_nothing(tmp_path):
    org, _ = rich_organisation()
    path = tmp_path / "org.tar.gz"
    export_organisation(org=org, target=path)
    files = _files(path)
    changed = dict(files) | {"memory.fact.jsonl": files["memory.fact.jsonl"].replace(b"40,000", b"99,000")}
    short = {name: data for name, data in files.items() if name != "memory.chunk.jsonl"}
    fewer = dict(files) | {"memory.document.jsonl": b"".join(files["memory.document.jsonl"].splitlines(True)[:-1])}
    cases = {
        "changed": (_repack(changed, tmp_path / "changed.tar.gz"), "memory.fact.jsonl is not as it was written"),
        "short": (
            _repack(short, tmp_path / "short.tar.gz"),
            "memory.chunk.jsonl is listed in its manifest but missing",
        ),
        "fewer": (_repack(fewer, tmp_path / "fewer.tar.gz"), "memory.document.jsonl is not as it was written"),
    }
    cut = tmp_path / "cut.tar.gz"
    cut.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    cases["cut"] = (cut, "not a readable .tar.gz archive")
    for case, (bad, words) in cases.items():
        with pytest.raises(CommandError, match=words):
            call_command("import_org", str(bad), "--slug", f"bad-{case}")
        assert not Organisation.objects.filter(slug=f"bad-{case}").exists(), case


def test_it_refuses_a_slug_in_use_or_not_a_slug_and_an_archive_that_is_not_there(tmp_path):
    org, _ = rich_organisation()
    path = tmp_path / "org.tar.gz"
    export_organisation(org=org, target=path)
    with pytest.raises(CommandError, match="already exists"):
        call_command("import_org", str(path), "--slug", org.slug)
    with pytest.raises(CommandError, match="is not a slug"):
        call_command("import_org", str(path), "--slug", "two words")
    with pytest.raises(CommandError, match="No archive at"):
        call_command("import_org", str(tmp_path / "nothing.tar.gz"), "--slug", "new")
    assert Organisation.objects.filter(slug__in=["new", "two words"]).count() == 0


def test_it_refuses_rows_that_name_what_the_archive_does_not_hold(tmp_path):
    org, _ = rich_organisation()
    path = tmp_path / "org.tar.gz"
    export_organisation(org=org, target=path)
    files = _files(path)
    facts = [json.loads(line) for line in files["memory.fact.jsonl"].splitlines()]
    facts[0]["document_id"] = 10**9
    stray = {"brain.apitoken.jsonl": b'{"id":1}\n'}
    for case, changed in {"dangling": {"memory.fact.jsonl": _lines(facts)}, "stray": stray}.items():
        bad = _rewritten(files | changed, tmp_path / case)
        words = "refers to memory.document 1000000000" if case == "dangling" else "brain.apitoken.jsonl, which this"
        with pytest.raises(CommandError, match=words):
            call_command("import_org", str(bad), "--slug", f"bad-{case}")
        assert not Organisation.objects.filter(slug=f"bad-{case}").exists()


def test_it_refuses_an_archive_of_a_newer_brain_or_with_fields_it_does_not_know(tmp_path):
    org, _ = rich_organisation()
    path = tmp_path / "org.tar.gz"
    export_organisation(org=org, target=path)
    files = _files(path)
    manifest = json.loads(files[archive.MANIFEST])
    manifest["migrations"]["memory"].append("9999_from_the_future")
    documents = [json.loads(line) for line in files["memory.document.jsonl"].splitlines()]
    documents[0]["colour"] = "blue"
    cases = {
        "newer": ({archive.MANIFEST: json.dumps(manifest).encode()}, "migration memory.9999_from_the_future"),
        "unknown": ({"memory.document.jsonl": _lines(documents)}, "fields this Brain does not know \\(colour\\)"),
    }
    for case, (changed, words) in cases.items():
        with pytest.raises(CommandError, match=words):
            call_command("import_org", str(_rewritten(files | changed, tmp_path / case)), "--slug", f"bad-{case}")
        assert not Organisation.objects.filter(slug=f"bad-{case}").exists()


def test_groups_and_restricted_categories_come_along_under_free_names(tmp_path):
    org, actor = rich_organisation()
    group = Group.objects.create(name="Finance")
    OrganisationGroup.objects.create(group=group, org=org)
    books = Category.objects.create(org=org, slug="books", name="Books", restricted=True)
    books.groups.add(group)
    actor.user.groups.add(group)
    path = tmp_path / "org.tar.gz"
    export_organisation(org=org, target=path)
    moved = import_organisation(path=path, slug="moved").org
    copy = Category.objects.get(org=moved, slug="books")
    assert copy.restricted
    assert [g.name for g in copy.groups.all()] == ["Finance (moved)"]
    assert OrganisationGroup.objects.get(org=moved).group == copy.groups.get()
    assert actor.user.groups.filter(name="Finance (moved)").exists()


def _lines(rows: list[dict[str, object]]) -> bytes:
    return b"".join(json.dumps(row).encode() + b"\n" for row in rows)


def _rewritten(files: dict[str, bytes], folder: Path) -> Path:
    """An archive of these files with a manifest that matches them, as a careful forger would write."""
    manifest = json.loads(files[archive.MANIFEST])
    folder.mkdir()
    manifest["files"] = {}
    for name, data in files.items():
        if name != archive.MANIFEST:
            (folder / name).write_bytes(data)
            manifest["files"][name] = archive.file_entry(folder / name)
    target = folder.with_suffix(".tar.gz")
    archive.write(target, folder, manifest)
    return target


def test_a_document_being_read_when_exported_is_taken_back_by_the_sweep_once_imported(tmp_path):
    actor = make_actor(make_org())
    document = save(actor, "Half read", "Read when the archive was written.", ingest=False)
    long_ago = timezone.now() - timedelta(seconds=settings.BRAIN_INGEST_LEASE_SECONDS * 2)
    Document.objects.filter(pk=document.pk).update(status="processing", claim="gone-worker", claimed_at=long_ago)
    path = tmp_path / "org.tar.gz"
    export_organisation(org=actor.org, target=path)
    moved = import_organisation(path=path, slug="moved").org
    copy = Document.objects.get(org=moved)
    assert copy.claim == ""
    assert copy.claimed_at == long_ago
    sweep_stuck_documents(queued_grace_seconds=0)
    assert OutboxMessage.objects.filter(row_id=copy.pk, what="document").exists()
