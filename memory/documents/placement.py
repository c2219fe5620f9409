"""Where a document sits: its category, scope and owner, and everything that copies them.

Chunks and facts carry their document's category, scope and owner so that the retrieval SQL
filters on one row; values and entity mentions follow their fact or document. A change of
access therefore rewrites the document, every version of it (an older version read "as of" a
past day must not keep the old access) and all their chunks and facts, in one transaction, and
leaves an audit record. Content never changes here: knowledge changes by saving a new version.

A message of a conversation is embedded after the message before it when both have the same
readers (``memory.documents.turns``). Moving one changes who reads it, so it and the message
after it are ingested again, and deleting one ingests the message after it again: no vector
keeps text its readers may no longer see.
"""

from __future__ import annotations

from django.contrib.auth.models import User
from django.db import transaction

from brain.actors import Actor
from brain.audit import record_audit
from brain.errors import InvalidArgument, NotFound, PermissionDenied
from brain.ids import format_id
from brain.models import Category, Membership, Organisation
from memory.documents.saving import ingest_again
from memory.documents.turns import next_message_id
from memory.models import Chunk, Document, Fact, Scope


def check_access(*, org: Organisation, category: Category, scope: str, owner: User | None) -> None:
    """Refuse a placement that cannot hold: raises InvalidArgument with what to choose instead."""
    if category.org_id != org.pk:
        raise InvalidArgument("Choose one of this organisation's categories.")
    if scope not in Scope.values:
        raise InvalidArgument("scope must be 'shared' or 'personal'.")
    if owner is not None and not Membership.objects.filter(org=org, user=owner).exists():
        raise InvalidArgument("The owner must be a member of this organisation.")
    if scope == Scope.PERSONAL and owner is None:
        raise InvalidArgument("A personal document needs an owner: nobody else may read it.")


@transaction.atomic
def delete_documents(documents: list[Document]) -> None:
    """Delete documents with their passages and facts. The message after a deleted one was embedded
    after its text, so it is ingested again."""
    gone = {document.pk for document in documents}
    after = [next_message_id(document) for document in documents]
    Document.objects.filter(pk__in=gone).delete()
    ingest_again([pk for pk in after if pk not in gone])


@transaction.atomic
def change_document_access(
    *, actor: Actor, document_id: int, category: Category, scope: str, owner: User | None
) -> Document:
    """Move a document (all its versions) to another category, scope or owner; admins only."""
    if not actor.is_admin:
        raise PermissionDenied("Only an admin of the organisation may change who can read a document.")
    document = Document.objects.select_for_update().filter(org=actor.org, pk=document_id).first()
    if document is None or (document.scope == Scope.PERSONAL and document.owner_id != actor.user.pk):
        raise NotFound("No such document.")
    check_access(org=actor.org, category=category, scope=scope, owner=owner)
    before = {"category": document.category.slug, "scope": document.scope, "owner": _name(document.owner)}
    after = {"category": category.slug, "scope": scope, "owner": _name(owner)}
    if before == after:
        return document
    versions = _versions(document)
    placement = {"category": category, "scope": scope, "owner": owner}
    Document.objects.filter(pk__in=versions).update(**placement)
    Chunk.objects.filter(document_id__in=versions).update(**placement)
    Fact.objects.filter(document_id__in=versions).update(**placement)
    ingest_again([document.pk, next_message_id(document)])
    record_audit(
        actor=actor,
        action="document.access_changed",
        target=document.public_id,
        details={"from": before, "to": after, "versions": [format_id("doc", pk) for pk in versions]},
    )
    document.refresh_from_db()
    return document


def _versions(document: Document) -> list[int]:
    """Every version of the document: those saved under its external id, or itself alone."""
    if not document.external_id:
        return [document.pk]
    same = Document.objects.filter(
        org_id=document.org_id, source_kind=document.source_kind, external_id=document.external_id
    )
    return sorted(same.values_list("pk", flat=True))


def _name(user: User | None) -> str | None:
    return user.get_username() if user is not None else None
