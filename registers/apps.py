from django.apps import AppConfig


class RegistersConfig(AppConfig):
    name = "registers"
    default_auto_field = "django.db.models.BigAutoField"
