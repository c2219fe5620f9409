"""Reading past runs: their chats outlive their jobs, so a one-off's report (or any deleted job's)
stays findable by the people who could read it.

Runs and chats are kept for as long as the organisation and the chat's owner are: no purge
removes them.
"""

from __future__ import annotations

from django.db.models import Q, QuerySet

from brain.actors import Actor
from jobs.models import Chat, Run

RUNS_LISTED = 10  # in list_jobs by default; the tool takes up to RUNS_MOST
RUNS_MOST = 50


def readable_chats(*, actor: Actor) -> QuerySet[Chat]:
    """The chats the caller may read: their own and the organisation's shared ones, whether or not
    the job is still there."""
    return Chat.objects.filter(org=actor.org).filter(Q(owner=actor.user) | Q(shared=True))


def readable_runs(*, actor: Actor) -> QuerySet[Run]:
    """The runs whose reports the caller may read: in a chat they may read, and either theirs or
    read only what every member may (``Run.audience``; a run read with its owner's reach, a
    personal job's or one from before runs were narrowed, is its owner's alone)."""
    audience = Q(chat__owner=actor.user) | Q(audience=Run.Audience.MEMBERS)
    return Run.objects.filter(audience, chat__in=readable_chats(actor=actor))


def list_runs(*, actor: Actor, limit: int = RUNS_LISTED) -> list[Run]:
    """The latest runs the caller may read, newest first, deleted jobs' included (their job is None)."""
    runs = readable_runs(actor=actor).select_related("chat", "job")
    return list(runs.order_by("-scheduled_for", "-pk")[:limit])
