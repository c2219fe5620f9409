from django.apps import AppConfig
from django.db.models.signals import post_delete, post_save


class RegistersConfig(AppConfig):
    name = "registers"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from brain.models import Features, Organisation
        from memory.mcp_tools.answers import ASK_ADDITIONS, FACT_FLAGS
        from registers.ask import add_to_answer, flag_facts
        from registers.schedule import on_features_saved, on_organisation_deleted, on_organisation_saved

        # The nightly entry follows the switches and the time zone (registers.schedule).
        post_save.connect(on_features_saved, sender=Features, dispatch_uid="registers-features")
        post_save.connect(on_organisation_saved, sender=Organisation, dispatch_uid="registers-organisation")
        post_delete.connect(on_organisation_deleted, sender=Organisation, dispatch_uid="registers-organisation-gone")
        # Definitions and open contradictions join memory's answers (memory.mcp_tools.answers).
        ASK_ADDITIONS.plug(add_to_answer)
        FACT_FLAGS.plug(flag_facts)
        # Open contradictions and proposed terms are work waiting for people (brain.core.needs).
        from brain.core.needs import WAITING
        from registers.waiting import contradictions_to_answer, terms_to_accept

        WAITING.plug(contradictions_to_answer)
        WAITING.plug(terms_to_accept)
