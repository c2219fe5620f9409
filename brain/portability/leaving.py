"""Delete an organisation and everything of it (``manage.py delete_org``, and the admin's delete).

The database's own cascade takes every row that names the organisation, directly or through
another of its rows. What does not name it is taken here: the search counters kept by its id, and
the permission groups tied to it that no other organisation uses. Beat's entries for its nightly
scans and its jobs go with their rows (the registers and jobs apps remove them on delete). The
accounts of its people stay: a person may belong to other organisations.
"""

from __future__ import annotations

import logging

from django.apps import apps
from django.contrib.auth.models import Group
from django.db import models, transaction

from brain.models import Organisation
from brain.portability.decisions import DECISIONS, USER, org_rows

log = logging.getLogger(__name__)


@transaction.atomic
def delete_organisation(*, org: Organisation) -> int:
    """Delete ``org`` and everything of it; return how many rows went."""
    groups = list(own_groups(org).values_list("pk", flat=True))
    org_id = org.pk
    deleted = org.delete()[0]
    # After the rows: the database's triggers move these counters while the passages are deleted.
    counters = apps.get_model("memory", "searchepoch")._default_manager.filter(org_id=org_id).delete()[0]
    gone = Group.objects.filter(pk__in=groups).delete()[0]
    log.warning("organisation %s (%s) deleted: %d rows", org.slug, org.name, deleted + counters + gone)
    return deleted + counters + gone


def rows_of_organisations(org_ids: list[int]) -> dict[str, int]:
    """How many rows of each kind deleting these organisations deletes, by the kind's plural name."""
    counts: dict[str, int] = {}
    for name, decision in DECISIONS.items():
        if decision.org is None or name in (USER,):
            continue
        model = apps.get_model(name)
        count = sum(org_rows(model, decision, org_id).count() for org_id in org_ids)
        if count:
            counts[str(model._meta.verbose_name_plural)] = count
    return counts


def own_groups(org: Organisation) -> models.QuerySet[Group]:
    """The groups tied to ``org`` or chosen for its categories, that no other organisation names."""
    mine = Group.objects.filter(models.Q(organisation_link__org=org) | models.Q(brain_categories__org=org))
    others = Group.objects.filter(
        models.Q(organisation_link__isnull=False) & ~models.Q(organisation_link__org=org)
        | models.Q(brain_categories__isnull=False) & ~models.Q(brain_categories__org=org)
    )
    return mine.exclude(pk__in=others.values("pk")).distinct()
