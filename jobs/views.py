"""The members' Jobs page: their jobs and the shared ones, with pause, resume, run now and delete;
the latest runs they may read, deleted jobs' included; and each job's chat (its prompt, then each
run's report, rendered as markdown without raw HTML)."""

from __future__ import annotations

from typing import Any, cast

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.db.models import Q
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_POST

from brain.errors import DomainError, NotFound
from brain.markdown import render_markdown
from brain.models import Features, Organisation
from brain.services import actor_for_user
from brain.web import member_organisations, switched_off
from jobs.models import Chat, Job
from jobs.selectors import list_runs, readable_chats, readable_runs
from jobs.services import list_jobs, update_job

NO_JOB = "No such job of yours."
RUNS_SHOWN = 30
ACTIONS: dict[str, dict[str, Any]] = {
    "pause": {"enabled": False},
    "resume": {"enabled": True},
    "run": {"run_now": True},
    "delete": {"delete": True},
}


def _orgs(user: User) -> list[Organisation]:
    on = Features.objects.filter(jobs=True).values("org_id")
    return list(Organisation.objects.filter(memberships__user=user, pk__in=on).order_by("name"))


@login_required
def jobs_page(request: HttpRequest) -> HttpResponse:
    user = cast(User, request.user)
    sections = []
    for org in _orgs(user):
        actor = actor_for_user(org=org, user=user, via="web")
        sections.append((org, list_jobs(actor=actor), list_runs(actor=actor, limit=RUNS_SHOWN)))
    off = switched_off(user, member_organisations(user).exclude(pk__in=[org.pk for org, _jobs, _runs in sections]))
    return render(request, "jobs/jobs.html", {"sections": sections, "off": off})


@login_required
@require_POST
def job_action(request: HttpRequest, job_id: int, action: str) -> HttpResponseRedirect:
    user = cast(User, request.user)
    job = Job.objects.filter(pk=job_id, org__in=_orgs(user)).select_related("org").first()
    if job is None or action not in ACTIONS:
        raise Http404(NO_JOB)
    try:
        update_job(actor=actor_for_user(org=job.org, user=user, via="web"), job_id=job.public_id, **ACTIONS[action])
        done = {"pause": "paused", "resume": "resumed", "run": "queued to run within a minute", "delete": "deleted"}
        messages.success(request, f"{job.name}: {done[action]}.")
    except NotFound:  # a colleague's personal job answers as a missing one: same status, same words
        raise Http404(NO_JOB) from None
    except DomainError as exc:
        messages.error(request, exc.message)
    return HttpResponseRedirect(reverse("jobs"))


@login_required
def chat_page(request: HttpRequest, chat_id: int) -> HttpResponse:
    user = cast(User, request.user)
    found = Chat.objects.filter(pk=chat_id, org__in=_orgs(user)).select_related("org").first()
    actor = actor_for_user(org=found.org, user=user, via="web") if found is not None else None
    chat = readable_chats(actor=actor).filter(pk=chat_id).first() if actor is not None else None
    if chat is None or actor is None:
        raise Http404("No such chat of yours.")
    readable = readable_runs(actor=actor)  # a report read with the owner's reach is the owner's alone
    shown = chat.messages.select_related("run").filter(Q(run__isnull=True) | Q(run__in=readable))
    rows = [{"message": m, "html": render_markdown(m.text), "run": m.run} for m in shown]
    return render(request, "jobs/chat.html", {"chat": chat, "rows": rows})
