"""When the password form is refused: an organisation that switched password sign-in off signs
its members in through its provider only. The break-glass path stays with superusers (the
operators) and with the organisation's own admins, so a provider that is down or misconfigured
never locks an organisation out of the page where single sign-on is set up."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django import forms
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth.forms import AuthenticationForm
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser, User
from django.urls import reverse

from brain.models import Membership, SingleSignOn


def password_refused(user: AbstractBaseUser | AnonymousUser) -> str | None:
    """Why ``user`` may not sign in with a password, or None when they may."""
    if not isinstance(user, User) or user.is_superuser:
        return None
    held = (
        Membership.objects.filter(
            user=user, org__single_sign_on__enabled=True, org__single_sign_on__password_sign_in=False
        )
        .exclude(role=Membership.ADMIN)
        .select_related("org__single_sign_on")
        .first()
    )
    if held is None:
        return None
    label = held.org.single_sign_on.label
    return f"{held.org.name} signs in with {label}: use “Sign in with {label}” below."


class _Refusing:
    sso_refusal: str | None = None

    def confirm_login_allowed(self, user: AbstractBaseUser) -> None:
        super().confirm_login_allowed(user)  # type: ignore[misc]
        self.sso_refusal = password_refused(user)
        if self.sso_refusal:
            raise forms.ValidationError(self.sso_refusal, code="sso_only")


class PasswordLoginForm(_Refusing, AuthenticationForm):
    """The site's login form, refusing the password where the organisation switched it off."""


class AdminPasswordLoginForm(_Refusing, AdminAuthenticationForm):
    """The admin's login form, with the same refusal."""


def sign_in_choices(next_url: str) -> list[dict[str, Any]]:
    """The "Sign in with ..." buttons of the login page, one per organisation with single sign-on on."""
    found = SingleSignOn.objects.filter(enabled=True).select_related("org").order_by("org__name")
    query = f"?{urlencode({'next': next_url})}" if next_url else ""
    return [
        {"label": sso.label, "org": sso.org.name, "url": reverse("sso-login", args=[sso.org.slug]) + query}
        for sso in found
    ]
