"""Plans and accounts in the admin. Only operators (superusers) change plans and credits: an
organisation admin sees their organisation's account but cannot raise their own quota."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.http import HttpRequest

from brain.core.errors import DomainError
from brain.faces.admin_base import OrgScopedAdmin, SameOrganisationForm
from usage.models import Account, Plan
from usage.selectors import get_usage
from usage.services import add_credits, change_plan


@admin.register(Plan)
class PlanAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "monthly_free_reads", "unlimited"]

    def has_module_permission(self, request: HttpRequest) -> bool:
        return bool(request.user.is_superuser)

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return bool(request.user.is_superuser)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return bool(request.user.is_superuser) and (obj is None or not obj.accounts.exists())


class AccountForm(SameOrganisationForm):
    add = forms.IntegerField(
        required=False,
        label="Add credits",
        help_text="Credits to add now (negative to take away). Knowledge waiting for credits starts ingesting.",
    )

    class Meta:
        model = Account
        fields = ["plan"]


@admin.register(Account)
class AccountAdmin(OrgScopedAdmin):
    form = AccountForm
    list_display = ["org", "plan", "credits", "reads_this_month", "free_reads_left", "renews"]
    list_select_related = ["org", "plan"]
    readonly_fields = ["org", "credits"]
    audit_form_writes = False  # add_credits and change_plan write the audit records

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # every organisation gets its account when it is created

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return bool(request.user.is_superuser)

    @admin.display(description="reads this month")
    def reads_this_month(self, account: Account) -> int:
        return get_usage(org=account.org).reads

    @admin.display(description="free reads left")
    def free_reads_left(self, account: Account) -> str:
        left = get_usage(org=account.org).free_left
        return "unlimited" if left is None else f"{left:,}"

    @admin.display(description="renews")
    def renews(self, account: Account) -> str:
        return f"{get_usage(org=account.org).renews_at:%Y-%m-%d}"

    def save_model(self, request: HttpRequest, obj: Account, form: Any, change: bool) -> None:
        """Through the services, so each change is audited and waiting knowledge resumes."""
        try:
            if "plan" in form.changed_data:
                change_plan(actor=request.user, org=obj.org, plan=obj.plan.slug)  # type: ignore[arg-type]
            amount = form.cleaned_data.get("add")
            if amount:
                balance = add_credits(actor=request.user, org=obj.org, amount=amount)  # type: ignore[arg-type]
                self.message_user(request, f"{amount:+,} credits for {obj.org.slug}; balance {balance:,}.")
        except DomainError as exc:
            self.message_user(request, exc.message, messages.ERROR)
