"""Creating, listing and changing jobs. Who may change one: its owner for a personal job; any
member with the write scope for a shared one; an organisation admin for every job. What a job
does (its prompt, mode, model and memory) is changed only by its owner, or for a shared job also
by an organisation admin: everyone else may pause, resume and run it (``_may_change_what_it_does``).
A connection limited to personal memories (``brain.core.personal``) makes and changes only personal
jobs that keep what they learn out of shared memory, and the job remembers it: its runs act under
the same limit."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

from django.conf import settings
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from brain.core.actors import Actor
from brain.core.audit import record_audit
from brain.core.errors import InvalidArgument, NotFound, PermissionDenied
from brain.core.inputs import checked_text
from brain.core.personal import PERSONAL, SHARED, is_personal_only, require_may_write
from brain.infra.ids import parse_numeric_id
from jobs import beat
from jobs.grants import checked_grant
from jobs.models import Chat, Job, Message
from jobs.schedule import (
    ScheduleError,
    check_interval,
    describe_cron,
    describe_moment,
    next_run,
    parse_cron,
    parse_moment,
    zone,
)
from jobs.selectors import jobs_seen_by

T = TypeVar("T")
NAME_LIMIT, PROMPT_LIMIT, MODEL_LIMIT = 120, 8000, 100
JOBS_PER_USER = 50  # a user's own jobs, personal and shared


@dataclass(frozen=True)
class Scheduled:
    job: Job
    schedule: str  # the schedule in words, with the next run, for the assistant to read back


def _model(value: str | None) -> str:
    chosen = (value or "auto").strip()
    allowed = ["auto", *([settings.BRAIN_LLM_MODEL] if settings.BRAIN_LLM_URL else [])]
    if chosen not in allowed:
        raise InvalidArgument(f"model must be one of {', '.join(allowed)} on this installation; got {chosen!r}.")
    return chosen


def _memory(value: str | None, scope: str) -> str:
    if value is None:
        return Job.Memory.PERSONAL if scope == Job.Scope.PERSONAL else Job.Memory.ORG
    if value not in Job.Memory.values:
        raise InvalidArgument(f"memory must be one of {', '.join(Job.Memory.values)}; got {value!r}.")
    return value


def _checked(fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)``, its ScheduleError as the refusal a caller can act on."""
    try:
        return fn(*args)
    except ScheduleError as exc:
        raise InvalidArgument(str(exc)) from exc


def words(job: Job) -> str:
    """The schedule in words with the next run ("weekdays at 09:00, Europe/Madrid; next run ...")."""
    if job.kind == Job.Kind.ONCE:
        when = describe_moment(job.at, job.time_zone) if job.at else "no moment"
        return f"once, {when}"
    described = describe_cron(parse_cron(job.cron), job.time_zone)
    upcoming = describe_moment(job.next_run_at, job.time_zone) if job.next_run_at else "none"
    return f"{described}; next run {upcoming}" + ("" if job.enabled else " (paused)")


def _create(
    actor: Actor,
    *,
    name: str,
    prompt: str,
    kind: str,
    time_zone: str,
    scope: str | None,
    mode: str | None,
    model: str | None,
    memory: str | None,
    notify: bool = False,
    write_tools: list[str] | None = None,
    **when: object,
) -> Job:
    if Job.objects.filter(org=actor.org, owner=actor.user).count() >= JOBS_PER_USER:
        raise InvalidArgument(f"You have {JOBS_PER_USER} jobs, the most one person may have; delete one first.")
    chosen_scope = scope or Job.Scope.PERSONAL
    if chosen_scope not in Job.Scope.values:
        raise InvalidArgument(f"scope must be personal or shared; got {chosen_scope!r}.")
    chosen_memory = _memory(memory, chosen_scope)
    _require_personal_if_limited(actor, scope=chosen_scope, memory=chosen_memory)
    chosen_mode = mode or Job.Mode.AGENT
    if chosen_mode not in Job.Mode.values:
        raise InvalidArgument(f"mode must be agent or chat; got {chosen_mode!r}.")
    title = checked_text(name, "name", NAME_LIMIT, required=True)
    instructions = checked_text(prompt, "prompt", PROMPT_LIMIT, required=True)
    granted = checked_grant(actor, write_tools)
    chat = Chat.objects.create(org=actor.org, owner=actor.user, title=title, shared=chosen_scope == Job.Scope.SHARED)
    Message.objects.create(chat=chat, role=Message.Role.PROMPT, text=instructions)
    job = Job.objects.create(
        org=actor.org,
        owner=actor.user,
        name=title,
        prompt=instructions,
        kind=kind,
        time_zone=time_zone,
        scope=chosen_scope,
        mode=chosen_mode,
        model=_model(model),
        memory=chosen_memory,
        chat=chat,
        notify=notify,
        write_tools=granted,
        personal_only=is_personal_only(actor.scopes),
        **when,
    )
    beat.sync(job)
    record_audit(actor=actor, action="job.created", target=job.public_id, details={"name": title, "kind": kind})
    return job


