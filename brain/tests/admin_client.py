"""Admins for tests of the admin pages, logged in with Django's test client."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.test import Client

from brain.core.services import add_member
from brain.models import Membership, Organisation
from conftest import make_user


def make_org_admin(*orgs: Organisation, **extra: Any) -> User:
    """A staff user with the admin role in each of ``orgs``: an organisation admin, not an operator."""
    user = make_user(orgs[0] if orgs else None, role=Membership.ADMIN, **extra)
    for org in orgs[1:]:
        add_member(org=org, user=user, role=Membership.ADMIN)
    user.is_staff = True
    user.save(update_fields=["is_staff"])
    return user


def make_operator(**extra: Any) -> User:
    user = make_user(**extra)
    user.is_staff = user.is_superuser = True
    user.save(update_fields=["is_staff", "is_superuser"])
    return user


def logged_in(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def options(page: Any, field: str) -> set[str]:
    """The values offered by a select box of an admin form, as the page rendered them."""
    form = page.context["adminform"].form
    return {str(value) for value, _label in form.fields[field].choices if value != ""}
