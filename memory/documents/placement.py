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

Members act on their own documents here too: the member who added a document, or an admin, may
delete it (``may_delete``), and its adder may take it back into their personal memory
(``may_make_personal``); each rule is written once and the pages only ask it.
"""

from __future__ import annotations

from django.contrib.auth.models import User
from django.db import transaction

from brain.core.actors import Actor
from brain.core.audit import record_audit
from brain.core.errors import InvalidArgument, NotFound, PermissionDenied
from brain.core.personal import require_may_write
from brain.infra.ids import format_id
from brain.models import Category, Membership, Organisation
from memory.access import in_the_trail, readable
from memory.documents.saving import ingest_again
from memory.documents.trash import Trashed, move_to_trash, purge_after, versions_of
from memory.documents.trash import delete_documents as delete_documents  # for good: a purge, a source's deletion
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
def change_document_access(
    *, actor: Actor, document_id: int, category: Category, scope: str, owner: User | None
) -> Document:
    """Move a document (all its versions) to another category, scope or owner; admins only."""
    if not actor.is_admin:
        raise PermissionDenied("Only an admin of the organisation may change who can read a document.")
    document = Document.objects.select_for_update().filter(org=actor.org, pk=document_id).first()
    if document is None or (document.scope == Scope.PERSONAL and document.owner_id != actor.user.pk):
        raise NotFound("No such document.")
    return _place(actor=actor, document=document, category=category, scope=scope, owner=owner)


def may_delete(actor: Actor, document: Document) -> bool:
    """Who may delete a document they can read: the member who added it, or an admin."""
    return document.owner_id == actor.user.pk or actor.is_admin


def may_make_personal(actor: Actor, document: Document) -> bool:
    """Who may take a shared document back into their personal memory: the member who added it."""
    return document.scope == Scope.SHARED and document.owner_id == actor.user.pk


def _readable_for_update(actor: Actor, document_id: int) -> Document:
    """The document as ``actor`` may read it, locked; one they may not read is not found."""
    document = Document.objects.select_for_update().filter(readable(actor), pk=document_id).first()
    if document is None:
        raise NotFound(f"No document doc_{document_id} in this organisation.")
    return document


@transaction.atomic
def delete_document(*, actor: Actor, document_id: int) -> Trashed:
    """Move a document the actor added (or any they can read, for an admin) to the trash, with the
    versions of it they may delete, their passages and facts; it stays restorable there for the
    organisation's period (``memory.documents.trash``). Recorded in the audit trail."""
    document = _readable_for_update(actor, document_id)
    if not may_delete(actor, document):
        raise PermissionDenied(f"{document.public_id} was added by someone else; only they or an admin may delete it.")
    require_may_write(actor, scope=document.scope, what=f"Deleting {document.public_id}")
    # Its other versions go with it as far as the actor may read and delete each of them.
    others = Document.objects.filter(readable(actor), pk__in=versions_of(document)).exclude(pk=document.pk)
    gone = [document, *(version for version in others if may_delete(actor, version))]
    versions = sorted(version.pk for version in gone)
    title, before = document.title, readers_of(document)
    document.trashed_at = move_to_trash(actor=actor, documents=gone)
    until = purge_after(document)
    record_audit(
        actor=actor,
        action="document.deleted",
        target=document.public_id,
        details={
            "title": in_the_trail(title, scope=document.scope, restricted=document.category.restricted),
            "read_by": before,
            "versions": [format_id("doc", pk) for pk in versions],
            "trash_until": until.isoformat(),
        },
    )
    return Trashed(document_id=document.pk, title=title, until=until)


@transaction.atomic
def make_document_personal(*, actor: Actor, document_id: int) -> Document:
    """Take a shared document (all its versions) back into its adder's personal memory: from now on
    only they read it. Only the member who added it may; recorded like any change of access."""
    document = _readable_for_update(actor, document_id)
    if not may_make_personal(actor, document):
        if document.scope == Scope.PERSONAL:
            raise InvalidArgument(f"{document.public_id} is already personal: only you read it.")
        raise PermissionDenied(f"{document.public_id} was added by someone else; only they may make it personal.")
    versions = Document.objects.filter(pk__in=versions_of(document))
    if versions.exclude(owner=actor.user).exists():
        raise PermissionDenied(
            f"Another version of {document.public_id} was saved by someone else; only an admin may change who reads it."
        )
    return _place(actor=actor, document=document, category=document.category, scope=Scope.PERSONAL, owner=actor.user)


def readers_of(row: Document | Fact, *, viewer: User | None = None) -> str:
    """Who reads a document or a memory, in words, with how many members that is (for a
    confirmation): its category, scope and owner, the same audience ``memory.access`` reads by."""
    if row.scope == Scope.PERSONAL:
        return "only you" if viewer is not None and row.owner_id == viewer.pk else f"only {_name(row.owner)}"
    members = Membership.objects.filter(org_id=row.org_id)
    if row.category.restricted:
        groups = list(row.category.groups.order_by("name").values_list("name", flat=True))
        count = members.filter(user__groups__brain_categories=row.category).distinct().count()
        named = ", ".join(groups) or "no group"
        return f"the members of {named} in {row.org.name} ({count} member{'' if count == 1 else 's'})"
    count = members.count()
    return f"everyone in {row.org.name} ({count} member{'' if count == 1 else 's'})"


def _place(*, actor: Actor, document: Document, category: Category, scope: str, owner: User | None) -> Document:
    check_access(org=actor.org, category=category, scope=scope, owner=owner)
    before = {"category": document.category.slug, "scope": document.scope, "owner": _name(document.owner)}
    after = {"category": category.slug, "scope": scope, "owner": _name(owner)}
    if before == after:
        return document
    versions = versions_of(document)
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


def _name(user: User | None) -> str | None:
    return user.get_username() if user is not None else None
