"""Skill reads, always scoped to the actor's organisation and the categories the actor may read."""

from __future__ import annotations

from django.db.models import Count, Prefetch, Q, QuerySet

from brain.core.actors import Actor
from brain.core.errors import NotFound
from brain.core.reviews import today
from brain.models import Category, Organisation
from memory.access import readable_category_ids
from skills.models import SLUG_MAX, Skill, SkillVersion


def usable_skills(*, actor: Actor) -> QuerySet[Skill]:
    """Skills in use (an approved current version, not archived) in at least one readable category."""
    return (
        Skill.objects.filter(
            org=actor.org,
            archived_at__isnull=True,
            current_version__status=SkillVersion.Status.APPROVED,
            current_version__categories__in=readable_category_ids(actor=actor),
        )
        .select_related("current_version")
        .prefetch_related(
            Prefetch("current_version__categories", queryset=Category.objects.order_by("slug")),
        )
        .distinct()
        .order_by("slug")
    )


def get_skill(*, actor: Actor, slug: str) -> SkillVersion:
    """The version in use of one usable skill. Pending-only, archived, hidden and other
    organisations' skills are all simply not found."""
    wanted = slug.strip().lower()
    skill = usable_skills(actor=actor).filter(slug=wanted).first() if 0 < len(wanted) <= SLUG_MAX else None
    if skill is None or skill.current_version is None:
        raise NotFound(f"No skill {slug!r} you can use. Use a slug from the list init returns.")
    version = skill.current_version
    version.skill = skill
    return version


def get_usable_skill(*, actor: Actor, slug: str) -> Skill:
    """One skill in use that the actor may use, for its page; anything else is simply not found."""
    wanted = slug.strip().lower()
    skill = usable_skills(actor=actor).filter(slug=wanted).select_related("steward").first() if wanted else None
    if skill is None:
        raise NotFound("No such skill, or not one you can use.")
    return skill


def stale_skills(*, actor: Actor) -> QuerySet[Skill]:
    """The skills in use the actor looks after and may use that are past their review day."""
    return usable_skills(actor=actor).filter(steward=actor.user, review_due_on__lt=today(actor.org))


def skill_review_counts(*, org: Organisation) -> tuple[int, int, int]:
    """For the admins' overview: the skills in use, those without a steward and those past their review day."""
    in_use = Skill.objects.filter(org=org, archived_at__isnull=True, current_version__isnull=False)
    counts = in_use.aggregate(
        total=Count("pk"),
        unowned=Count("pk", filter=Q(steward__isnull=True)),
        stale=Count("pk", filter=Q(review_due_on__lt=today(org))),
    )
    return counts["total"], counts["unowned"], counts["stale"]
