"""Knowledge with an owner: when a document, page or skill is due for review, and whether it is stale.

A piece of knowledge may name its steward (the member who keeps it correct) and a review interval
in days. It is due ``review_every_days`` after it was last verified (``verified_at``), or after it
was recorded when nobody has verified it yet; it is stale from the day after its due day, in the
organisation's time zone. The due day is stored on the row (``review_due_on``) so that the lists of
what is stale are one indexed query; every write that moves it calls ``review_due_on`` here, and
every read that says "stale" calls ``stale_since``. Documents and skills keep their own fields and
services; the rule is this module's, once.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta

from django.contrib.auth.models import User
from django.utils import timezone

from brain.core.errors import InvalidArgument
from brain.faces.times import local_day
from brain.models import Membership, Organisation

MAX_REVIEW_DAYS = 3650  # ten years: longer is no review at all


def review_due_on(
    *, every_days: int | None, verified_at: datetime | None, recorded_at: datetime, org: Organisation
) -> date | None:
    """The day a review falls due: ``every_days`` after the last verification (else the recording),
    counted in the organisation's days; None without an interval."""
    if not every_days:
        return None
    return local_day(verified_at or recorded_at, org) + timedelta(days=every_days)


def today(org: Organisation) -> date:
    """Today in the organisation's time zone: the day "stale" is judged on."""
    return local_day(timezone.now(), org)


def stale_since(due_on: date | None, *, on: date) -> date | None:
    """The due day when it has passed on the day ``on``, else None: what stale marks show."""
    return due_on if due_on is not None and due_on < on else None


def checked_interval(value: int | str | None) -> int | None:
    """A review interval as given on a form or by a caller: whole days from 1 to ``MAX_REVIEW_DAYS``,
    or None (blank) for no review; anything else is refused with what to give."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    try:
        days = int(value)
    except (TypeError, ValueError):
        raise InvalidArgument("The review interval is a whole number of days, e.g. 90, or empty for none.") from None
    if not 1 <= days <= MAX_REVIEW_DAYS:
        raise InvalidArgument(f"The review interval is 1 to {MAX_REVIEW_DAYS} days, or empty for none.")
    return days


def checked_steward(*, org: Organisation, user_id: int | str | None) -> User | None:
    """The member named as steward, or None (blank); someone outside the organisation is refused in
    the same words as someone who does not exist."""
    if user_id is None or (isinstance(user_id, str) and not user_id.strip()):
        return None
    try:
        pk = int(user_id)
    except (TypeError, ValueError):
        raise InvalidArgument("Choose the steward among the organisation's members.") from None
    member = Membership.objects.filter(org=org, user_id=pk, user__is_active=True).select_related("user").first()
    if member is None:
        raise InvalidArgument("Choose the steward among the organisation's members.")
    return member.user
