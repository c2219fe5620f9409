"""Admin of jobs and their runs: to see what runs when and how it went. Jobs are made and changed
by their owners through the tools (which keep beat in step), so the admin only pauses them. While
an organisation's jobs switch is off its jobs stay listed here, with a note that they wait.

A run's report is read by whoever its run read for (``Run.audience``): a shared job's run read
only what every member may, so the organisation's admins see it; any other run (a personal
job's, or one recorded before runs were narrowed) is its owner's alone, operators included."""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse

from brain.admin import OrgScopedAdmin, admin_actor
from brain.core.errors import DomainError
from brain.models import Organisation
from jobs.models import Job, Run
from jobs.selectors import jobs_seen_by, runs_read_by
from jobs.services import update_job


@admin.register(Job)
class JobAdmin(OrgScopedAdmin):
    list_display = ["name", "owner", "kind", "cron", "time_zone", "scope", "enabled", "next_run_at", "last_status"]
    list_filter = ["kind", "scope", "enabled", "last_status", "mode"]
    search_fields = ["name", "prompt"]
    readonly_fields = [f.name for f in Job._meta.fields if f.name != "id"]
    actions = ["pause"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Job]:
        # A personal job's prompt is its owner's: admins, operators too, see what a member sees.
        return super().get_queryset(request).filter(jobs_seen_by(request.user.pk))

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def changelist_view(self, request: HttpRequest, extra_context: dict[str, Any] | None = None) -> HttpResponse:
        listed = self.get_queryset(request).values("org_id")
        for org in Organisation.objects.filter(pk__in=listed).exclude(features__jobs=True).order_by("name"):
            self.message_user(
                request,
                f"Jobs are switched off for {org.name}: none of its jobs runs, and what is "
                "due waits here until the switch is on again (Features).",
                messages.WARNING,
            )
        return super().changelist_view(request, extra_context)

    @admin.action(description="Pause the selected jobs")
    def pause(self, request: HttpRequest, queryset: QuerySet[Job]) -> None:
        for job in queryset.select_related("org"):
            try:
                update_job(actor=admin_actor(request, job.org), job_id=job.public_id, enabled=False)
            except DomainError as exc:
                self.message_user(request, f"{job}: {exc.message}", messages.WARNING)


@admin.register(Run)
class RunAdmin(OrgScopedAdmin):
    org_field = "chat__org"
    list_display = ["chat", "scheduled_for", "status", "started_at", "finished_at"]
    list_filter = ["status"]
    search_fields = ["report", "error"]
    readonly_fields = [f.name for f in Run._meta.fields if f.name != "id"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Run]:
        return super().get_queryset(request).filter(runs_read_by(request.user.pk))

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False
