"""A job's entry in django-celery-beat: a crontab in the job's time zone, or a clocked one-off.

Beat only wakes a job up (``jobs.tasks.tick_task`` on the ``jobs`` queue); which moment is due,
and whether it already ran, is decided by ``jobs.runs``, so a second beat or a redelivered tick
never runs a moment twice.
"""

from __future__ import annotations

from datetime import datetime

from django_celery_beat.models import ClockedSchedule, CrontabSchedule, PeriodicTask

from brain.infra.queueing import send_on_commit
from jobs.models import Job, Run


def task_name(job: Job) -> str:
    return f"job {job.pk}"


def sync(job: Job) -> None:
    """Create or change the job's beat entry to match it (enabled, schedule, time zone)."""
    defaults: dict[str, object] = {
        "task": "jobs.tasks.tick_task",
        "args": f"[{job.pk}]",
        "queue": "jobs",
        "enabled": job.enabled and job.next_run_at is not None,
    }
    if job.kind == Job.Kind.ONCE:
        if job.at is None:
            raise ValueError(f"one-off job {job.pk} has no moment")
        clocked, _ = ClockedSchedule.objects.get_or_create(clocked_time=job.at)
        defaults.update(clocked=clocked, crontab=None, one_off=True)
    else:
        minute, hour, day, month, weekday = job.cron.split()
        crontab, _ = CrontabSchedule.objects.get_or_create(
            minute=minute,
            hour=hour,
            day_of_month=day,
            month_of_year=month,
            day_of_week=weekday,
            timezone=job.time_zone,
        )
        defaults.update(crontab=crontab, clocked=None, one_off=False)
    PeriodicTask.objects.update_or_create(name=task_name(job), defaults=defaults)


def remove(job: Job) -> None:
    PeriodicTask.objects.filter(name=task_name(job)).delete()


def run_now(job: Job, now: datetime) -> Run:
    """A run within the next minute, on top of the schedule: saved queued, its message sent once
    the change commits (a broker outage leaves it queued for the jobs sweep); two asks in one
    minute make one run."""
    moment = now.replace(second=0, microsecond=0)
    run, made = Run.objects.get_or_create(
        job=job, scheduled_for=moment, defaults={"chat": job.chat, "status": Run.Status.QUEUED}
    )
    if made:
        send_on_commit("jobs.tasks.run_task", run.pk, what="job run")
    return run
