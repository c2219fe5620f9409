"""Running a job: which moment is due, one run per moment, and the run itself as its owner.

A tick from beat (or a redelivered one) asks for the job's latest scheduled moment within the
grace window before now; the run row is unique per job and moment, so whoever creates it runs
it and every other ask for that moment does nothing. After downtime the latest missed moment
of a recurring job inside the window runs once; older ones are not made up. A one-off runs late
rather than never.

Nothing runs while the organisation's jobs switch is off: a tick or a queued run finds it off and
leaves everything as it is, and the jobs sweep (``sweep``, from beat) runs what waits once the
switch is back on. A run asked for by hand is saved queued before its message is sent; the sweep
sends again the message a broker outage lost, and the run is claimed queued -> running, so a
message sent twice runs it once.

A run acts as the owner at run time, through the same ``execute`` path as MCP (access rules,
limits, call records), under an activity of its own, and reads only what every reader of its
report may read (``jobs.grants.run_actor``): a shared job's run what every member may read, a
personal job's run everything its owner may. Without a language
model configured, a run is an evidence digest (``jobs.digest``): whole sentences from the sources
on the prompt, linked, what changed since the last run, and the registers the prompt asks about,
saying that no language model wrote it; with one, ``jobs.agent`` runs the job's agent or chat
mode. Any failure ends the run as failed with a readable report; a run is never left running.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.core.mail import send_mail
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from brain.core.actors import Actor
from brain.core.personal import PERSONAL_ONLY
from brain.core.selectors import feature_on, orgs_with
from brain.core.services import start_activity
from brain.infra.mail import mail_is_set_up
from brain.infra.queueing import send_now
from brain.mcp.meter import refuse_unless_payable
from brain.models import Membership
from jobs import agent, beat
from jobs.digest import digest
from jobs.grants import run_actor
from jobs.models import Job, Message, Run
from jobs.schedule import next_run, parse_cron, runs_between, zone

logger = logging.getLogger(__name__)
GRACE = timedelta(hours=1)  # a tick missed by more than this (downtime) is not made up


def switched_on(org_id: int) -> bool:
    """Whether the organisation's jobs switch is on: checked at run time, by every way a run starts."""
    return feature_on(org_id, "jobs")


def due_moment(job: Job, now: datetime) -> datetime | None:
    """A one-off's moment once it has come (it runs once, then deletes itself); a recurring job's
    latest scheduled moment in (now - GRACE, now], if any."""
    if job.kind == Job.Kind.ONCE:
        return job.at if job.at is not None and job.at <= now else None
    moments = runs_between(parse_cron(job.cron), zone(job.time_zone), now - GRACE, now + timedelta(seconds=1))
    return moments[-1] if moments else None


def tick(job_id: int, now: datetime | None = None) -> Run | None:
    """Run the job's due moment unless it already ran; returns the run this call made. While the
    jobs switch is off nothing changes: the moment waits for the sweep."""
    now = now or timezone.now()
    job = Job.objects.filter(pk=job_id, enabled=True).first()
    if job is None or not switched_on(job.org_id):
        return None
    moment = due_moment(job, now)
    if moment is None:
        _pass_missed(job, now)
        return None
    return start(job, moment)


def _pass_missed(job: Job, now: datetime) -> None:
    """A recurring moment missed by more than the grace window is not made up: the next one is due."""
    if job.kind == Job.Kind.RECURRING and job.next_run_at is not None and job.next_run_at <= now:
        job.next_run_at = next_run(parse_cron(job.cron), zone(job.time_zone), now)
        job.save(update_fields=["next_run_at", "updated_at"])


def run_queued(run_id: int) -> Run | None:
    """Run a run that was asked for by hand and saved queued; None if it is not queued any more
    (another message ran it) or jobs are switched off (it stays queued)."""
    run = Run.objects.filter(pk=run_id, status=Run.Status.QUEUED).select_related("job").first()
    if run is None:
        return None
    if run.job is None:  # deleted before its turn came: say so in its chat
        _not_started(run, "its job was deleted first")
        return None
    if not switched_on(run.job.org_id):
        return None
    if not run.job.enabled:  # paused after it was asked for: a paused job does not run now
        _not_started(run, "its job was paused first")
        return None
    claimed = Run.objects.filter(pk=run_id, status=Run.Status.QUEUED)
    if not claimed.update(status=Run.Status.RUNNING, started_at=timezone.now()):
        return None
    run.refresh_from_db()
    finish(run.job, run)
    return run


