from typing import Any

from django.apps import AppConfig
from django.db.models.signals import post_delete


def _forget_beat_entry(sender: type, instance: Any, **kwargs: Any) -> None:
    from jobs.beat import remove

    remove(instance)


class JobsConfig(AppConfig):
    name = "jobs"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from jobs.models import Job

        # A job deleted with its organisation (brain.portability.leaving) takes its beat entry along.
        post_delete.connect(_forget_beat_entry, sender=Job, dispatch_uid="jobs-beat-entry")
