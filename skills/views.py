"""A skill's page for members: what the skill in use says, who looks after it and when it is due for
review, with "Still correct" for its steward and the steward's form for admins. A skill the viewer
may not use is answered as one that does not exist."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_POST

from brain.core.errors import DomainError, NotFound
from brain.core.reviews import stale_since, today
from brain.faces.markdown import render_markdown
from brain.faces.web import web_actor
from skills.selectors import get_usable_skill
from skills.services import may_set_skill_review, may_verify_skill, set_skill_review, verify_skill


def _members(org_id: int) -> list[User]:
    return list(User.objects.filter(memberships__org_id=org_id, is_active=True).order_by("username"))


@login_required
def skill_page(request: HttpRequest, slug: str) -> HttpResponse:
    actor = web_actor(request)
    try:
        skill = get_usable_skill(actor=actor, slug=slug)
    except NotFound as exc:
        raise Http404(exc.message) from exc
    version = skill.current_version
    may_set = may_set_skill_review(actor, skill)
    return render(
        request,
        "skills/skill.html",
        {
            "org": actor.org,
            "skill": skill,
            "version": version,
            "content_html": render_markdown(version.content) if version is not None else "",
            "stale_since": stale_since(skill.review_due_on, on=today(actor.org)),
            "may_verify": may_verify_skill(actor, skill) and skill.review_every_days,
            "may_set": may_set,
            "members": _members(actor.org.pk) if may_set else [],
            "verify_url": reverse("skill-review", args=[skill.slug, "verify"]) + f"?org={actor.org.slug}",
            "set_url": reverse("skill-review", args=[skill.slug, "set"]) + f"?org={actor.org.slug}",
        },
    )


@login_required
@require_POST
def skill_review(request: HttpRequest, slug: str, action: str) -> HttpResponseRedirect:
    """``verify``: its steward says it is still correct; ``set``: name the steward and interval."""
    actor = web_actor(request)
    try:
        skill = get_usable_skill(actor=actor, slug=slug)
        if action == "verify":
            skill = verify_skill(actor=actor, skill_id=skill.pk)
            messages.success(request, f"Marked as still correct; next review due on {skill.review_due_on}.")
        elif action == "set":
            post = request.POST
            set_skill_review(
                actor=actor,
                skill_id=skill.pk,
                steward_id=post.get("steward"),
                review_every_days=post.get("review_every_days"),
            )
            messages.success(request, "Saved who looks after it.")
        else:
            raise Http404("No such action.")
    except NotFound as exc:
        raise Http404(exc.message) from exc
    except DomainError as exc:
        messages.error(request, exc.message)
    return HttpResponseRedirect(f"{reverse('skill', args=[slug])}?org={actor.org.slug}")
