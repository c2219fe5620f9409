from django.apps import AppConfig
from django.utils.module_loading import autodiscover_modules


class BrainConfig(AppConfig):
    name = "brain"
    verbose_name = "Brain"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Every app's mcp_tools.py registers its tools; REST and MCP both read that registry.
        autodiscover_modules("mcp_tools")
        from django.contrib.auth import signals

        from brain.faces import sign_ins

        signals.user_logged_in.connect(sign_ins.on_logged_in, dispatch_uid="brain-audit-signed-in")
        signals.user_logged_out.connect(sign_ins.on_logged_out, dispatch_uid="brain-audit-signed-out")
        signals.user_login_failed.connect(sign_ins.on_login_failed, dispatch_uid="brain-audit-sign-in-failed")
