"""Documents with an owner: who keeps a document (or wiki-like page) correct, how often it is reviewed,
and what is stale (the rule itself is ``brain.core.reviews``).

A document's steward is a member who can read it; a personal document is looked after by its owner
only. The member who added a document, its steward or an admin may name the steward and the interval
(``may_set_review``); the steward or an admin says it is still correct in one click
(``verify_document``), which starts the interval again. Both are audited. A document saved without a
steward of its own takes its category's (``initial_review``: a connector's documents, uploaded
files), and a new version keeps its previous version's steward and interval, its clock starting
from the new version. Only current versions are ever stale, and every read here applies the reader's
access rule: nobody learns of a stale document they cannot read.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Count, Q, QuerySet
from django.urls import reverse
from django.utils import timezone

from brain.core.actors import Actor
from brain.core.audit import record_audit
from brain.core.errors import InvalidArgument, NotFound, PermissionDenied
from brain.core.needs import Waiting
from brain.core.reviews import checked_interval, checked_steward, review_due_on, stale_since, today
from brain.core.services import actor_for_user
from brain.models import Category, Organisation
from memory.access import readable, readable_category_ids
from memory.models import Document, Scope

STEWARDS_WAITING = ("document past its review date", "documents past their review date")


@dataclass(frozen=True)
class Review:
    """What a new document starts with: its steward, interval and due day."""

    steward: User | None
    every_days: int | None
    due_on: date | None


def steward_may_read(steward: User, *, org: Organisation, category_id: int, scope: str, owner_id: int | None) -> bool:
    """Whether ``steward`` may read a document placed so: the access rule (``memory.access``), as theirs."""
    if scope == Scope.PERSONAL:
        return steward.pk == owner_id
    try:
        reader = actor_for_user(org=org, user=steward, via="web")
    except NotFound:
        return False
    return category_id in readable_category_ids(actor=reader)


def initial_review(
    *,
    org: Organisation,
    category: Category,
    scope: str,
    owner_id: int | None,
    previous: Document | None,
    steward: User | None = None,
    every_days: int | None = None,
) -> Review:
    """The review a document starts with: the one given, else its previous version's, else its
    category's; a steward who could not read it is left out (never told of it)."""
    if steward is None and every_days is None:
        source: Document | Category = previous if previous is not None else category
        steward, every_days = source.steward, source.review_every_days
    if steward is not None and not steward_may_read(
        steward, org=org, category_id=category.pk, scope=scope, owner_id=owner_id
    ):
        steward = None
    due = review_due_on(every_days=every_days, verified_at=None, recorded_at=timezone.now(), org=org)
    return Review(steward=steward, every_days=every_days, due_on=due)


def steward_choices(actor: Actor, document: Document | None = None) -> list[User]:
    """Who may be named steward: a personal document's owner; otherwise the organisation's active
    members (the service refuses one who cannot read the document's category)."""
    if document is not None and document.scope == Scope.PERSONAL:
        return [document.owner] if document.owner is not None else []
    return list(User.objects.filter(memberships__org=actor.org, is_active=True).order_by("username"))


def may_set_review(actor: Actor, document: Document) -> bool:
    """Who may name a document's steward and interval: the member who added it, its steward, or an admin."""
    return actor.user.pk in (document.owner_id, document.steward_id) or actor.is_admin


def may_verify(actor: Actor, document: Document) -> bool:
    """Who may say a document is still correct: its steward, or an admin."""
    return document.steward_id == actor.user.pk or actor.is_admin


def _current_for_update(actor: Actor, document_id: int) -> Document:
    """The current document, locked: one the actor may read, or for an admin any shared one of the
    organisation (as the admin shows them)."""
    reach = readable(actor) | Q(org=actor.org, scope=Scope.SHARED) if actor.is_admin else readable(actor)
    document = Document.objects.select_for_update().filter(reach, pk=document_id).first()
    if document is None:
        raise NotFound(f"No document doc_{document_id} in this organisation.")
    if document.superseded_at is not None:
        raise InvalidArgument("This is an earlier version; set its review on the current version.")
    return document


@transaction.atomic
def set_document_review(
    *, actor: Actor, document_id: int, steward_id: int | str | None, review_every_days: int | str | None
) -> Document:
    """Name who looks after a document and how often it is reviewed (blank for nobody, never)."""
    document = _current_for_update(actor, document_id)
    if not may_set_review(actor, document):
        raise PermissionDenied("Only the member who added it, its steward or an admin may change who looks after it.")
    steward = checked_steward(org=actor.org, user_id=steward_id)
    every_days = checked_interval(review_every_days)
    if steward is not None and not steward_may_read(
        steward, org=actor.org, category_id=document.category_id, scope=document.scope, owner_id=document.owner_id
    ):
        raise InvalidArgument(
            "Choose a steward who can read this document"
            + (": a personal document is looked after by its owner." if document.scope == Scope.PERSONAL else ".")
        )
    before = {"steward": document.steward_id, "review_every_days": document.review_every_days}
    document.steward, document.review_every_days = steward, every_days
    document.review_due_on = review_due_on(
        every_days=every_days, verified_at=document.verified_at, recorded_at=document.recorded_at, org=actor.org
    )
    document.save(update_fields=["steward", "review_every_days", "review_due_on"])
    after = {"steward": document.steward_id, "review_every_days": every_days}
    if after != before:
        record_audit(
            actor=actor,
            action="document.review_changed",
            target=document.public_id,
            details={"before": before, "after": after, "due_on": str(document.review_due_on or "")},
        )
    return document


