"""A person's own account: their name, their time zone and their password, changed by themselves on
the account page, and a new password made by an operator when the first admin's is lost.

A password is kept only as Django's hash, so a lost one cannot be shown again: it is replaced. A
changed or replaced password changes who can sign in, so it is audited in every organisation the
person belongs to (their admins read it there); the name and the time zone are theirs alone.
"""

from __future__ import annotations

import secrets
from functools import cache
from zoneinfo import ZoneInfo, available_timezones

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction

from brain.core.audit import record_audit
from brain.core.errors import InvalidArgument
from brain.core.inputs import text_problem
from brain.models import AccountSettings, Membership, validate_time_zone

# Django's User keeps first and last names of up to 150 characters each.
NAME_LIMIT = 150


@cache
def time_zone_choices() -> list[str]:
    """The zones a person may choose: IANA names of places (``Europe/Berlin``) and UTC."""
    return sorted(zone for zone in available_timezones() if "/" in zone or zone == "UTC")


def get_time_zone(*, user: User) -> str:
    """The time zone ``user`` chose for pages; "" when they chose none (each organisation's then)."""
    return AccountSettings.objects.filter(user=user).values_list("time_zone", flat=True).first() or ""


def chosen_zone(*, user: User) -> ZoneInfo | None:
    """The zone ``user`` chose, ready to show times in; None when they chose none."""
    name = get_time_zone(user=user)
    return ZoneInfo(name) if name else None


@transaction.atomic
def update_account(*, user: User, first_name: str, last_name: str, time_zone: str) -> User:
    """Set ``user``'s own name and time zone ("" for each organisation's zone)."""
    first_name, last_name, time_zone = first_name.strip(), last_name.strip(), time_zone.strip()
    for label, value in (("first name", first_name), ("last name", last_name)):
        if len(value) > NAME_LIMIT:
            raise InvalidArgument(f"The {label} is longer than {NAME_LIMIT} characters.")
        if value and (problem := text_problem(value)):
            raise InvalidArgument(f"The {label} {problem}.")
    if time_zone:
        try:
            validate_time_zone(time_zone)
        except ValidationError as error:
            raise InvalidArgument(error.messages[0]) from error
    user.first_name, user.last_name = first_name, last_name
    user.save(update_fields=["first_name", "last_name"])
    AccountSettings.objects.update_or_create(user=user, defaults={"time_zone": time_zone})
    return user


def record_password_change(*, user: User, by_operator: bool) -> None:
    """Audit a new password of ``user`` in each of their organisations: set by themselves on the
    account page, or made by an operator at the command line."""
    action = "user.password_reset" if by_operator else "user.password_changed"
    for membership in Membership.objects.filter(user=user).select_related("org"):
        record_audit(
            actor=None if by_operator else user,
            org=membership.org,
            via="command" if by_operator else "web",
            action=action,
            target=f"user {user.get_username()}",
        )


@transaction.atomic
def reset_password(*, user: User) -> str:
    """A new random password for ``user``, returned once; only its hash is kept."""
    password = secrets.token_urlsafe(12)
    user.set_password(password)
    user.save(update_fields=["password"])
    record_password_change(user=user, by_operator=True)
    return password
