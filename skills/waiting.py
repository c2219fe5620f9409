"""Skills' part of the work waiting for people (brain.core.needs): versions published for review."""

from __future__ import annotations

from collections.abc import Sequence

from django.db.models import Count
from django.urls import reverse

from brain.core.needs import Waiting, per_organisation
from brain.models import Organisation
from skills.models import SkillVersion


def skills_to_review(orgs: Sequence[Organisation]) -> list[Waiting]:
    pending = SkillVersion.objects.filter(skill__org__in=orgs, status=SkillVersion.Status.PENDING)
    counts = dict(pending.order_by().values_list("skill__org").annotate(n=Count("pk")))
    url = f"{reverse('admin:skills_skillversion_changelist')}?status__exact={SkillVersion.Status.PENDING}"
    return per_organisation(
        orgs, counts, what=("skill version to review", "skill versions to review"), url=lambda org: url, order=1
    )
