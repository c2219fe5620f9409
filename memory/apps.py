from django.apps import AppConfig


class MemoryConfig(AppConfig):
    name = "memory"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from brain.mcp.meter import PAYABLE_AGAIN
        from memory import health  # noqa: F401  (registers the model's health check)
        from memory.documents.ingestion import READY, queue_waiting_documents
        from memory.graph.learning import extract_ready

        READY.plug(extract_ready)  # a ready document's facts are learnt next
        # Documents that waited for credits are queued once the organisation may pay again.
        PAYABLE_AGAIN.plug(lambda org: queue_waiting_documents(org=org))
        from brain.core.needs import WAITING, WAITING_FOR
        from memory.documents.selectors import documents_that_failed
        from memory.documents.stewardship import stale_for_steward

        WAITING.plug(documents_that_failed)  # failed documents are work waiting for people
        WAITING_FOR.plug(stale_for_steward)  # documents past their review day wait for their steward
