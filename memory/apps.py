from django.apps import AppConfig


class MemoryConfig(AppConfig):
    name = "memory"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from memory import health  # noqa: F401  (registers the model's health check)
        from memory.documents.ingestion import READY
        from memory.graph.extracting import extract_ready

        READY.plug(extract_ready)  # a ready document's facts are learnt next
