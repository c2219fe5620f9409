"""Each organisation's nightly register run, as a django-celery-beat entry in its time zone.

The entry exists while any register is on and follows the organisation's time zone; beat sends
it to the ``nightly`` queue. ``sync_schedule`` is called whenever the switches or the time zone
change (``registers.apps``).
"""

from __future__ import annotations

from typing import Any

from django_celery_beat.models import CrontabSchedule, PeriodicTask

from brain.models import Organisation
from registers.common import switched_on

NIGHTLY_AT = (2, 30)  # local hour and minute: after the day's work, before the next one


def task_name(org: Organisation) -> str:
    return f"registers nightly for organisation {org.pk}"


def sync_schedule(org: Organisation) -> PeriodicTask | None:
    """Create, move or remove the organisation's nightly entry to match its switches and time zone."""
    name = task_name(org)
    if not switched_on(org):
        PeriodicTask.objects.filter(name=name).delete()
        return None
    hour, minute = NIGHTLY_AT
    crontab, _ = CrontabSchedule.objects.get_or_create(
        minute=str(minute),
        hour=str(hour),
        day_of_week="*",
        day_of_month="*",
        month_of_year="*",
        timezone=org.time_zone,
    )
    task, _ = PeriodicTask.objects.update_or_create(
        name=name,
        defaults={
            "task": "registers.tasks.nightly_task",
            "crontab": crontab,
            "args": f"[{org.pk}]",
            "queue": "nightly",
            "enabled": True,
        },
    )
    return task


def on_features_saved(sender: type, instance: Any, **kwargs: Any) -> None:
    sync_schedule(instance.org)


def on_organisation_deleted(sender: type, instance: Any, **kwargs: Any) -> None:
    PeriodicTask.objects.filter(name=task_name(instance)).delete()


def on_organisation_saved(sender: type, instance: Any, created: bool, **kwargs: Any) -> None:
    if not created:  # a new organisation has no switch on yet
        sync_schedule(instance)
