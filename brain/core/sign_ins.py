"""Signing in and out, in the audit trail of every organisation the person belongs to: who may
reach an organisation's knowledge, and when they began and ended a session.

Each way of signing in writes its own ``user.signed_in`` records, saying how (``details.method``):
the login page and the admin's (a password) through Django's ``user_logged_in`` signal
(``brain.faces.sign_ins``), single sign-on from its own callback, in the one organisation
whose provider signed the person in, with the issuer (``brain.sso.provisioning``).
So that one sign-in is never written twice, the signal writes only for a login that a password
checked (Django's ``ModelBackend``; the failed-login throttle's backend refuses and never signs
anyone in); a login through any other backend is left to the code that made it.

A failed password sign-in for an existing account is written as ``user.sign_in_failed`` with the
address it came from, so an organisation's admins see guesses at their people's passwords; a
name that matches no account belongs to no organisation and is left to the failed-login throttle.
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.db import transaction

from brain.core.audit import record_audit
from brain.models import Membership

PASSWORD_BACKEND = "django.contrib.auth.backends.ModelBackend"  # noqa: S105 -- a class path, not a secret
PASSWORD = "password"  # noqa: S105 -- how someone signed in, not a secret


def _each_organisation(user: User) -> list[Membership]:
    return list(Membership.objects.filter(user=user).select_related("org").order_by("org_id"))


@transaction.atomic
def record_sign_in(*, user: User, method: str, via: str, address: str | None = None) -> int:
    """Audit that ``user`` signed in (``method``: ``password``, ``sso``...); returns how many records."""
    details: dict[str, object] = {"method": method}
    if address:
        details["address"] = address
    memberships = _each_organisation(user)
    for membership in memberships:
        record_audit(
            actor=user,
            org=membership.org,
            via=via,
            action="user.signed_in",
            target=f"user {user.get_username()}",
            details=details,
        )
    return len(memberships)


@transaction.atomic
def record_sign_out(*, user: User, via: str) -> int:
    """Audit that ``user`` ended their session; returns how many records."""
    memberships = _each_organisation(user)
    for membership in memberships:
        record_audit(
            actor=user, org=membership.org, via=via, action="user.signed_out", target=f"user {user.get_username()}"
        )
    return len(memberships)


@transaction.atomic
def record_failed_sign_in(*, username: str, via: str, address: str | None) -> int:
    """Audit a wrong password for the account named ``username``, if there is one; returns how many records."""
    model = get_user_model()
    user = model.objects.filter(**{model.USERNAME_FIELD: username[:150]}).first() if username else None
    if user is None:
        return 0
    memberships = _each_organisation(user)
    for membership in memberships:
        record_audit(
            actor=None,
            org=membership.org,
            via=via,
            who=f"someone at {address or 'an unknown address'}",
            action="user.sign_in_failed",
            target=f"user {user.get_username()}",
            details={"method": PASSWORD, "address": address},
        )
    return len(memberships)
