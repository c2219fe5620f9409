"""Admin: the review queue for skill versions. Every decision goes through skills.services.

Content is read-only here: a skill changes only by publishing a new version, which arrives
pending and is approved or rejected from this queue.
"""

from __future__ import annotations

from typing import Any, cast

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.utils import unquote
from django.db.models import Case, Count, Q, QuerySet, Value, When
from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.urls.resolvers import URLPattern

from brain.admin import OrgScopedAdmin, ReadOnlyInline, admin_actor
from brain.core.errors import DomainError
from brain.faces.markdown import render_markdown
from brain.infra.mail import unmailed
from skills import services
from skills.diff import content_diff, field_changes
from skills.models import Skill, SkillVersion

Status = SkillVersion.Status
VERSION_FIELDS = ("skill", "version", "name", "status", "description", "tags", "categories", "content", "assets",
                  "scripts", "metadata", "submitted_by", "submitted_at", "reviewed_by", "reviewed_at",
                  "review_note")  # fmt: skip
# Pending versions first; Django takes expressions in ``ordering`` although the stubs list only strings.
PENDING_FIRST = cast(str, Case(When(status=Status.PENDING, then=Value(0)), default=Value(1)).asc())


class RejectForm(forms.Form):
    reason = forms.CharField(
        label="Reason for the author",
        max_length=services.REASON_MAX,
        widget=forms.Textarea(attrs={"rows": 6, "cols": 80}),
        help_text="Emailed to the author. Say what should change for a next version to be approved.",
    )


class ReviewMixin:
    """Who may decide on skills: the operators and the organisation admins who see the queue."""

    def has_review_permission(self, request: HttpRequest) -> bool:
        return bool(self.has_module_permission(request))  # type: ignore[attr-defined]


