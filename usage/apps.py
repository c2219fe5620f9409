from django.apps import AppConfig


class UsageConfig(AppConfig):
    name = "usage"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from brain.core.services import MISSED, ORGANISATION_MADE
        from usage.metering import plug_in
        from usage.misses import record_miss
        from usage.models import open_account

        plug_in()  # every metered call is charged to its organisation's account
        ORGANISATION_MADE.plug(open_account)  # every new organisation has an account
        MISSED.plug(record_miss)  # questions that found nothing, for the overview page
