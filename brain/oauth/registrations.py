"""How many apps one address may register in an hour (BRAIN_OAUTH_REGISTRATIONS_PER_HOUR).

Counted in the database, as failed logins are (brain.faces.login_throttle): every web process adds to
the same number, a restart resets nothing, and the count needs nothing the registration itself
does not (it writes to the database anyway); Redis being away changes nothing here.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.db import connection
from django.utils import timezone

from brain.models import RegistrationCount

WINDOW = timedelta(hours=1)

# One statement that adds one and answers the new count, so two processes counting at once both
# see each other's registration; an ORM read and write would let both read the same number.
COUNT_SQL = f"""
    INSERT INTO {RegistrationCount._meta.db_table} (address, hour, count) VALUES (%s, %s, 1)
    ON CONFLICT (address, hour) DO UPDATE SET count = {RegistrationCount._meta.db_table}.count + 1
    RETURNING count"""  # noqa: S608 (the table name is ours; values are bound)


def _this_hour(now: datetime) -> datetime:
    return now.replace(minute=0, second=0, microsecond=0)


def registration_allowed(address: str | None) -> bool:
    """Count one registration from ``address`` for this hour; whether it is within the limit.

    Refused attempts count too: an address that keeps trying stays refused until the hour ends."""
    with connection.cursor() as cursor:
        cursor.execute(COUNT_SQL, [(address or "")[:100], _this_hour(timezone.now())])
        (count,) = cursor.fetchone()
    return int(count) <= settings.BRAIN_OAUTH_REGISTRATIONS_PER_HOUR


def forget_old_counts() -> int:
    """Nightly: counts of hours that have ended."""
    deleted, _per_model = RegistrationCount.objects.filter(hour__lt=_this_hour(timezone.now())).delete()
    return deleted
