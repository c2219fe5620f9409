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

from brain.models import Membership, Organisation, SingleSignOn


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
    """The "Sign in with ..." button of the login page, when the installation holds one
    organisation and it has single sign-on on. With several, the page shows none: it would tell
    anyone who opens it which organisations this installation serves. Their people give their
    work address instead (``provider_for_address``)."""
    if Organisation.objects.count() != 1:
        return []
    found = SingleSignOn.objects.filter(enabled=True).select_related("org")
    query = f"?{urlencode({'next': next_url})}" if next_url else ""
    return [{"label": sso.label, "url": reverse("sso-login", args=[sso.org.slug]) + query} for sso in found]


def company_sign_in_offered() -> bool:
    """Whether the login page asks for a work address to sign in with a company's provider."""
    return Organisation.objects.count() != 1 and SingleSignOn.objects.filter(enabled=True).exists()


def provider_for_address(address: str) -> SingleSignOn | None:
    """The single sign-on a work address signs in with: the one organisation with single sign-on
    on that the address's person belongs to, else the one whose allowed domains hold its domain.
    None when no organisation, or more than one, answers: the person signs in with a password."""
    address = address.strip()
    _, at, domain = address.rpartition("@")
    if not at or not domain or len(address) > 254:
        return None
    enabled = SingleSignOn.objects.filter(enabled=True).select_related("org")
    members = enabled.filter(org__memberships__user__email__iexact=address).distinct()
    found = list(members[:2]) or list(enabled.filter(allowed_domains__contains=[domain.casefold()])[:2])
    return found[0] if len(found) == 1 else None