@admin.register(SkillVersion)
class SkillVersionAdmin(ReviewMixin, OrgScopedAdmin):
    org_field = "skill__org"
    list_display = ["skill", "version", "name", "status", "in_use", "submitted_by", "submitted_at", "reviewed_by"]
    list_filter = ["status"]
    list_select_related = ["skill", "submitted_by", "reviewed_by"]
    search_fields = ["skill__slug", "name"]
    # The queue first: pending versions, newest submissions on top.
    ordering = [PENDING_FIRST, "-submitted_at"]
    fields = VERSION_FIELDS
    readonly_fields = VERSION_FIELDS
    actions = ["approve_selected", "reject_selected", "archive_selected_skills"]

    def get_list_filter(self, request: HttpRequest) -> list[Any]:
        return ["status", "skill__org"] if request.user.is_superuser else ["status"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # versions come from skills_publish, which keeps every rule

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # no field is edited by hand; decisions are the actions below

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # the history of versions stays; archive a skill to take it out of use

    @admin.display(boolean=True, description="In use")
    def in_use(self, version: SkillVersion) -> bool:
        return version.is_current

    # --- the change page: the comparison and the decision buttons --------------------------

    def change_view(
        self, request: HttpRequest, object_id: str, form_url: str = "", extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        version = self.get_object(request, unquote(object_id))
        if version is not None:
            extra_context = {**(extra_context or {}), "review": self._review_context(request, version)}
        return super().change_view(request, object_id, form_url, extra_context)

    def _review_context(self, request: HttpRequest, version: SkillVersion) -> dict[str, Any]:
        in_use = version.skill.current_version
        return {
            "is_current": version.is_current,
            "in_use": in_use,
            "fields": None if version.is_current else field_changes(version, in_use),
            "diff": None if version.is_current else content_diff(version, in_use),
            "preview": render_markdown(version.content),
            "can_decide": version.status == Status.PENDING and self.has_review_permission(request),
            "can_archive": version.skill.archived_at is None and self.has_review_permission(request),
            "approve_url": self._url("approve", version.pk),
            "reject_url": self._url("reject", version.pk),
            "archive_url": self._url("archive_skill", version.pk),
        }

    def _url(self, name: str, pk: int) -> str:
        return reverse(f"admin:skills_skillversion_{name}", args=[pk], current_app=self.admin_site.name)

    def get_urls(self) -> list[URLPattern]:
        wrap = self.admin_site.admin_view
        custom = [
            path("<path:object_id>/approve/", wrap(self.approve_view), name="skills_skillversion_approve"),
            path("<path:object_id>/reject/", wrap(self.reject_view), name="skills_skillversion_reject"),
            path("<path:object_id>/archive-skill/", wrap(self.archive_view), name="skills_skillversion_archive_skill"),
        ]
        return custom + super().get_urls()  # before the defaults, whose "<id>/" pattern would catch these

    def _reviewable(self, request: HttpRequest, object_id: str) -> SkillVersion | None:
        if not self.has_review_permission(request):
            return None
        return self.get_object(request, unquote(object_id))

    def _missing(self, request: HttpRequest) -> HttpResponseRedirect:
        self.message_user(request, "That skill version does not exist, or you cannot review it.", messages.WARNING)
        return HttpResponseRedirect(reverse("admin:skills_skillversion_changelist"))

    def _back_to(self, version: SkillVersion) -> HttpResponseRedirect:
        return HttpResponseRedirect(reverse("admin:skills_skillversion_change", args=[version.pk]))

    def approve_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        version = self._reviewable(request, object_id)
        if version is None:
            return self._missing(request)
        if self._approve(request, version):
            said = f"{version} approved: it is now the version in use.{unmailed('its author')}"
            self.message_user(request, said, messages.SUCCESS)
        return self._back_to(version)

    def reject_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        version = self._reviewable(request, object_id)
        if version is None:
            return self._missing(request)
        form = RejectForm(request.POST if request.method == "POST" else None)
        if form.is_valid():
            if self._reject(request, version, form.cleaned_data["reason"]):
                said = f"{version} rejected; the version in use is unchanged.{unmailed('its author')}"
                self.message_user(request, said, messages.SUCCESS)
            return self._back_to(version)
        return self._reject_page(request, [version], form, action_url=self._url("reject", version.pk))

    def archive_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        version = self._reviewable(request, object_id)
        if version is None:
            return self._missing(request)
        if request.method != "POST" or request.POST.get("post") != "yes":
            back = reverse("admin:skills_skillversion_change", args=[version.pk])
            return _archive_page(
                self, request, [version.skill], action_url=self._url("archive_skill", version.pk), cancel_url=back
            )
        if _archive(self, request, version.skill):
            self.message_user(request, f"Skill {version.skill} archived: nobody can use it now.", messages.SUCCESS)
        return self._back_to(version)

    # --- the changelist actions -------------------------------------------------------------

    @admin.action(description="Approve", permissions=["review"])
    def approve_selected(self, request: HttpRequest, queryset: QuerySet[SkillVersion]) -> None:
        # Oldest first, so when two versions of one skill are approved together the newer ends up in use.
        done = sum(self._approve(request, v) for v in queryset.select_related("skill__org").order_by("submitted_at"))
        if done:
            self.message_user(
                request, f"{done} version(s) approved and now in use.{unmailed('their authors')}", messages.SUCCESS
            )

    @admin.action(description="Reject (with a reason)", permissions=["review"])
    def reject_selected(self, request: HttpRequest, queryset: QuerySet[SkillVersion]) -> HttpResponse | None:
        versions = list(queryset.select_related("skill__org"))
        form = RejectForm(request.POST if request.POST.get("post") == "yes" else None)
        if not form.is_valid():
            changelist = reverse("admin:skills_skillversion_changelist")
            return self._reject_page(request, versions, form, action_url=changelist, bulk=True)
        done = sum(self._reject(request, v, form.cleaned_data["reason"]) for v in versions)
        if done:
            self.message_user(request, f"{done} version(s) rejected.{unmailed('their authors')}", messages.SUCCESS)
        return None

    @admin.action(description="Archive skill", permissions=["review"])
    def archive_selected_skills(self, request: HttpRequest, queryset: QuerySet[SkillVersion]) -> HttpResponse | None:
        skills = list(Skill.objects.filter(pk__in=queryset.values("skill_id")).select_related("org"))
        if request.POST.get("post") != "yes":
            changelist = reverse("admin:skills_skillversion_changelist")
            return _archive_page(
                self,
                request,
                skills,
                action_url=changelist,
                cancel_url=changelist,
                bulk=("archive_selected_skills", [v.pk for v in queryset]),
            )
        done = sum(_archive(self, request, skill) for skill in skills)
        if done:
            self.message_user(request, f"{done} skill(s) archived.", messages.SUCCESS)
        return None

    # --- calling the services ---------------------------------------------------------------

    def _approve(self, request: HttpRequest, version: SkillVersion) -> bool:
        try:
            services.approve_version(actor=admin_actor(request, version.skill.org), version_id=version.pk)
        except DomainError as exc:
            self.message_user(request, f"{version}: {exc.message}", messages.ERROR)
            return False
        return True

    def _reject(self, request: HttpRequest, version: SkillVersion, reason: str) -> bool:
        try:
            actor = admin_actor(request, version.skill.org)
            services.reject_version(actor=actor, version_id=version.pk, reason=reason)
        except DomainError as exc:
            self.message_user(request, f"{version}: {exc.message}", messages.ERROR)
            return False
        return True

    def _reject_page(
        self,
        request: HttpRequest,
        versions: list[SkillVersion],
        form: RejectForm,
        *,
        action_url: str,
        bulk: bool = False,
    ) -> TemplateResponse:
        context = {
            **self.admin_site.each_context(request),
            "title": "Reject skill versions" if len(versions) > 1 else "Reject a skill version",
            "opts": self.opts,
            "versions": versions,
            "form": form,
            "action_url": action_url,
            "bulk": bulk,
            "cancel_url": reverse("admin:skills_skillversion_changelist")
            if bulk
            else reverse("admin:skills_skillversion_change", args=[versions[0].pk]),
        }
        return TemplateResponse(request, "admin/skills/skillversion/reject.html", context)


def _archive_page(
    model_admin: admin.ModelAdmin[Any],
    request: HttpRequest,
    skills: list[Skill],
    *,
    action_url: str,
    cancel_url: str,
    bulk: tuple[str, list[int]] | None = None,
) -> TemplateResponse:
    """Asks before archiving: from a version's page, or from a changelist action (``bulk`` is the
    action's name and the selected rows, sent again with the confirmation)."""
    context = {
        **model_admin.admin_site.each_context(request),
        "title": "Archive skills" if len(skills) > 1 else "Archive a skill",
        "opts": model_admin.opts,
        "skills": skills,
        "action_url": action_url,
        "cancel_url": cancel_url,
        "bulk_action": bulk[0] if bulk else "",
        "selected": bulk[1] if bulk else [],
    }
    return TemplateResponse(request, "admin/skills/archive.html", context)


def _archive(model_admin: admin.ModelAdmin[Any], request: HttpRequest, skill: Skill) -> bool:
    try:
        services.archive_skill(actor=admin_actor(request, skill.org), skill_id=skill.pk)
    except DomainError as exc:
        model_admin.message_user(request, f"{skill}: {exc.message}", messages.ERROR)
        return False
    return True


class VersionInline(ReadOnlyInline):
    model = SkillVersion
    fields = ("version", "name", "status", "submitted_by", "submitted_at", "reviewed_at")
    readonly_fields = fields
    ordering = ["-submitted_at"]
    show_change_link = True


@admin.register(Skill)
class SkillAdmin(ReviewMixin, OrgScopedAdmin):
    list_display = ["slug", "org", "in_use_name", "in_use_version", "pending", "archived_at", "created_at"]
    list_filter = [("archived_at", admin.EmptyFieldListFilter)]
    list_select_related = ["org", "current_version"]
    search_fields = ["slug"]
    fields = readonly_fields = ("org", "slug", "current_version", "archived_at", "created_at")
    inlines = [VersionInline]
    actions = ["archive_selected"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Skill]:
        pending = Count("versions", filter=Q(versions__status=Status.PENDING))
        return super().get_queryset(request).annotate(pending_count=pending)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return bool(request.user.is_superuser)

    @admin.display(description="Name in use")
    def in_use_name(self, skill: Skill) -> str:
        return skill.current_version.name if skill.current_version else "-"

    @admin.display(description="Version in use")
    def in_use_version(self, skill: Skill) -> str:
        return skill.current_version.version if skill.current_version else "-"

    @admin.display(description="Pending versions", ordering="pending_count")
    def pending(self, skill: Any) -> int:
        return int(skill.pending_count)

    @admin.action(description="Archive skill", permissions=["review"])
    def archive_selected(self, request: HttpRequest, queryset: QuerySet[Skill]) -> HttpResponse | None:
        skills = list(queryset.select_related("org"))
        if request.POST.get("post") != "yes":
            changelist = reverse("admin:skills_skill_changelist")
            return _archive_page(
                self,
                request,
                skills,
                action_url=changelist,
                cancel_url=changelist,
                bulk=("archive_selected", [skill.pk for skill in skills]),
            )
        done = sum(_archive(self, request, skill) for skill in skills)
        if done:
            self.message_user(request, f"{done} skill(s) archived.", messages.SUCCESS)
        return None
