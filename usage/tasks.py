from celery import shared_task

from usage.misses import purge_old_misses


@shared_task
def purge_old_misses_task() -> int:
    return purge_old_misses()
