from django.apps import AppConfig


class ContactsConfig(AppConfig):
    name = "contacts"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from contacts.services import CONTACT_TOPICS
        from memory.maintenance.reembedding import ELSEWHERE

        ELSEWHERE.plug(CONTACT_TOPICS)  # contacts' topics are re-embedded and switched with memory's
        from brain.core.needs import WAITING
        from contacts.waiting import requests_waiting

        WAITING.plug(requests_waiting)  # requests not answered yet are work waiting for people
