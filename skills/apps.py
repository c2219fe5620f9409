from django.apps import AppConfig


class SkillsConfig(AppConfig):
    name = "skills"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from brain.core.needs import WAITING
        from skills.waiting import skills_to_review

        WAITING.plug(skills_to_review)  # versions published for review are work waiting for people
