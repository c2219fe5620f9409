"""Reading past runs: their chats outlive their jobs, so a one-off's report (or any deleted job's)
stays findable by the people who could read it.

Runs and chats are kept for as long as the organisation and the chat's owner are: no purge
removes them.
"""

from __future__ import annotations

from django.db.models import Q, QuerySet

from brain.core.actors import Actor
from jobs.models import Chat, Job, Run

RUNS_LISTED = 10  # in list_jobs by default; the tool takes up to RUNS_MOST
RUNS_MOST = 50


# Who sees which job, chat and run, written once for the tools, the pages and the admin.


def jobs_seen_by(user_id: int | None) -> Q:
    """Jobs a member sees: their own and the organisation's shared ones (an admin's view is the same)."""
    return Q(owner_id=user_id) | Q(scope=Job.Scope.SHARED)


def chats_read_by(user_id: int | None) -> Q:
    """Chats a member may read: their own and the shared ones, whether or not the job is still there."""
    return Q(owner_id=user_id) | Q(shared=True)


def runs_read_by(user_id: int | None) -> Q:
    """Runs whose reports a member may read: their own chat's, or a shared chat's run that read only
    what every member may (``Run.audience``; a run read with its owner's reach, a personal job's or
    one from before runs were narrowed, is its owner's alone)."""
    return Q(chat__owner_id=user_id) | Q(chat__shared=True, audience=Run.Audience.MEMBERS)


def readable_chats(*, actor: Actor) -> QuerySet[Chat]:
    """The chats of the caller's organisation they may read (``chats_read_by``)."""
    return Chat.objects.filter(chats_read_by(actor.user.pk), org=actor.org)


def readable_runs(*, actor: Actor) -> QuerySet[Run]:
    """The runs of the caller's organisation whose reports they may read (``runs_read_by``)."""
    return Run.objects.filter(runs_read_by(actor.user.pk), chat__org=actor.org)


def list_runs(*, actor: Actor, limit: int = RUNS_LISTED) -> list[Run]:
    """The latest runs the caller may read, newest first, deleted jobs' included (their job is None)."""
    runs = readable_runs(actor=actor).select_related("chat", "job")
    return list(runs.order_by("-scheduled_for", "-pk")[:limit])


def runs_under_way(*, job_ids: list[int]) -> dict[int, Run]:
    """The newest queued or running run of each of these jobs, by job: what its row on the Jobs page
    says until the run ends (the job's own last run is written only then)."""
    busy = Run.objects.filter(job_id__in=job_ids, status__in=[Run.Status.QUEUED, Run.Status.RUNNING])
    found: dict[int, Run] = {}
    for run in busy.order_by("-started_at", "-pk"):
        if run.job_id is not None:
            found.setdefault(run.job_id, run)
    return found
