"""Skills' part of the work waiting for people (brain.core.needs): versions published for review, and
for a skill's steward, skills past their review day."""

from __future__ import annotations

from collections.abc import Sequence

from django.contrib.auth.models import User
from django.db.models import Count
from django.urls import reverse

from brain.core.errors import NotFound
from brain.core.needs import Waiting, per_organisation
from brain.core.services import actor_for_user
from brain.models import Organisation
from skills.models import SkillVersion
from skills.selectors import stale_skills

STALE = ("skill past its review date", "skills past their review date")


def skills_to_review(orgs: Sequence[Organisation]) -> list[Waiting]:
    pending = SkillVersion.objects.filter(skill__org__in=orgs, status=SkillVersion.Status.PENDING)
    counts = dict(pending.order_by().values_list("skill__org").annotate(n=Count("pk")))
    url = f"{reverse('admin:skills_skillversion_changelist')}?status__exact={SkillVersion.Status.PENDING}"
    return per_organisation(
        orgs, counts, what=("skill version to review", "skill versions to review"), url=lambda org: url, order=1
    )


def stale_skills_for_steward(user: User, orgs: Sequence[Organisation]) -> list[Waiting]:
    """The personal Needs-you counter (brain.core.needs.WAITING_FOR): skills in use past their review
    day that ``user`` looks after and may use, one count per organisation, each linking the first."""
    found = []
    for org in orgs:
        try:
            actor = actor_for_user(org=org, user=user, via="web")
        except NotFound:
            continue
        stale = list(stale_skills(actor=actor).values_list("slug", flat=True))
        if stale:
            url = f"{reverse('skill', args=[stale[0]])}?org={org.slug}"
            found.append(Waiting(org=org, what=STALE, count=len(stale), url=url, order=6))
    return found
