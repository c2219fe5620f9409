"""Admin: operators (superusers) see everything; organisation admins see their organisations only."""

from __future__ import annotations

from typing import Any, cast

from django.contrib import admin, messages
from django.contrib.auth.models import User
from django.db.models import QuerySet
from django.http import HttpRequest

from brain import services
from brain.actors import Actor
from brain.models import (
    Activity,
    ApiToken,
    AuditRecord,
    Category,
    Features,
    Membership,
    Organisation,
    Report,
    ToolCall,
)


def admin_org_ids(request: HttpRequest) -> list[int]:
    if not request.user.is_authenticated:
        return []  # the admin's own login page lists apps before anyone is logged in
    return list(Membership.objects.filter(user=request.user, role=Membership.ADMIN).values_list("org_id", flat=True))


def admin_actor(request: HttpRequest, org: Organisation) -> Actor:
    """The actor for an admin action: an operator acts as an admin of any organisation."""
    user = cast(User, request.user)
    if user.is_superuser:
        return Actor(org=org, user=user, scopes=frozenset({"read", "write"}), via="admin", role="admin")
    return services.actor_for_user(org=org, user=user, via="admin")


class OrgScopedAdmin(admin.ModelAdmin):
    """Limits rows, and organisation choices, to the organisations the staff user administers."""

    org_field = "org"

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        qs = super().get_queryset(request)
        if request.user.is_superuser:
            return qs
        return qs.filter(**{f"{self.org_field}__in": admin_org_ids(request)})

    def get_list_filter(self, request: HttpRequest) -> Any:
        # The organisation switcher: operators filter any list by organisation.
        filters = list(super().get_list_filter(request))
        if request.user.is_superuser and self.org_field != "pk":
            return [self.org_field, *filters]
        return filters

    def formfield_for_foreignkey(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        if db_field.name == "org" and not request.user.is_superuser:
            kwargs["queryset"] = Organisation.objects.filter(pk__in=admin_org_ids(request))
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def has_module_permission(self, request: HttpRequest) -> bool:
        return bool(request.user.is_superuser or admin_org_ids(request))

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self.has_module_permission(request)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self.has_module_permission(request)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return self.has_module_permission(request)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self.has_module_permission(request)


class FeaturesInline(admin.StackedInline):
    model = Features
    can_delete = False


@admin.register(Organisation)
class OrganisationAdmin(OrgScopedAdmin):
    org_field = "pk"
    list_display = ["name", "slug", "language", "memory_built_at", "created_at"]
    search_fields = ["name", "slug"]
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


@admin.register(ApiToken)
class ApiTokenAdmin(OrgScopedAdmin):
    list_display = ["__str__", "user", "org", "scopes", "created_at", "expires_at", "revoked_at", "last_used_at"]
    list_filter = ["revoked_at"]
    readonly_fields = ["prefix", "hashed", "last_used_at", "created_at"]
    search_fields = ["name", "prefix", "user__username"]
    actions = ["revoke"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # tokens are issued on the Connect page or by create_token, so the plaintext is shown once

    @admin.action(description="Revoke the selected tokens")
    def revoke(self, request: HttpRequest, queryset: QuerySet[ApiToken]) -> None:
        for token in queryset:
            actor = services.actor_for_user(org=token.org, user=token.user, via="admin")
            services.revoke_token(actor=actor, token_id=token.pk)
        self.message_user(request, f"{queryset.count()} token(s) revoked.", messages.SUCCESS)


@admin.register(Category)
class CategoryAdmin(OrgScopedAdmin):
    list_display = ["slug", "name", "org", "restricted"]
    filter_horizontal = ["groups"]


@admin.register(Activity)
class ActivityAdmin(OrgScopedAdmin):
    list_display = ["public_id", "org", "user", "label", "created_at"]
    readonly_fields = [f.name for f in Activity._meta.fields]


@admin.register(ToolCall)
class ToolCallAdmin(OrgScopedAdmin):
    list_display = ["tool", "via", "org", "user", "outcome", "error_code", "duration_ms", "credits", "started_at"]
    list_filter = ["via", "outcome", "tool"]
    date_hierarchy = "started_at"

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False


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
