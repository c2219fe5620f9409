"""Questions that found no evidence: recorded by the search tools, read on the overview page,
purged after ``BRAIN_MISS_RETENTION_DAYS``."""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from django.conf import settings
from django.utils import timezone

from brain.core.actors import Actor
from usage.models import Miss

logger = logging.getLogger("brain.usage")
QUESTION_MAX = 500


def record_miss(*, actor: Actor, tool: str, question: str) -> None:
    """Note that ``question`` found nothing. Never fails the call that found nothing."""
    try:
        Miss.objects.create(org=actor.org, user=actor.user, tool=tool, question=question.strip()[:QUESTION_MAX])
    except Exception:
        logger.exception("could not record a question that found no evidence")


def purge_old_misses(*, now: datetime | None = None) -> int:
    cutoff = (now or timezone.now()) - timedelta(days=settings.BRAIN_MISS_RETENTION_DAYS)
    deleted, _ = Miss.objects.filter(at__lt=cutoff).delete()
    return deleted
