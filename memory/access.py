"""What an actor may read: organisation, categories (open or through groups) and personal scope."""

from __future__ import annotations

from django.db.models import Q

from brain.actors import Actor
from brain.models import Category


def readable_category_ids(*, actor: Actor) -> list[int]:
    groups = actor.user.groups.values_list("pk", flat=True)
    return list(
        Category.objects.filter(org=actor.org)
        .filter(Q(restricted=False) | Q(groups__in=groups))
        .values_list("pk", flat=True)
        .distinct()
    )


def readable(actor: Actor) -> Q:
    """A filter for Document or Chunk rows the actor may see; used inside every retrieval query."""
    return (
        Q(org=actor.org)
        & Q(category_id__in=readable_category_ids(actor=actor))
        & (Q(scope="shared") | Q(owner=actor.user))
    )
