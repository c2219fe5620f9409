"""The audit trail: one record for every write that changes access or history.

Call ``record_audit`` inside the transaction of the write it describes, so the record and the
change commit or roll back together. Actions are ``noun.verb`` in the past tense
(``document.access_changed``, ``token.revoked``, ``memory.replaced``); the target is the public id
of what changed (``doc_12``, ``mem_7``, ``token brn_1a2b3c4d``); details hold what an admin needs
to read the change later (old and new values), never secrets or whole documents.

Who acted:

- a service call passes its ``Actor`` (``record_audit(actor=actor, ...)``): organisation, user,
  token and interface come from it;
- an admin or web write without an Actor passes the request user and the organisation
  (``record_audit(actor=request.user, org=org, ...)``; ``via`` is ``admin`` unless given);
- a manage.py command passes ``actor=None`` and the organisation: an operator at the shell;
- someone without an account, acting through a signed link, passes ``actor=None``, the
  organisation, ``via`` and ``who`` (whom the link was for).

An Actor whose ``via`` is ``command`` is treated like ``actor=None``: commands run services as
some member so that the services' rules apply, but the member did not act, an operator did.

Records are kept for the organisation's period (``Organisation.audit_days``, 365 by default, at
least 30); the nightly ``purge_expired_audit`` deletes older ones and leaves ``audit.purged``
saying how many went. Reading the trail is ``brain.core.audit_trail``.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from brain.core.actors import Actor
from brain.models import ApiToken, AuditRecord, Organisation

logger = logging.getLogger(__name__)

COMMAND = "command"
OPERATOR_AT_SHELL = "operator (command line)"
DETAIL_TEXT_MAX = 300


def record_audit(
    *,
    actor: Actor | User | None,
    action: str,
    target: str,
    details: dict[str, Any] | None = None,
    org: Organisation | None = None,
    via: str | None = None,
    who: str | None = None,
) -> AuditRecord:
    """Write one audit record; see the module docstring for who ``actor`` may be."""
    user: User | None
    token: ApiToken | None = None
    if isinstance(actor, Actor):
        org, user, token, via = org or actor.org, actor.user, actor.token, via or actor.via
    else:
        user, via = actor, via or ("admin" if actor is not None else COMMAND)
    if org is None:
        raise ValueError("record_audit needs the organisation when no Actor is given")
    if via == COMMAND:
        user = None
    return AuditRecord.objects.create(
        org=org,
        user=user,
        who=(who or (user.get_username() if user is not None else OPERATOR_AT_SHELL))[:200],
        via=via[:16],
        token=token,
        action=action[:80],
        target=target[:200],
        details=details or {},
    )


def shown(value: object) -> object:
    """A value as the record keeps it: ids for rows, short text for long strings."""
    if value is None or isinstance(value, bool | int | float):
        return value
    pk = getattr(value, "pk", None)
    if pk is not None:
        return pk
    if isinstance(value, QuerySet):
        return sorted(value.values_list("pk", flat=True))
    if isinstance(value, list | tuple | set | frozenset):
        items = [shown(item) for item in value]
        rows = all(getattr(item, "pk", None) is not None for item in value)
        return sorted(items, key=str) if rows or isinstance(value, set | frozenset) else items
    text = str(value)
    return text if len(text) <= DETAIL_TEXT_MAX else f"{text[:DETAIL_TEXT_MAX]}…"


def purge_expired_audit(*, now: datetime | None = None) -> int:
    """Delete the records older than each organisation's period; returns how many went. Each
    organisation is purged in its own transaction, with an ``audit.purged`` record when any went,
    so a second run the same night deletes nothing and writes nothing."""
    now = now or timezone.now()
    purged = 0
    for org in Organisation.objects.order_by("pk"):
        with transaction.atomic():
            cutoff = now - timedelta(days=org.audit_days)
            count, _ = AuditRecord.objects.filter(org=org, created_at__lt=cutoff).delete()
            if count:
                record_audit(
                    actor=None,
                    org=org,
                    via="nightly",
                    who="audit purge",
                    action="audit.purged",
                    target=f"audit trail of {org.slug}",
                    details={"records": count, "before": cutoff.isoformat(timespec="seconds"), "days": org.audit_days},
                )
        if count:
            logger.info("purged %s audit records of org %s older than %s days", count, org.pk, org.audit_days)
        purged += count
    return purged
