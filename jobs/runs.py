"""Running a job: which moment is due, one run per moment, and the run itself as its owner.

A tick from beat (or a redelivered one) asks for the job's latest scheduled moment within the
grace window before now; the run row is unique per job and moment, so whoever creates it runs
it and every other ask for that moment does nothing. After downtime the latest missed moment
inside the window runs once; older ones are not made up.

A run acts as the owner with the owner's access at run time, through the same ``execute`` path
as MCP (access rules, limits, call records), under an activity of its own. Without a language
model configured, a run is an evidence digest: the prompt goes to ``ask_company_memory`` and
``memory_timeline`` since the last run, and the report lists what memory holds and what changed,
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
from django.utils import timezone

from brain.actors import Actor
from brain.mcp.invoke import execute
from brain.mcp.registry import TOOLS
from brain.models import Membership
from brain.services import start_activity
from jobs import agent, beat
from jobs.models import Job, Message, Run
from jobs.schedule import next_run, parse_cron, runs_between, zone
from usage.metering import refuse_unless_payable

logger = logging.getLogger(__name__)
GRACE = timedelta(hours=1)  # a tick missed by more than this (downtime) is not made up
DIGEST_ITEMS = 5


def due_moment(job: Job, now: datetime) -> datetime | None:
    """The job's latest scheduled moment in (now - GRACE, now], if any."""
    if job.kind == Job.Kind.ONCE:
        return job.at if job.at is not None and now - GRACE < job.at <= now else None
    moments = runs_between(parse_cron(job.cron), zone(job.time_zone), now - GRACE, now + timedelta(seconds=1))
    return moments[-1] if moments else None


def tick(job_id: int, now: datetime | None = None) -> Run | None:
    """Run the job's due moment unless it already ran; returns the run this call made."""
    now = now or timezone.now()
    job = Job.objects.filter(pk=job_id, enabled=True).first()
    moment = due_moment(job, now) if job is not None else None
    if job is None or moment is None:
        return None
    return start(job, moment)


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
        run.status, run.error = Run.Status.FAILED, f"{type(exc).__name__}: {exc}"[:1000]
        run.report = f"The run failed and reported nothing: {run.error}"
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
    """Mail the report to the owner (the configured mail); a mail that fails is logged, not retried."""
    if not job.owner.email:
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
    actor = Actor(org=job.org, user=job.owner, scopes=frozenset({"read", "write"}), via="job", role=membership.role)
    run.activity = start_activity(actor=actor, label=f"job {job.name}"[:200])
    run.save(update_fields=["activity"])
    if not agent.configured():
        return digest(actor, job, run)
    runner = agent.agent_run if job.mode == Job.Mode.AGENT else agent.chat_run
    return runner(actor, job, run.activity.public_id)


def _call(actor: Actor, run: Run, tool: str, arguments: dict[str, Any], calls: list[dict[str, Any]]) -> Any:
    outcome = execute(actor, TOOLS[tool], arguments)
    calls.append({"tool": tool, "arguments": arguments, "ok": outcome.output is not None})
    if outcome.output is None:
        raise RuntimeError(f"{tool} answered {outcome.code}: {outcome.message}")
    return outcome.output


def digest(actor: Actor, job: Job, run: Run) -> tuple[str, list[dict[str, Any]]]:
    """What memory holds on the prompt and what changed since the last run, without a model."""
    calls: list[dict[str, Any]] = []
    activity = run.activity.public_id if run.activity else None
    asked = _call(actor, run, "ask_company_memory", {"question": job.prompt[:4000], "activity_id": activity,
                                                     "max_evidence_documents": DIGEST_ITEMS}, calls)  # fmt: skip
    since = (job.last_run_at or (run.scheduled_for - timedelta(days=7))).date()
    changed = _call(actor, run, "memory_timeline", {"from": since.isoformat(), "limit": 40}, calls)
    lines = [
        f"# {job.name}",
        f"Evidence digest for {run.scheduled_for:%Y-%m-%d %H:%M} UTC. No language model wrote this: it lists what "
        "Brain's memory holds on the prompt and what changed since the last run.",
        "",
        "## What memory holds",
    ]
    if not asked.evidence:
        lines.append("Nothing in memory answers the prompt yet.")
    for page in asked.evidence[:DIGEST_ITEMS]:
        excerpt = " ".join(page.excerpt.split())[:300]
        lines.append(f"- **{page.title}** ({page.reference}): {excerpt}")
    for claim in asked.claims[:DIGEST_ITEMS]:
        lines.append(f"- {claim.statement}")
    lines += ["", f"## What changed since {since:%Y-%m-%d}"]
    words = {w.lower() for w in job.prompt.replace("?", " ").split() if len(w) > 3}
    related = [f for f in changed.facts if words & {w.lower().strip(".,") for w in f.statement.split()}]
    shown = related or changed.facts
    if not shown:
        lines.append("No fact was recorded or replaced in that time.")
    for fact in shown[:10]:
        note = " (replaced)" if fact.superseded else ""
        lines.append(f"- {fact.statement}{note}")
    return "\n".join(lines), calls
