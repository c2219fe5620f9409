from celery import shared_task

from jobs.runs import run_queued, sweep, tick


@shared_task(acks_late=True)
def tick_task(job_id: int) -> str:
    """Beat's wake-up for a job: runs its due moment once, whoever else asks for it."""
    return "ran" if tick(job_id) is not None else "nothing due"


@shared_task(acks_late=True)
def run_task(run_id: int) -> str:
    """A run asked for by hand, saved queued: runs once, however often its message comes."""
    return "ran" if run_queued(run_id) is not None else "nothing to run"


@shared_task
def sweep_jobs_task(grace_seconds: int | None = None) -> int:
    """Beat's sweep: sends again the queued runs and due jobs whose message was lost or that waited."""
    return sweep(grace_seconds=grace_seconds)
