"""Connections: adding, pausing, removing, and one sync of one connection.

A sync holds a lease on its connection (a conditional update, so two workers never run one
connection at once); each page's items and the cursor after it are saved in one transaction, so
a worker killed mid-sync loses at most the page it was on, and the next sync, once the lease has
run out, goes on from the last saved cursor. Items are kept by the source's own ids: an unchanged
item is skipped, a changed one becomes a new version of its document, one gone from the source is
withdrawn. What goes wrong is kept in words on the connection; refused credentials stop the
retries until someone replaces them.

Where the source decides who reads (a private Slack channel), the page names an ``Audience``:
the sync keeps a restricted category and a group of the organisation for it, the group holding
exactly the organisation's members whose email is among the audience's, brought up to date on
every sync. Items of that audience are saved there. The connection still saves as the admin who
added it, who need not be a member: ``_acting_for`` lets that save (and only it) reach the
category, through ``Actor.source_categories``, the one place memory.access widens a read.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Any

from django.contrib.auth.models import Group, User
from django.db import transaction
from django.db.models import Case, Count, DateTimeField, Q, QuerySet, Value, When
from django.db.models.functions import Lower
from django.utils import timezone

from brain.core.actors import Actor
from brain.core.audit import record_audit
from brain.core.errors import InvalidArgument, NotFound, PermissionDenied
from brain.core.inputs import text_problem
from brain.core.services import actor_for_user
from brain.models import Category, OrganisationGroup
from connectors.grants import refresh_connected_tools
from connectors.kinds import KINDS, Audience, CredentialsRefused, Item, SourceError
from connectors.models import Connection, Recheck, SourceAudience, SyncedItem
from connectors.sealing import CredentialsUnreadable, seal, unseal
from connectors.selectors import own_connection, require_admin
from memory.access import readable_category_ids
from memory.documents.placement import delete_documents
from memory.documents.records import CONNECTOR
from memory.documents.saving import add_document
from memory.models import Document

logger = logging.getLogger("brain.connectors")
LEASE = timedelta(minutes=10)
SOURCE_KIND = CONNECTOR


@transaction.atomic
def add_connection(
    *, actor: Actor, kind: str, name: str, category: Category, credentials: dict[str, str], options: dict[str, str]
) -> Connection:
    require_admin(actor)
    if kind not in KINDS:
        raise InvalidArgument(f"Unknown kind of connection {kind!r}; choose one of {', '.join(sorted(KINDS))}.")
    source = KINDS[kind]
    if category.org_id != actor.org.pk:
        raise NotFound("No such category.")
    if category.pk not in readable_category_ids(actor=actor):
        raise InvalidArgument(
            f"{category.name} is restricted to groups you are not in; the connection saves as you, so choose a "
            "category you read, or join one of its groups first."
        )
    if not name.strip() or len(name) > 100:
        raise InvalidArgument("Give the connection a name of at most 100 characters.")
    for label, text in [("The name", name), *credentials.items(), *options.items()]:
        if problem := text_problem(text):
            raise InvalidArgument(f"{label} {problem}.")
    if Connection.objects.filter(org=actor.org, name=name.strip()).exists():
        raise InvalidArgument(f"There is already a connection named {name.strip()!r}.")
    missing = [field for field in source.credential_fields if not credentials.get(field, "").strip()]
    if missing:
        raise InvalidArgument(f"Paste the {missing[0]} for {source.label}.")
    try:
        cleaned = source.clean_options(options)
        source.check(credentials=credentials, options=cleaned, restricted=category.restricted)
    except ValueError as exc:
        raise InvalidArgument(str(exc)) from None
    connection = Connection.objects.create(
        org=actor.org,
        kind=kind,
        name=name.strip(),
        category=category,
        options=cleaned,
        sealed_credentials=seal({field: credentials[field].strip() for field in source.credential_fields}),
        created_by=actor.user,
        next_sync_at=timezone.now(),
    )
    record_audit(actor=actor, action="connection.added", target=f"connection {connection.name}", details=cleaned)
    refresh_connected_tools(actor.org)
    return connection


@transaction.atomic
def replace_credentials(*, actor: Actor, connection_id: int, credentials: dict[str, str]) -> Connection:
    connection = own_connection(actor, connection_id)
    fields = KINDS[connection.kind].credential_fields
    if missing := [field for field in fields if not credentials.get(field, "").strip()]:
        raise InvalidArgument(f"Paste the {missing[0]}.")
    try:
        KINDS[connection.kind].check(
            credentials=credentials, options=connection.options, restricted=connection.category.restricted
        )
    except ValueError as exc:
        raise InvalidArgument(str(exc)) from None
    connection.sealed_credentials = seal({field: credentials[field].strip() for field in fields})
    connection.credentials_refused, connection.last_error = False, ""
    connection.next_sync_at = timezone.now()
    connection.save()
    record_audit(actor=actor, action="connection.credentials", target=f"connection {connection.name}")
    return connection


@transaction.atomic
def pause_connection(*, actor: Actor, connection_id: int, paused: bool) -> Connection:
    connection = own_connection(actor, connection_id)
    connection.paused_at = timezone.now() if paused else None
    if not paused:
        connection.next_sync_at = timezone.now()
    connection.save(update_fields=["paused_at", "next_sync_at"])
    record_audit(
        actor=actor,
        action="connection.paused" if paused else "connection.resumed",
        target=f"connection {connection.name}",
    )
    return connection


@transaction.atomic
def sync_soon(*, actor: Actor, connection_id: int) -> Connection:
    connection = own_connection(actor, connection_id)
    connection.next_sync_at = timezone.now()
    connection.save(update_fields=["next_sync_at"])
    return connection


@transaction.atomic
def remove_connection(*, actor: Actor, connection_id: int, keep_documents: bool) -> int:
    """Remove a connection; with ``keep_documents`` False, what it brought in goes too. Returns how
    many documents were deleted."""
    connection = own_connection(actor, connection_id)
    gone = 0
    if not keep_documents:
        documents = list(_documents_of(connection))
        delete_documents(documents)
        gone = len(documents)
        # The categories and groups made for the source's private parts go with what they held;
        # kept documents keep theirs, with the readers they had at the last sync.
        for audience in SourceAudience.objects.filter(connection=connection).select_related("category", "group"):
            audience.group.delete()
            if not audience.category.documents.exists():
                audience.category.delete()
    record_audit(
        actor=actor,
        action="connection.removed",
        target=f"connection {connection.name}",
        details={"documents_deleted": gone},
    )
    connection.delete()
    refresh_connected_tools(actor.org)
    return gone


def _documents_of(connection: Connection) -> QuerySet[Document]:
    prefix = f"{connection.kind}:{connection.pk}:"
    return Document.objects.filter(org=connection.org, source_kind=SOURCE_KIND, external_id__startswith=prefix)


@dataclass
class Outcome:
    state: str  # "synced", "busy" (another worker holds it), "paused", "failed"
    saved: int = 0
    withdrawn: int = 0
    message: str = ""


def _claim(connection_id: int) -> Connection | None:
    now = timezone.now()
    claimed = Connection.objects.filter(
        Q(lease_until__isnull=True) | Q(lease_until__lt=now), pk=connection_id, paused_at__isnull=True
    ).update(lease_until=now + LEASE)
    return Connection.objects.select_related("org", "category", "created_by").get(pk=connection_id) if claimed else None


def sync_connection(connection_id: int) -> Outcome:
    connection = _claim(connection_id)
    if connection is None:
        exists = Connection.objects.filter(pk=connection_id).values_list("paused_at", flat=True).first()
        return Outcome(state="paused" if exists else "busy")
    outcome = Outcome(state="synced")
    try:
        actor = _acting(connection)
        rechecks = dict(Recheck.objects.filter(connection=connection).values_list("pk", "key"))
        source = KINDS[connection.kind](
            credentials=unseal(connection.sealed_credentials),
            options=connection.options,
            restricted=connection.category.restricted,
            rechecks=tuple(sorted(set(rechecks.values()))),
        )
        for page in source.pages(dict(connection.cursor)):
            with transaction.atomic():
                for audience in page.audiences:
                    keep_audience(connection, audience)
                for item in page.items:
                    saved, withdrawn = _keep(actor, connection, item)
                    outcome.saved += saved
                    outcome.withdrawn += withdrawn
                connection.cursor = page.cursor
                connection.lease_until = timezone.now() + LEASE
                connection.items = SyncedItem.objects.filter(connection=connection, withdrawn_at__isnull=True).count()
                connection.save(update_fields=["cursor", "lease_until", "items"])
        Recheck.objects.filter(pk__in=rechecks).delete()  # read again now; newer asks stay
        _finish(connection, error="", refused=False, retry_at=None)
    except CredentialsRefused as exc:
        _failed(outcome, connection, exc.message, refused=True)
    except CredentialsUnreadable:
        message = "The stored credentials cannot be read with this server's keys; paste them again."
        _failed(outcome, connection, message, refused=True)
    except SourceError as exc:
        _failed(outcome, connection, exc.message, refused=False, retry_at=exc.retry_at)
    except (PermissionDenied, NotFound) as exc:
        message = f"The admin who added this connection can no longer save knowledge here ({exc.message})."
        _failed(outcome, connection, message, refused=True)
    return outcome


def _failed(outcome: Outcome, connection: Connection, message: str, *, refused: bool, retry_at: Any = None) -> None:
    """What was saved before the failure stays saved (its pages' cursors with it)."""
    outcome.state, outcome.message = "failed", message
    _finish(connection, error=message, refused=refused, retry_at=retry_at)


def _acting(connection: Connection) -> Actor:
    """The connection saves as the admin who added it."""
    user = connection.created_by
    if user is None or not user.is_active:
        raise PermissionDenied("that person's account is gone")
    return actor_for_user(org=connection.org, user=user, via="connector")


def keep_audience(connection: Connection, audience: Audience) -> SourceAudience:
    """The restricted category and group of one audience, the group set to exactly the members of
    the organisation whose email is among the audience's (a person not in Brain is skipped; one
    no longer among them loses access now)."""
    kept = (
        SourceAudience.objects.select_related("category", "group")
        .filter(connection=connection, key=audience.key)
        .first()
    )
    if kept is None:
        label = f"{audience.name} ({connection.name})"
        category = Category.objects.create(
            org=connection.org,
            slug=f"{connection.kind}-{connection.pk}-{audience.key}".lower()[:64],
            name=label[:200],
            restricted=True,
        )
        group = Group.objects.create(name=f"{label} [{connection.pk}:{audience.key}]"[-150:])
        OrganisationGroup.objects.create(group=group, org=connection.org)
        category.groups.add(group)
        kept = SourceAudience.objects.create(
            connection=connection, key=audience.key, name=audience.name[:200], category=category, group=group
        )
    emails = {email.lower() for email in audience.emails if email}
    members = User.objects.annotate(address=Lower("email")).filter(is_active=True, memberships__org=connection.org)
    # An address two accounts share says nothing about which of them is the source's member: neither
    # is mapped (an account given a member's address does not inherit their channels).
    shared = members.values("address").annotate(accounts=Count("id")).filter(accounts__gt=1).values("address")
    readers = members.filter(address__in=sorted(emails)).exclude(address__in=shared)
    kept.group.user_set.set(readers)
    if kept.name != audience.name[:200]:
        kept.name = audience.name[:200]
        kept.save(update_fields=["name"])
    return kept


def _acting_for(actor: Actor, connection: Connection, item: Item) -> tuple[Actor, Category]:
    """Who saves the item, and into which category: the connection's own, or its audience's, which
    the source decides who reads; the acting admin reaches it for this save only."""
    if not item.audience:
        return actor, connection.category
    kept = SourceAudience.objects.select_related("category").filter(connection=connection, key=item.audience).first()
    if kept is None:
        raise SourceError(f"{item.source_id} names an audience the source never described; trying again later.")
    return replace(actor, source_categories=frozenset({kept.category.pk})), kept.category


def _keep(actor: Actor, connection: Connection, item: Item) -> tuple[int, int]:
    """Save or withdraw one item; (1, 0), (0, 1) or (0, 0) for an unchanged one."""
    known = SyncedItem.objects.select_for_update().filter(connection=connection, source_id=item.source_id).first()
    if item.gone:
        if known is None or known.withdrawn_at is not None:
            return 0, 0
        delete_documents(list(_documents_of(connection).filter(external_id=_external_id(connection, item))))
        known.withdrawn_at, known.document = timezone.now(), None
        known.save(update_fields=["withdrawn_at", "document"])
        return 0, 1
    if known is not None and known.version == item.version and known.withdrawn_at is None:
        return 0, 0
    actor, category = _acting_for(actor, connection, item)
    earlier = _documents_of(connection).filter(external_id=_external_id(connection, item))
    if earlier.exclude(category=category).exists():
        # Its readers changed in the source (a channel made private): what others read goes.
        delete_documents(list(earlier))
    saved = add_document(
        actor=actor,
        title=item.title or item.source_id,
        content=item.content or item.title or item.source_id,
        content_type=item.content_type,
        source_kind=SOURCE_KIND,
        source_url=item.url[:2000],
        external_id=_external_id(connection, item),
        metadata={**item.metadata, "connection": connection.name},
        category=category.slug,
        occurred_at=item.occurred_at,
        speaker=item.speaker,
        conversation=item.conversation,
        session=item.session,
    )
    SyncedItem.objects.update_or_create(
        connection=connection,
        source_id=item.source_id,
        defaults={"version": item.version, "url": item.url[:2000], "document": saved.document, "withdrawn_at": None},
    )
    return (0, 0) if saved.in_trash else (1, 0)  # an item someone put in the trash stays there


@transaction.atomic
def withdraw_item(connection: Connection, item: Item) -> int:
    """Withdraw one item the source says is gone (a webhook); 1 when there was something to withdraw."""
    _saved, withdrawn = _keep(_acting(connection), connection, item)
    if withdrawn:
        Connection.objects.filter(pk=connection.pk).update(items=max(connection.items - 1, 0))
    return withdrawn


def _external_id(connection: Connection, item: Item) -> str:
    return f"{connection.kind}:{connection.pk}:{item.source_id}"[:300]


def _finish(connection: Connection, *, error: str, refused: bool, retry_at: Any) -> None:
    now = timezone.now()
    if error:
        logger.warning("connection %s (%s) failed: %s", connection.pk, connection.kind, error)
        # Refused credentials wait for new ones; anything else is tried again at the source's
        # word, or after the interval.
        due = None if refused else retry_at or now + timedelta(minutes=connection.interval_minutes)
    else:
        due = now + timedelta(minutes=connection.interval_minutes)
    next_sync: Any = due
    if due is not None:
        # Asked for again while this sync ran (a webhook, Sync now): the sync it asked for may not
        # have read that change, so the next one is due now rather than after the interval.
        before = connection.next_sync_at  # as it was when this sync took the lease
        asked = Q(next_sync_at__gt=before) if before else Q(next_sync_at__isnull=False)
        next_sync = Case(When(asked, then=Value(min(now, due))), default=Value(due), output_field=DateTimeField())
    Connection.objects.filter(pk=connection.pk).update(
        lease_until=None,
        last_error=error,
        credentials_refused=refused,
        next_sync_at=next_sync,
        **({} if error else {"last_sync_at": now}),
    )


def due_connections() -> list[int]:
    now = timezone.now()
    return list(
        Connection.objects.filter(paused_at__isnull=True, credentials_refused=False, next_sync_at__lte=now)
        .filter(Q(lease_until__isnull=True) | Q(lease_until__lt=now))
        .values_list("pk", flat=True)
    )


def connections_of(*, actor: Actor) -> list[Connection]:
    require_admin(actor)
    return list(Connection.objects.filter(org=actor.org).select_related("category").order_by("name"))
