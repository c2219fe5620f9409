"""The members' Jobs page: their jobs and the shared ones, with pause, resume, run now and delete;
a form to make a job and to change one; the latest runs they may read, deleted jobs' included,
which the page asks for again while one is queued or running (``status_part``: each job's "Last
run" cell and the recent runs), so a run asked for by "Run now" is seen arriving and finishing, in
its job's row and among the runs, without a reload; and each job's chat (its prompt,
then each run's report, rendered as markdown without raw HTML)."""

from __future__ import annotations

from typing import Any, cast

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.db.models import Q
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.shortcuts import render
from django.template.loader import render_to_string
from django.urls import reverse
from django.views.decorators.http import require_POST

from brain.core.actors import Actor
from brain.core.errors import DomainError, NotFound
from brain.core.selectors import orgs_with
from brain.core.services import actor_for_user
from brain.faces.markdown import render_markdown
from brain.faces.web import member_organisations, switched_off
from brain.models import Organisation
from jobs.forms import ONCE, SCHEDULE_EXAMPLES, JobForm, initial_for
from jobs.grants import grantable_tools
from jobs.models import Chat, Job, Run
from jobs.selectors import list_runs, readable_chats, readable_runs, runs_under_way
from jobs.services import Scheduled, list_jobs, schedule_job, schedule_once, update_job, visible_jobs

NO_JOB = "No such job of yours."
RUNS_SHOWN = 30
BUSY = (Run.Status.QUEUED, Run.Status.RUNNING)
ACTIONS: dict[str, dict[str, Any]] = {
    "pause": {"enabled": False},
    "resume": {"enabled": True},
    "run": {"run_now": True},
    "delete": {"delete": True},
}


def _orgs(user: User) -> list[Organisation]:
    on = orgs_with("jobs")
    return list(Organisation.objects.filter(memberships__user=user, pk__in=on).order_by("name"))


@login_required
def jobs_page(request: HttpRequest) -> HttpResponse:
    user = cast(User, request.user)
    sections = []
    for org in _orgs(user):
        actor = actor_for_user(org=org, user=user, via="web")
        sections.append((org, _rows(list_jobs(actor=actor)), list_runs(actor=actor, limit=RUNS_SHOWN)))
    off = switched_off(user, member_organisations(user).exclude(pk__in=[org.pk for org, _jobs, _runs in sections]))
    return render(request, "jobs/jobs.html", {"sections": sections, "off": off})


@login_required
@require_POST
def job_action(request: HttpRequest, job_id: int, action: str) -> HttpResponse:
    user = cast(User, request.user)
    job = Job.objects.filter(pk=job_id, org__in=_orgs(user)).select_related("org").first()
    if job is None or action not in ACTIONS:
        raise Http404(NO_JOB)
    try:
        update_job(actor=actor_for_user(org=job.org, user=user, via="web"), job_id=job.public_id, **ACTIONS[action])
        done = {"pause": "paused", "resume": "resumed", "run": "queued to run within a minute", "delete": "deleted"}
        said, ok = f"{job.name}: {done[action]}.", True
    except NotFound:  # a colleague's personal job answers as a missing one: same status, same words
        raise Http404(NO_JOB) from None
    except DomainError as exc:  # the tool's words name ids and arguments: the page says it with the job's name
        paused = f"{job.name} is paused, so it does not run now: resume it first."
        said, ok = (paused if exc.details.get("paused") else exc.message), False
    if request.headers.get("X-Requested-With") == "fetch":  # the page's script stays and shows the run come
        return JsonResponse({"ok": ok, "message": said}, status=200 if ok else 400)
    (messages.success if ok else messages.error)(request, said)
    return HttpResponseRedirect(reverse("jobs"))


@login_required
def runs_part(request: HttpRequest, org_id: int) -> HttpResponse:
    """The recent runs of one organisation, the table alone, for the page to refresh in place."""
    user = cast(User, request.user)
    org = next((o for o in _orgs(user) if o.pk == org_id), None)
    if org is None:
        raise Http404("No such organisation of yours with jobs on.")
    runs = list_runs(actor=actor_for_user(org=org, user=user, via="web"), limit=RUNS_SHOWN)
    return render(request, "jobs/_runs.html", {"org": org, "runs": runs})


def _rows(jobs: list[Scheduled]) -> list[tuple[Scheduled, Run | None]]:
    """Each job with its run under way, if any: its row says "queued" or "running" until it ends."""
    busy = runs_under_way(job_ids=[item.job.pk for item in jobs])
    return [(item, busy.get(item.job.pk)) for item in jobs]