@transaction.atomic
def schedule_once(
    *,
    actor: Actor,
    name: str,
    prompt: str,
    at: str,
    time_zone: str | None = None,
    scope: str | None = None,
    mode: str | None = None,
    model: str | None = None,
    memory: str | None = None,
    notify: bool = False,
    write_tools: list[str] | None = None,
) -> Scheduled:
    tz = _checked(zone, time_zone or "UTC")
    moment = _checked(parse_moment, at, tz, timezone.now())
    job = _create(
        actor,
        name=name,
        prompt=prompt,
        kind=Job.Kind.ONCE,
        time_zone=tz.key,
        scope=scope,
        mode=mode,
        model=model,
        memory=memory,
        notify=notify,
        write_tools=write_tools,
        at=moment,
        next_run_at=moment,
    )
    return Scheduled(job, words(job))


@transaction.atomic
def schedule_job(
    *,
    actor: Actor,
    name: str,
    prompt: str,
    schedule: str,
    time_zone: str | None = None,
    scope: str | None = None,
    mode: str | None = None,
    model: str | None = None,
    memory: str | None = None,
    notify: bool = False,
    write_tools: list[str] | None = None,
) -> Scheduled:
    tz = _checked(zone, time_zone or "UTC")
    cron = _checked(parse_cron, schedule)
    _checked(check_interval, cron, tz)
    job = _create(
        actor,
        name=name,
        prompt=prompt,
        kind=Job.Kind.RECURRING,
        time_zone=tz.key,
        scope=scope,
        mode=mode,
        model=model,
        memory=memory,
        notify=notify,
        write_tools=write_tools,
        cron=cron.expression,
        next_run_at=next_run(cron, tz, timezone.now()),
    )
    return Scheduled(job, words(job))


def visible_jobs(*, actor: Actor) -> QuerySet[Job]:
    """The caller's own jobs and the organisation's shared ones (an admin's view is the same)."""
    return Job.objects.filter(jobs_seen_by(actor.user.pk), org=actor.org)


def list_jobs(*, actor: Actor) -> list[Scheduled]:
    return [Scheduled(job, words(job)) for job in visible_jobs(actor=actor).order_by("next_run_at", "pk")]


def _require_personal_if_limited(actor: Actor, *, scope: str, memory: str) -> None:
    """A shared job, or one whose runs store what they learn in shared memory, writes what others read."""
    require_may_write(actor, scope=PERSONAL if scope == Job.Scope.PERSONAL else SHARED, what="A shared job")
    require_may_write(
        actor,
        scope=SHARED if memory == Job.Memory.ORG else PERSONAL,
        what="A job that stores what it learns in the organisation's memory (memory org)",
    )


def _manageable(actor: Actor, job_id: str) -> Job:
    number = parse_numeric_id(job_id, "job", bare=True)
    jobs = Job.objects.filter(org=actor.org) if actor.is_admin else visible_jobs(actor=actor)
    job = jobs.select_for_update().filter(pk=number).first() if number is not None else None
    if job is None:
        raise NotFound(f"No job {job_id!r} that you can see; list_jobs gives the ids.")
    if job.scope == Job.Scope.PERSONAL and job.owner_id != actor.user.pk and not actor.is_admin:
        raise PermissionDenied("Only its owner changes a personal job.")
    return job


