"""Single sign-on in the admin: an organisation's admins and the operators set it up there."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

from django import forms
from django.conf import settings
from django.contrib import admin
from django.contrib.auth.models import Group
from django.core.cache import cache
from django.http import HttpRequest
from django.urls import reverse

from brain.faces.admin_base import OrgScopedAdmin, SameOrganisationForm
from brain.infra.sealing import seal_secret
from brain.models import Membership, SingleSignOn

DOMAIN = re.compile(r"^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$")
LOOPBACK = {"127.0.0.1", "::1", "localhost"}


class SingleSignOnForm(SameOrganisationForm):
    issuer = forms.URLField(
        max_length=500,
        assume_scheme="https",
        help_text="The provider's issuer URL; Brain reads <issuer>/.well-known/openid-configuration.",
    )
    client_secret = forms.CharField(
        required=False,
        strip=True,
        widget=forms.PasswordInput(render_value=False),
        help_text="Kept encrypted and never shown again; leave empty to keep the saved one.",
    )

    class Meta:
        model = SingleSignOn
        fields = "__all__"

    def clean_issuer(self) -> str:
        issuer = str(self.cleaned_data["issuer"]).rstrip("/")
        parts = urlsplit(issuer)
        if parts.scheme != "https" and parts.hostname not in LOOPBACK:
            raise forms.ValidationError("Write the issuer with https://, as the provider publishes it.")
        if parts.query or parts.fragment:
            raise forms.ValidationError("An issuer has no ?query or #fragment; copy it from the provider's settings.")
        return issuer

    def clean_scopes(self) -> str:
        scopes = str(self.cleaned_data["scopes"]).split()
        if "openid" not in scopes or "email" not in scopes:
            raise forms.ValidationError('The scopes must include "openid" and "email".')
        return " ".join(scopes)

    def clean_allowed_domains(self) -> list[str]:
        domains = [str(domain).strip().lower().lstrip("@") for domain in self.cleaned_data["allowed_domains"] or []]
        wrong = [domain for domain in domains if not DOMAIN.match(domain)]
        if wrong:
            raise forms.ValidationError(f"Not a domain: {', '.join(wrong)}. Write them like example.com.")
        return sorted(set(domains))

    def clean_role_map(self) -> dict[str, str]:
        value = self.cleaned_data["role_map"] or {}
        roles = {role for role, _ in Membership.ROLES}
        if not isinstance(value, dict) or not all(isinstance(k, str) and v in roles for k, v in value.items()):
            raise forms.ValidationError(
                'Write the role map as {"group at the provider": "admin" or "member"}, e.g. {"brain-admins": "admin"}.'
            )
        return value

    def clean_group_map(self) -> dict[str, str]:
        value = self.cleaned_data["group_map"] or {}
        if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
            raise forms.ValidationError('Write the group map as {"group at the provider": "group in Brain"}.')
        return value

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        org = cleaned.get("org") or getattr(self.instance, "org", None)
        if cleaned.get("provision") == SingleSignOn.DOMAIN and not cleaned.get("allowed_domains"):
            self.add_error("allowed_domains", "Name the domains whose people join on their first sign-in.")
        if not self.instance.sealed_client_secret and not cleaned.get("client_secret"):
            self.add_error("client_secret", "Paste the client secret the provider gave for Brain.")
        names = set((cleaned.get("group_map") or {}).values())
        if org is not None and names:
            known = set(Group.objects.filter(name__in=names, organisation_link__org=org).values_list("name", flat=True))
            if names - known:
                self.add_error(
                    "group_map",
                    f"No group of this organisation is called {', '.join(sorted(names - known))}; "
                    "fix the name, or ask an operator to tie the group to it (Authentication → Groups).",
                )
        return cleaned


class SingleSignOnAdmin(OrgScopedAdmin):
    form = SingleSignOnForm
    list_display = ("org", "label", "issuer", "enabled", "provision", "password_sign_in")
    audit_hidden_fields = ("client_secret",)
    fieldsets = (
        (None, {"fields": ("org", "enabled", "label")}),
        ("The provider", {"fields": ("issuer", "client_id", "client_secret", "scopes", "redirect_uri")}),
        ("Who may sign in", {"fields": ("provision", "allowed_domains", "password_sign_in")}),
        ("Roles and groups from the groups claim", {"fields": ("groups_claim", "role_map", "group_map")}),
    )

    readonly_fields = ("redirect_uri",)

    @admin.display(description="Redirect URI to register at the provider")
    def redirect_uri(self, obj: SingleSignOn | None) -> str:
        return f"{settings.BRAIN_BASE_URL}{reverse('sso-callback')}"

    def save_model(self, request: HttpRequest, obj: SingleSignOn, form: Any, change: bool) -> None:
        secret = form.cleaned_data.get("client_secret")
        if secret:
            obj.sealed_client_secret = seal_secret(secret)
        super().save_model(request, obj, form, change)
        cache.delete(f"sso:metadata:{obj.issuer}")