@transaction.atomic
def verify_document(*, actor: Actor, document_id: int) -> Document:
    """Its steward (or an admin) says the document is still correct: its next review is due one interval from now."""
    document = _current_for_update(actor, document_id)
    if not may_verify(actor, document):
        raise PermissionDenied("Only its steward or an admin may say this document is still correct.")
    was_due = document.review_due_on
    document.verified_at = timezone.now()
    document.review_due_on = review_due_on(
        every_days=document.review_every_days,
        verified_at=document.verified_at,
        recorded_at=document.recorded_at,
        org=actor.org,
    )
    document.save(update_fields=["verified_at", "review_due_on"])
    record_audit(
        actor=actor,
        action="document.verified",
        target=document.public_id,
        details={"was_due_on": str(was_due or ""), "due_on": str(document.review_due_on or "")},
    )
    return document


def document_stale_since(document: Document) -> date | None:
    """The day a current document's review fell due, when that has passed; None otherwise."""
    if document.superseded_at is not None:
        return None
    return stale_since(document.review_due_on, on=today(document.org))


def stale_among(*, actor: Actor, found: Iterable[int]) -> dict[int, date]:
    """Of documents ``found`` for the actor under the access rule (a search's hits), those that are
    stale, with the day their review fell due. Only ids a read under the rule returned may be given:
    the rule is not applied twice, so that a search costs one statement more, not two."""
    ids = {pk for pk in found if pk}
    if not ids:
        return {}
    rows = (
        Document.objects.filter(org=actor.org, pk__in=ids, superseded_at__isnull=True)
        .filter(review_due_on__lt=today(actor.org))
        .values_list("pk", "review_due_on")
    )
    return {pk: due for pk, due in rows if due is not None}


def stale_documents(*, actor: Actor) -> QuerySet[Document]:
    """The current documents the actor looks after that are past their review day, oldest due first."""
    return (
        Document.objects.filter(readable(actor), steward=actor.user, superseded_at__isnull=True)
        .filter(review_due_on__lt=today(actor.org))
        .select_related("category")
        .order_by("review_due_on", "pk")
    )


def looked_after(*, actor: Actor) -> QuerySet[Document]:
    """Every current document the actor looks after, next due first (those without an interval last)."""
    return (
        Document.objects.filter(readable(actor), steward=actor.user, superseded_at__isnull=True)
        .select_related("category")
        .order_by("review_due_on", "title", "pk")
    )


def stale_for_steward(user: User, orgs: Sequence[Organisation]) -> list[Waiting]:
    """The personal Needs-you counter (``brain.core.needs.WAITING_FOR``): the documents past their
    review day that ``user`` looks after and may read, one count per organisation."""
    found = []
    for org in orgs:
        try:
            actor = actor_for_user(org=org, user=user, via="web")
        except NotFound:
            continue
        count = stale_documents(actor=actor).count()
        if count:
            url = f"{reverse('memory-review')}?org={org.slug}"
            found.append(Waiting(org=org, what=STEWARDS_WAITING, count=count, url=url, order=5))
    return found


@dataclass(frozen=True)
class CategoryReview:
    """One category's shared, current, ready documents: how many there are, have no steward, are stale."""

    category: Category
    documents: int
    unowned: int
    stale: int


def review_by_category(*, org: Organisation) -> list[CategoryReview]:
    """For the admins' overview: per category, the shared current documents, those without a steward
    and those past their review day. Personal documents are their owners' and never counted here."""
    on = today(org)
    rows = (
        Document.objects.filter(org=org, scope=Scope.SHARED, superseded_at__isnull=True, status=Document.Status.READY)
        .values("category")
        .annotate(
            documents=Count("pk"),
            unowned=Count("pk", filter=Q(steward__isnull=True)),
            stale=Count("pk", filter=Q(review_due_on__lt=on)),
        )
    )
    counts = {row["category"]: row for row in rows}
    categories = Category.objects.filter(org=org, pk__in=counts).order_by("name")
    return [
        CategoryReview(
            category=category,
            documents=counts[category.pk]["documents"],
            unowned=counts[category.pk]["unowned"],
            stale=counts[category.pk]["stale"],
        )
        for category in categories
    ]


def stale_shared(*, org: Organisation, limit: int = 50) -> list[Document]:
    """For the admins' overview: the shared current documents past their review day, oldest due first."""
    return list(
        Document.objects.filter(org=org, scope=Scope.SHARED, superseded_at__isnull=True)
        .filter(review_due_on__lt=today(org))
        .select_related("category", "steward")
        .order_by("review_due_on", "pk")[:limit]
    )
