from django.apps import AppConfig


class SkillsConfig(AppConfig):
    name = "skills"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from brain.core.needs import WAITING, WAITING_FOR
        from skills.waiting import skills_to_review, stale_skills_for_steward

        WAITING.plug(skills_to_review)  # versions published for review are work waiting for people
        WAITING_FOR.plug(stale_skills_for_steward)  # skills past their review day wait for their steward
