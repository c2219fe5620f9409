from django.apps import AppConfig


class ConnectorsConfig(AppConfig):
    name = "connectors"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from connectors import github, imap, sentry, slack  # noqa: F401 (each registers its kind)
