"""Admin of the core models. The rules every organisation-scoped admin follows are in
``brain.admin_base``; operators (superusers) see everything, organisation admins their own."""

from __future__ import annotations

from typing import Any

import django_celery_beat.admin  # noqa: F401 (registers beat's admins before they are wrapped below)
from django.contrib import admin, messages
from django.contrib.auth.admin import GroupAdmin
from django.contrib.auth.models import Group
from django.db.models import QuerySet
from django.http import HttpRequest
from django_celery_beat.models import ClockedSchedule, CrontabSchedule, IntervalSchedule, PeriodicTask, SolarSchedule

from brain import services
from brain.admin_base import OrgScopedAdmin, admin_actor, admin_org_ids, for_operators_only, staff_user
from brain.audit import record_audit
from brain.models import (
    Activity,
    ApiToken,
    AuditRecord,
    Category,
    Features,
    Membership,
    Organisation,
    OrganisationGroup,
    Report,
    ToolCall,
)

__all__ = ["OrgScopedAdmin", "admin_actor", "admin_org_ids"]

admin.site.site_header = "Brain"
admin.site.site_title = "Brain admin"
admin.site.index_title = "Brain administration"

# Beat's schedule rows are how Brain runs its nightly work and the jobs: an operator's to touch.
for_operators_only(PeriodicTask, IntervalSchedule, CrontabSchedule, SolarSchedule, ClockedSchedule)


class FeaturesInline(admin.StackedInline):
    model = Features
    can_delete = False


@admin.register(Organisation)
class OrganisationAdmin(OrgScopedAdmin):
    org_field = "pk"
    list_display = ["name", "slug", "language", "memory_built_at", "created_at"]
    search_fields = ["name", "slug"]
    # Built and paused change through the actions, which run the services (resuming queues work);
    # the embedder only through `manage.py reembed --to`, which moves the vectors with it.
    readonly_fields = ["memory_built_at", "ingestion_paused_at", "embedder", "embedder_next", "created_at"]
    inlines = [FeaturesInline]
    actions = ["mark_memory_built"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        qs = admin.ModelAdmin.get_queryset(self, request)
        return qs if request.user.is_superuser else qs.filter(pk__in=admin_org_ids(request))

    def has_add_permission(self, request: HttpRequest) -> bool:
        return bool(request.user.is_superuser)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return bool(request.user.is_superuser)

    @admin.action(description="Mark the memory as built (init stops showing the collecting notice)")
    def mark_memory_built(self, request: HttpRequest, queryset: QuerySet[Organisation]) -> None:
        for org in queryset:
            services.mark_memory_built(org=org)
        self.message_user(request, f"{queryset.count()} organisation(s) marked as built.", messages.SUCCESS)


@admin.register(Membership)
class MembershipAdmin(OrgScopedAdmin):
    list_display = ["user", "org", "role", "created_at"]
    list_filter = ["role"]
    search_fields = ["user__username", "user__email"]
    # The membership is what makes the user a member; the choices are still the admin's users.
    any_org_fields = ("user",)

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        fields = super().get_readonly_fields(request, obj)
        return [*fields, "user", "created_at"] if obj is not None else fields


@admin.register(ApiToken)
class ApiTokenAdmin(OrgScopedAdmin):
    """Tokens are issued on the Connect page or by create_token; here they are read and revoked."""

    list_display = ["__str__", "user", "org", "scopes", "created_at", "expires_at", "revoked_at", "last_used_at"]
    list_filter = ["revoked_at"]
    # Only the label is edited: moving a token to another user, widening it or un-revoking it
    # would hand someone else's access to whoever holds the token.
    readonly_fields = ["org", "user", "prefix", "hashed", "scopes", "created_at", "expires_at", "revoked_at",
                       "last_used_at"]  # fmt: skip
    search_fields = ["name", "prefix", "user__username"]
    actions = ["revoke"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # the plaintext is shown once, where the token is issued

    @admin.action(description="Revoke the selected tokens")
    def revoke(self, request: HttpRequest, queryset: QuerySet[ApiToken]) -> None:
        # The admin revokes as themselves: the token's user may have left the organisation.
        for token in queryset.select_related("org"):
            services.revoke_token(actor=admin_actor(request, token.org), token_id=token.pk)
        self.message_user(request, f"{queryset.count()} token(s) revoked.", messages.SUCCESS)


@admin.register(Category)
class CategoryAdmin(OrgScopedAdmin):
    list_display = ["slug", "name", "org", "restricted"]
    filter_horizontal = ["groups"]


class OrganisationGroupInline(admin.StackedInline):
    model = OrganisationGroup
    can_delete = True
    verbose_name = verbose_name_plural = "organisation"


admin.site.unregister(Group)


@admin.register(Group)
class BrainGroupAdmin(GroupAdmin):
    """Operators tie each group to the organisation whose categories may use it."""

    inlines = [OrganisationGroupInline]

    def save_related(self, request: HttpRequest, form: Any, formsets: Any, change: bool) -> None:
        super().save_related(request, form, formsets, change)
        link = OrganisationGroup.objects.filter(group=form.instance).select_related("org").first()
        if link is not None and (form.changed_data or any(f.has_changed() for f in formsets)):
            record_audit(
                actor=staff_user(request), org=link.org, action="group.changed", target=f"group {form.instance.pk}",
                details={"name": form.instance.name, "fields": sorted(form.changed_data)},
            )  # fmt: skip


@admin.register(Activity)
class ActivityAdmin(OrgScopedAdmin):
    list_display = ["public_id", "org", "user", "label", "created_at"]
    readonly_fields = [f.name for f in Activity._meta.fields]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return bool(request.user.is_superuser)


@admin.register(ToolCall)
class ToolCallAdmin(OrgScopedAdmin):
    list_display = ["tool", "via", "org", "user", "outcome", "error_code", "duration_ms", "credits", "started_at"]
    list_filter = ["via", "outcome", "tool"]
    date_hierarchy = "started_at"

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return bool(request.user.is_superuser)  # usage and billing history


@admin.register(AuditRecord)
class AuditRecordAdmin(OrgScopedAdmin):
    """The audit trail: read-only; an organisation admin sees their organisations' records."""

    list_display = ["created_at", "org", "who", "via", "action", "target"]
    list_filter = ["via", "action"]
    search_fields = ["who", "action", "target"]
    date_hierarchy = "created_at"
    fields = readonly_fields = ("created_at", "org", "who", "user", "via", "token", "action", "target", "details")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Report)
class ReportAdmin(admin.ModelAdmin):
    """Issue reports and feedback are for the operators who run Brain, not for organisation admins."""

    list_display = ["kind", "category", "org", "user", "tool_name", "blocked", "created_at", "expires_at"]
    list_filter = ["kind", "category", "origin", "blocked"]
    search_fields = ["observed", "expected", "summary"]

    def has_module_permission(self, request: HttpRequest) -> bool:
        return bool(request.user.is_superuser)

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return bool(request.user.is_superuser)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False
