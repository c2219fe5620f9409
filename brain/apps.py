from django.apps import AppConfig
from django.utils.module_loading import autodiscover_modules


class BrainConfig(AppConfig):
    name = "brain"
    verbose_name = "Brain"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Every app's mcp_tools.py registers its tools; REST and MCP both read that registry.
        autodiscover_modules("mcp_tools")
