from celery import shared_task
from django.utils import timezone

from jobs.models import Job
from jobs.runs import start, tick


@shared_task(acks_late=True)
def tick_task(job_id: int) -> str:
    """Beat's wake-up for a job: runs its due moment once, whoever else asks for it."""
    return "ran" if tick(job_id) is not None else "nothing due"


@shared_task(acks_late=True)
def run_now_task(job_id: int) -> str:
    """A run at this minute, on top of the schedule (two asks in one minute make one run)."""
    job = Job.objects.filter(pk=job_id, enabled=True).first()
    if job is None:
        return "no job running"  # deleted, or paused since it was asked for
    return "ran" if start(job, timezone.now().replace(second=0, microsecond=0)) is not None else "already ran"