def _not_started(run: Run, why: str) -> None:
    """End a queued run that will not start, saying why in its chat (once, whoever ends it)."""
    report = f"This run did not start: {why}."
    ended = Run.objects.filter(pk=run.pk, status=Run.Status.QUEUED)
    if ended.update(status=Run.Status.FAILED, finished_at=timezone.now(), report=report, error=report):
        Message.objects.create(chat_id=run.chat_id, role=Message.Role.REPORT, text=report, run=run)


def sweep(*, grace_seconds: int | None = None, now: datetime | None = None) -> int:
    """Send again what waits, where jobs are switched on: queued runs whose message was lost (the
    broker was away when the run was asked for) and jobs whose moment came while the switch was
    off or beat was away. Safe to run any number of times: every run claims its row first."""
    grace = settings.BRAIN_QUEUED_GRACE_SECONDS if grace_seconds is None else grace_seconds
    cutoff = (now or timezone.now()) - timedelta(seconds=grace)
    on = orgs_with("jobs")
    waiting = Run.objects.filter(status=Run.Status.QUEUED, started_at__lte=cutoff)
    runs = list(waiting.filter(Q(job__isnull=True) | Q(job__org_id__in=on)).values_list("pk", flat=True)[:1000])
    due = Job.objects.filter(enabled=True, org_id__in=on, next_run_at__lte=cutoff)
    jobs = list(due.values_list("pk", flat=True)[:1000])
    for run_id in runs:
        send_now("jobs.tasks.run_task", run_id, what="job run")
    for job_id in jobs:
        send_now("jobs.tasks.tick_task", job_id, what="job")
    return len(runs) + len(jobs)


def start(job: Job, moment: datetime) -> Run | None:
    """Claim the moment (one run per job and moment) and run it; None if it was already claimed."""
    try:
        with transaction.atomic():
            run = Run.objects.create(chat=job.chat, job=job, scheduled_for=moment)
    except IntegrityError:
        return None
    finish(job, run)
    return run


def finish(job: Job, run: Run) -> None:
    try:
        report, calls = perform(job, run)
        run.status, run.report, run.tool_calls = Run.Status.OK, report, calls
    except Exception as exc:  # a model, tool or database failure: the run records it and ends
        logger.exception("job %s run %s failed", job.pk, run.pk)
        run.status, run.error = Run.Status.FAILED, f"{type(exc).__name__}: {exc}"[:1000]  # for the admin
        run.report = f"The run failed and reported nothing: {str(exc)[:1000]}"  # for people: no class name
    run.finished_at = timezone.now()
    run.save()
    Message.objects.create(chat=run.chat, role=Message.Role.REPORT, text=run.report, run=run)
    if job.notify:
        tell_owner(job, run)
    job.last_run_at, job.last_status = run.finished_at, run.status
    if job.kind == Job.Kind.ONCE:
        beat.remove(job)
        job.delete()  # a one-off job deletes itself after its run; its chat stays
        return
    after = max(timezone.now(), run.scheduled_for)  # never the moment that just ran
    job.next_run_at = next_run(parse_cron(job.cron), zone(job.time_zone), after)
    job.save(update_fields=["last_run_at", "last_status", "next_run_at", "updated_at"])


def tell_owner(job: Job, run: Run) -> None:
    """Mail the report to the owner (the configured mail); a mail that fails is logged, not retried.
    Without a mail server nothing is tried: the job's form and chat say the reports are not mailed."""
    if not job.owner.email or not mail_is_set_up():
        return
    try:
        send_mail(f"[Brain] {job.name}: {run.status}", run.report, settings.DEFAULT_FROM_EMAIL, [job.owner.email])
    except Exception:
        logger.warning("could not mail the report of job %s run %s", job.pk, run.pk, exc_info=True)


def perform(job: Job, run: Run) -> tuple[str, list[dict[str, Any]]]:
    """The run's report and the tool calls it made."""
    membership = Membership.objects.filter(org=job.org, user=job.owner).first()
    if membership is None:
        Job.objects.filter(pk=job.pk).update(enabled=False, paused_reason="Its owner is no longer a member.")
        raise RuntimeError("the job's owner is no longer a member of the organisation; the job is paused")
    refuse_unless_payable(job.org, what=f"the job {job.name}")  # out of credits: the run fails, saying so
    scopes = frozenset({"read", "write", *([PERSONAL_ONLY] if job.personal_only else [])})
    owner = Actor(org=job.org, user=job.owner, scopes=scopes, via="job", role=membership.role)
    actor, run.audience = run_actor(job, owner)
    run.activity = start_activity(actor=actor, label=f"job {job.name}"[:200])
    run.save(update_fields=["activity", "audience"])
    if not agent.configured():
        return digest(actor, job, run)
    runner = agent.agent_run if job.mode == Job.Mode.AGENT else agent.chat_run
    return runner(actor, job, run.activity.public_id)
