from celery import shared_task

from brain.models import Organisation
from registers.nightly import run_nightly


@shared_task(acks_late=True)
def nightly_task(org_id: int) -> dict[str, int]:
    """The organisation's nightly register work (scheduled per organisation by ``registers.schedule``)."""
    org = Organisation.objects.filter(pk=org_id).first()
    return run_nightly(org) if org is not None else {}
