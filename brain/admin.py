"""Admin of the core models. The rules every organisation-scoped admin follows are in
``brain.faces.admin_base``; operators (superusers) see everything, organisation admins their own."""

from __future__ import annotations

from typing import Any, cast

import django_celery_beat.admin  # noqa: F401 (registers beat's admins before they are wrapped below)
import oauth2_provider.admin  # noqa: F401 (registers the toolkit's admins before they are taken out below)
from django import forms
from django.contrib import admin, messages
from django.contrib.auth.admin import GroupAdmin
from django.contrib.auth.models import Group
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.urls.resolvers import URLPattern
from django.utils.cache import add_never_cache_headers
from django_celery_beat.models import ClockedSchedule, CrontabSchedule, IntervalSchedule, PeriodicTask, SolarSchedule
from oauth2_provider.models import AccessToken, Application, Grant, IDToken, RefreshToken

from brain.core import services
from brain.core.audit import record_audit
from brain.core.errors import DomainError
from brain.core.invitations import Invitation, invite_member, link_lifetime, withdraw_invitation
from brain.faces.admin_base import (
    OrgScopedAdmin,
    ReadOnlyInline,
    admin_actor,
    admin_org_ids,
    for_operators_only,
    staff_user,
)
from brain.models import (
    CONNECTED_APP_PREFIX,
    Activity,
    ApiToken,
    AuditRecord,
    Category,
    Features,
    Membership,
    MembershipInvitation,
    Organisation,
    OrganisationGroup,
    Report,
    SingleSignOn,
    ToolCall,
)
from brain.portability.leaving import delete_organisation, rows_of_organisations
from brain.sso.admin import SingleSignOnAdmin
from brain.sso.passwords import AdminPasswordLoginForm

__all__ = ["OrgScopedAdmin", "ReadOnlyInline", "admin_actor", "admin_org_ids"]

admin.site.site_header = "Brain"
admin.site.login_form = AdminPasswordLoginForm  # refuses the password where single sign-on replaced it
admin.site.register(SingleSignOn, SingleSignOnAdmin)
admin.site.site_title = "Brain admin"
admin.site.index_title = "Brain administration"

# Beat's schedule rows are how Brain runs its nightly work and the jobs: an operator's to touch.
for_operators_only(PeriodicTask, IntervalSchedule, CrontabSchedule, SolarSchedule, ClockedSchedule)


class FeaturesInline(admin.StackedInline):
    """The organisation's switches: its admins turn its registers and jobs on and off (the pages
    that are empty while they are off link here)."""

    model = Features
    can_delete = False

    def _may(self, request: HttpRequest, obj: Any) -> bool:
        if request.user.is_superuser:
            return True
        # Django asks without the organisation when it reads the switches' rows (which it then
        # narrows to the organisation on the page, one the admin may open): without this answer an
        # organisation admin saw an empty form, and saving it failed as a second row.
        return obj.pk in admin_org_ids(request) if obj is not None else bool(admin_org_ids(request))

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self._may(request, obj)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self._may(request, obj)

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self._may(request, obj)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


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

    def get_inlines(self, request: HttpRequest, obj: Any = None) -> Any:
        # The service makes the switches with the organisation; they are changed once it exists.
        return self.inlines if obj is not None else []

    def save_model(self, request: HttpRequest, obj: Organisation, form: Any, change: bool) -> None:
        if change:
            super().save_model(request, obj, form, change)
            return
        org = services.create_organisation(slug=obj.slug, name=obj.name, language=obj.language, time_zone=obj.time_zone)
        # The admin goes on with its own instance (the change message, the redirect): it becomes the saved row.
        obj.pk, obj.created_at, obj.embedder = org.pk, org.created_at, org.embedder
        obj._state.adding, obj._state.db = False, org._state.db

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return bool(request.user.is_superuser)

    def get_deleted_objects(
        self, objs: Any, request: HttpRequest
    ) -> tuple[list[Any], dict[str, int], set[str], list[Any]]:
        # An organisation goes whole: its rows are counted by kind rather than listed one by one (an
        # organisation may hold millions), and read-only records (the audit trail, call records),
        # which nobody may delete alone, go with it.
        counts = rows_of_organisations([org.pk for org in objs])
        return [str(org) for org in objs], counts, set(), []

    # What delete_org does: the rows that do not name the organisation go too (brain.portability.leaving).
    def delete_model(self, request: HttpRequest, obj: Organisation) -> None:
        delete_organisation(org=obj)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Organisation]) -> None:
        for org in queryset:
            delete_organisation(org=org)

    @admin.action(description="Mark the memory as built (init stops showing the collecting notice)")
    def mark_memory_built(self, request: HttpRequest, queryset: QuerySet[Organisation]) -> None:
        for org in queryset:
            services.mark_memory_built(org=org)
        self.message_user(request, f"{queryset.count()} organisation(s) marked as built.", messages.SUCCESS)


# Where the link of an invitation whose email did not go waits for the one page view that shows it.
INVITE_LINK_KEY = "brain.invite.unsent"


