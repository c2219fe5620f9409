from celery import shared_task

from brain.oauth.connections import purge_unused
from brain.services import purge_expired_reports


@shared_task
def purge_expired_reports_task() -> int:
    return purge_expired_reports()


@shared_task
def purge_unused_oauth_task() -> int:
    return purge_unused()
