from datetime import timedelta

from celery import shared_task

from brain.core.audit import purge_expired_audit
from brain.core.backups import back_up_on_schedule
from brain.core.services import purge_expired_reports
from brain.infra.queueing import send_pending
from brain.oauth.connections import purge_unused


@shared_task
def purge_expired_reports_task() -> int:
    return purge_expired_reports()


@shared_task
def purge_expired_audit_task() -> int:
    """Nightly: delete audit records past their organisation's period (Organisation.audit_days)."""
    return purge_expired_audit()


@shared_task
def purge_unused_oauth_task() -> int:
    return purge_unused()


@shared_task
def send_outbox_task(settled_seconds: float | None = None) -> int:
    """Beat, every BRAIN_OUTBOX_SWEEP_SECONDS, and each worker as it connects: the messages the broker
    could not take when their save committed."""
    return send_pending() if settled_seconds is None else send_pending(settled=timedelta(seconds=settled_seconds))


@shared_task
def back_up_task() -> str | None:
    """Beat, nightly when BRAIN_BACKUP_DIR is set: one archive there, the newest BRAIN_BACKUP_KEEP kept."""
    made = back_up_on_schedule()
    return str(made.path) if made else None