class InviteForm(forms.Form):
    email = forms.EmailField(label="Email address", help_text="The invitation and its link go here.")
    role = forms.ChoiceField(
        choices=Membership.ROLES,
        initial=Membership.MEMBER,
        help_text="Admins also work in this admin, for their organisations only.",
    )
    org = forms.ModelChoiceField(queryset=Organisation.objects.none(), label="Organisation", empty_label=None)

    def __init__(self, *args: Any, orgs: QuerySet[Organisation], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        field = cast(forms.ModelChoiceField, self.fields["org"])
        field.queryset = orgs  # only the organisations the inviting admin administers


@admin.register(Membership)
class MembershipAdmin(OrgScopedAdmin):
    list_display = ["user", "org", "role", "joined", "created_at"]
    list_filter = ["role"]
    actions = ["invite_again"]
    search_fields = ["user__username", "user__email"]
    # The membership is what makes the user a member; the choices are still the admin's users.
    any_org_fields = ("user",)

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        fields = super().get_readonly_fields(request, obj)
        return [*fields, "user", "created_at"] if obj is not None else fields

    def get_urls(self) -> list[URLPattern]:
        invite = path("invite/", self.admin_site.admin_view(self.invite_view), name="brain_membership_invite")
        return [invite, *super().get_urls()]

    def invite_view(self, request: HttpRequest) -> HttpResponse:
        """Invite a member by email (brain.core.invitations): the account, the membership and the link, in one form."""
        if not self.has_add_permission(request):
            raise PermissionDenied
        orgs = self.choices(request, Organisation).order_by("name")
        form = InviteForm(request.POST if request.method == "POST" else None, orgs=orgs)
        if form.is_valid():
            org, email = form.cleaned_data["org"], form.cleaned_data["email"]
            try:
                invitation = invite_member(actor=admin_actor(request, org), email=email, role=form.cleaned_data["role"])
            except DomainError as exc:
                form.add_error("email", exc.message)
            else:
                self._report(request, invitation, email)
                return self._after_inviting(request, [(email, invitation)])
        context = {
            **self.admin_site.each_context(request),
            "title": "Invite a member",
            "opts": self.opts,
            "form": form,
            "lifetime": link_lifetime(),
            "unsent": request.session.pop(INVITE_LINK_KEY, []) if request.method == "GET" else [],
        }
        response = TemplateResponse(request, "admin/brain/membership/invite.html", context)
        add_never_cache_headers(response)  # it may carry a one-time link
        return response

    @admin.display(boolean=True, description="Password set")
    def joined(self, obj: Membership) -> bool:
        """Whether the member set a password (an invitation not taken up yet shows no)."""
        return obj.user.has_usable_password()

    @admin.action(description="Send the invitation again (members who have not set a password)")
    def invite_again(self, request: HttpRequest, queryset: QuerySet[Membership]) -> HttpResponse:
        done = []
        for membership in queryset.select_related("org", "user"):
            user = membership.user
            if user.has_usable_password() or not user.email:
                self.message_user(request, f"{user}: has set a password already; nothing sent.", messages.WARNING)
                continue
            try:
                invitation = invite_member(actor=admin_actor(request, membership.org), email=user.email)
            except DomainError as exc:
                self.message_user(request, f"{user.email}: {exc.message}", messages.ERROR)
                continue
            self._report(request, invitation, user.email)
            done.append((user.email, invitation))
        return self._after_inviting(request, done)

    def _after_inviting(self, request: HttpRequest, done: list[tuple[str, Invitation]]) -> HttpResponse:
        """The links of invitations whose email did not go are shown once, on the invitation page
        (POST/redirect/GET); otherwise back to the members."""
        unsent = [{"email": email, "link": invitation.link} for email, invitation in done if invitation.link]
        if unsent:
            request.session[INVITE_LINK_KEY] = unsent
            return HttpResponseRedirect(reverse("admin:brain_membership_invite"))
        return HttpResponseRedirect(reverse("admin:brain_membership_changelist"))

    def _report(self, request: HttpRequest, invitation: Invitation, email: str) -> None:
        org = invitation.org
        if invitation.offer is not None:
            joins = f"they join {org} only when they accept it on their Invitations page, within {link_lifetime()}."
            if invitation.sent:
                self.message_user(
                    request, f"Invitation sent to {email}, who has an account already: {joins}", messages.SUCCESS
                )
            else:
                self.message_user(
                    request,
                    f"{email} has an account already, but the invitation email could not be sent; tell them "
                    f"yourself: {joins}",
                    messages.WARNING,
                )
        elif not invitation.sent and invitation.link:
            self.message_user(
                request,
                f"{email} is {'still' if invitation.again else 'now'} a member of {org}, but the email could not be "
                "sent: copy their link below and pass it on yourself.",
                messages.WARNING,
            )
        elif not invitation.sent:
            self.message_user(
                request,
                f"{email} is now a member of {org}, but the email could not be sent; "
                "check the mail settings and tell them yourself.",
                messages.ERROR,
            )
        elif invitation.again:
            self.message_user(
                request,
                f"Invitation sent again to {email}: the new link works once, for {link_lifetime()}.",
                messages.SUCCESS,
            )
        else:
            self.message_user(
                request,
                f"Invitation sent to {email}: the link to set a password works once, for {link_lifetime()}.",
                messages.SUCCESS,
            )


class ConnectedAppFilter(admin.SimpleListFilter):
    title = "kind"
    parameter_name = "kind"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [("token", "brn_ tokens"), ("app", "Connected apps (OAuth)")]

    def queryset(self, request: HttpRequest, queryset: QuerySet[ApiToken]) -> QuerySet[ApiToken]:
        if self.value() == "app":
            return queryset.filter(prefix=CONNECTED_APP_PREFIX)
        if self.value() == "token":
            return queryset.exclude(prefix=CONNECTED_APP_PREFIX)
        return queryset


@admin.register(MembershipInvitation)
class MembershipInvitationAdmin(OrgScopedAdmin):
    """Invitations to people who have an account already: read-only; an open one can be withdrawn
    (brain.core.invitations.withdraw_invitation, which audits it)."""

    list_display = ["user", "org", "role", "answer", "invited_by", "created_at", "expires_at"]
    list_filter = ["answer", "role"]
    search_fields = ["user__username", "user__email"]
    fields = readonly_fields = (
        "org",
        "user",
        "role",
        "invited_by",
        "answer",
        "created_at",
        "expires_at",
        "answered_at",
    )
    actions = ["withdraw"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # Memberships, Invite a member

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    @admin.action(description="Withdraw the invitations selected (open ones)")
    def withdraw(self, request: HttpRequest, queryset: QuerySet[MembershipInvitation]) -> None:
        for offer in queryset.select_related("org", "user"):
            try:
                withdraw_invitation(actor=admin_actor(request, offer.org), invitation_id=offer.pk)
            except DomainError as exc:
                self.message_user(request, exc.message, messages.WARNING)
            else:
                self.message_user(request, f"Withdrawn: the invitation of {offer.user} to {offer.org}.")


@admin.register(ApiToken)
class ApiTokenAdmin(OrgScopedAdmin):
    """Tokens are issued on the Connect page or by create_token, and apps are connected on the
    consent page (brain.oauth); here both are read and revoked. Revoking a connected app ends
    its access at the next call, and its refresh token gets nothing more."""

    list_display = ["__str__", "user", "org", "scopes", "created_at", "expires_at", "revoked_at", "last_used_at"]
    list_filter = ["revoked_at", ConnectedAppFilter]
    # Only the label is edited: moving a token to another user, widening it or un-revoking it
    # would hand someone else's access to whoever holds the token.
    readonly_fields = [
        "org",
        "user",
        "prefix",
        "hashed",
        "scopes",
        "created_at",
        "expires_at",
        "revoked_at",
        "last_used_at",
        "oauth_application",
    ]
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
# The OAuth toolkit's own tables (clients, codes, tokens) hold no organisation: nobody edits them
# here. Organisation admins see and revoke connected apps as rows of ApiToken above.
for _model in (Application, AccessToken, Grant, IDToken, RefreshToken):
    admin.site.unregister(_model)


@admin.register(Group)
class BrainGroupAdmin(GroupAdmin):
    """Operators tie each group to the organisation whose categories may use it."""

    inlines = [OrganisationGroupInline]

    def save_related(self, request: HttpRequest, form: Any, formsets: Any, change: bool) -> None:
        super().save_related(request, form, formsets, change)
        link = OrganisationGroup.objects.filter(group=form.instance).select_related("org").first()
        if link is not None and (form.changed_data or any(f.has_changed() for f in formsets)):
            record_audit(
                actor=staff_user(request),
                org=link.org,
                action="group.changed",
                target=f"group {form.instance.pk}",
                details={"name": form.instance.name, "fields": sorted(form.changed_data)},
            )


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

    list_display = ["kind", "category", "org", "user", "tool_name", "client", "blocked", "created_at", "expires_at"]
    list_filter = ["kind", "category", "origin", "blocked"]
    search_fields = ["observed", "expected", "summary", "client_name", "session_ref"]
    fieldsets = [
        (None, {"fields": ["kind", "org", "user", "token", "created_at", "expires_at"]}),
        (
            "What was reported",
            {
                "fields": [
                    "category",
                    "tool_name",
                    "observed",
                    "expected",
                    "user_request",
                    "error_message",
                    "summary",
                    "origin",
                    "context",
                    "blocked",
                ]
            },
        ),
        (
            "Where it came from",
            {
                "fields": [
                    "client_name",
                    "client_version",
                    "session_ref",
                    "user_agent",
                    "release",
                    "activity",
                    "activity_ref",
                ]
            },
        ),
    ]

    @admin.display(description="assistant app", ordering="client_name")
    def client(self, report: Report) -> str:
        """The app and its version, as it introduced itself over MCP."""
        return " ".join(part for part in (report.client_name, report.client_version) if part) or "-"

    def has_module_permission(self, request: HttpRequest) -> bool:
        return bool(request.user.is_superuser)

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return bool(request.user.is_superuser)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False