@transaction.atomic
def update_job(
    *,
    actor: Actor,
    job_id: str,
    name: str | None = None,
    prompt: str | None = None,
    schedule: str | None = None,
    time_zone: str | None = None,
    enabled: bool | None = None,
    mode: str | None = None,
    model: str | None = None,
    memory: str | None = None,
    run_now: bool = False,
    delete: bool = False,
    notify: bool | None = None,
    at: str | None = None,
    write_tools: list[str] | None = None,
) -> Scheduled | None:
    """Change a job; None when it was deleted (its chat and past runs stay). ``schedule`` makes it
    recurring and ``at`` a one-off at that moment (in its time zone, the new one when both change)."""
    job = _manageable(actor, job_id)
    if delete and job.scope == Job.Scope.PERSONAL:  # one's own job may end, whatever it did
        _delete(actor, job)
        return None
    what_it_does = (prompt, mode, model, memory, write_tools)
    if any(value is not None for value in what_it_does) and not _may_change_what_it_does(actor, job):
        raise PermissionDenied(
            "Only its owner (or, for a shared job, an organisation admin) changes a job's prompt, mode, model, "
            "memory or write tools: the job runs as its owner. You may pause, resume or run it."
        )
    if schedule is not None and at is not None:
        raise InvalidArgument("Give schedule (a recurring job) or at (a one-off), not both.")
    if run_now and not delete and not (job.enabled if enabled is None else enabled):
        raise InvalidArgument(
            f"{job.public_id} is paused, so it does not run now; resume it (enabled true) first.", paused=True
        )
    _require_personal_if_limited(actor, scope=job.scope, memory=job.memory if memory is None else memory)
    if is_personal_only(actor.scopes):
        job.personal_only = True  # what it does now was said over a limited connection
    if delete:
        _delete(actor, job)
        return None
    if name is not None:
        job.name = checked_text(name, "name", NAME_LIMIT, required=True)
        Chat.objects.filter(pk=job.chat_id).update(title=job.name)  # its runs are listed by their chat's title
    if prompt is not None:
        job.prompt = checked_text(prompt, "prompt", PROMPT_LIMIT, required=True)
        Message.objects.create(chat=job.chat, role=Message.Role.PROMPT, text=job.prompt)
    if mode is not None:
        if mode not in Job.Mode.values:
            raise InvalidArgument(f"mode must be agent or chat; got {mode!r}.")
        job.mode = mode
    if model is not None:
        job.model = _model(model)
    if memory is not None:
        job.memory = _memory(memory, job.scope)
    if time_zone is not None:
        job.time_zone = _checked(zone, time_zone).key
    if schedule is not None:
        cron = _checked(parse_cron, schedule)
        _checked(check_interval, cron, zone(job.time_zone))
        job.kind, job.cron, job.at = Job.Kind.RECURRING, cron.expression, None
    if at is not None:
        job.kind, job.cron, job.at = Job.Kind.ONCE, "", _checked(parse_moment, at, zone(job.time_zone), timezone.now())
    if write_tools is not None:
        job.write_tools = checked_grant(actor, write_tools)
    if notify is not None:
        job.notify = notify
    if enabled is not None:
        job.enabled = enabled
        job.paused_reason = "" if enabled else job.paused_reason
    job.next_run_at = _next(job, timezone.now())
    job.save()
    beat.sync(job)
    if run_now:
        beat.run_now(job, timezone.now())
    record_audit(actor=actor, action="job.updated", target=job.public_id, details={"enabled": job.enabled})
    return Scheduled(job, words(job))


def _may_change_what_it_does(actor: Actor, job: Job) -> bool:
    """A job runs as its owner: what it does is the owner's to say, and for a shared job an admin's."""
    return job.owner_id == actor.user.pk or (job.scope == Job.Scope.SHARED and actor.is_admin)


def _delete(actor: Actor, job: Job) -> None:
    gone = job.public_id
    beat.remove(job)
    job.delete()
    record_audit(actor=actor, action="job.deleted", target=gone)


def _next(job: Job, now: datetime) -> datetime | None:
    if job.kind == Job.Kind.ONCE:  # not run yet (it deletes itself after its run): due, late or not
        return job.at
    return next_run(parse_cron(job.cron), zone(job.time_zone), now)