@login_required
def status_part(request: HttpRequest, org_id: int) -> JsonResponse:
    """What the Jobs page asks for while a run is queued or running: each job's "Last run" cell and
    the recent runs, as the page draws them, and whether anything is still under way."""
    user = cast(User, request.user)
    org = next((o for o in _orgs(user) if o.pk == org_id), None)
    if org is None:
        raise Http404("No such organisation of yours with jobs on.")
    actor = actor_for_user(org=org, user=user, via="web")
    rows = _rows(list_jobs(actor=actor))
    runs = list_runs(actor=actor, limit=RUNS_SHOWN)
    cells = {
        str(item.job.pk): render_to_string("jobs/_last_run.html", {"job": item.job, "running": running, "org": org})
        for item, running in rows
    }
    busy = any(running for _, running in rows) or any(r.status in BUSY for r in runs)
    return JsonResponse(
        {
            "busy": busy,
            "last_runs": cells,
            "runs": render_to_string("jobs/_runs.html", {"org": org, "runs": runs}, request=request),
        }
    )


def _chosen_org(request: HttpRequest, user: User) -> Organisation:
    orgs = _orgs(user)
    wanted = request.POST.get("org") or request.GET.get("org")
    chosen = next((o for o in orgs if o.slug == wanted), None) if wanted else (orgs[0] if orgs else None)
    if chosen is None:
        raise Http404("No such organisation of yours with jobs on.")
    return chosen


def _form_page(request: HttpRequest, context: dict[str, Any], status: int = 200) -> HttpResponse:
    return render(request, "jobs/job_form.html", {**context, "examples": SCHEDULE_EXAMPLES}, status=status)


def _made(actor: Actor, data: dict[str, Any]) -> str:
    common = {
        "name": data["name"],
        "prompt": data["prompt"],
        "time_zone": data["time_zone"],
        "scope": data["scope"],
        "mode": data["mode"],
        "memory": data["memory"] or None,
        "notify": data["notify"],
        "write_tools": data["write_tools"],
    }
    if data["when"] == ONCE:
        made = schedule_once(actor=actor, at=data["at"], **common)
    else:
        made = schedule_job(actor=actor, schedule=data["schedule"], **common)
    return f"{made.job.name}: made, {made.schedule}."


@login_required
def new_job(request: HttpRequest) -> HttpResponse:
    user = cast(User, request.user)
    org = _chosen_org(request, user)
    actor = actor_for_user(org=org, user=user, via="web")
    grantable = grantable_tools(actor)
    if request.method != "POST":
        form = JobForm(grantable=grantable, initial={"time_zone": org.time_zone})
        return _form_page(request, {"form": form, "org": org, "job": None})
    form = JobForm(request.POST, grantable=grantable)
    if form.is_valid():
        try:
            messages.success(request, _made(actor, form.cleaned_data))
            return HttpResponseRedirect(reverse("jobs"))
        except DomainError as exc:
            form.add_error(None, exc.message)
    return _form_page(request, {"form": form, "org": org, "job": None}, status=400)


def _changes(job: Job, data: dict[str, Any]) -> dict[str, Any]:
    """Only what the person changed: a member may rename a shared job without touching its prompt."""
    was = initial_for(job)
    changed: dict[str, Any] = {}
    for field in ("name", "prompt", "time_zone", "mode", "notify"):
        if data[field] != was[field]:
            changed[field] = data[field]
    if (data["memory"] or was["memory"]) != was["memory"]:
        changed["memory"] = data["memory"]
    if sorted(data["write_tools"]) != sorted(was["write_tools"]):
        changed["write_tools"] = data["write_tools"]
    if data["when"] == ONCE and (was["when"] != ONCE or data["at"] != was["at"] or "time_zone" in changed):
        changed["at"] = data["at"]
    elif data["when"] != ONCE and (was["when"] == ONCE or data["schedule"] != was["schedule"]):
        changed["schedule"] = data["schedule"]
    return changed


@login_required
def edit_job(request: HttpRequest, job_id: int) -> HttpResponse:
    user = cast(User, request.user)
    job = Job.objects.filter(pk=job_id, org__in=_orgs(user)).select_related("org").first()
    actor = actor_for_user(org=job.org, user=user, via="web") if job is not None else None
    if job is None or actor is None or not visible_jobs(actor=actor).filter(pk=job.pk).exists():
        raise Http404(NO_JOB)
    grantable = grantable_tools(actor)
    context: dict[str, Any] = {"org": job.org, "job": job}
    if request.method != "POST":
        context["form"] = JobForm(grantable=grantable, editing=job, initial=initial_for(job))
        return _form_page(request, context)
    form = context["form"] = JobForm(request.POST, grantable=grantable, editing=job)
    if form.is_valid():
        try:
            changed = _changes(job, form.cleaned_data)
            kept = update_job(actor=actor, job_id=job.public_id, **changed) if changed else None
            said = (
                f"{kept.job.name}: changed, {kept.schedule}." if kept is not None else f"{job.name}: nothing changed."
            )
            messages.success(request, said)
            return HttpResponseRedirect(reverse("jobs"))
        except NotFound:
            raise Http404(NO_JOB) from None
        except DomainError as exc:
            form.add_error(None, exc.message)
    return _form_page(request, context, status=400)


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
