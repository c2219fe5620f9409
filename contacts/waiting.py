"""Contacts' part of the work waiting for people (brain.core.needs): requests to people not answered yet."""

from __future__ import annotations

from collections.abc import Sequence

from django.db.models import Count
from django.urls import reverse

from brain.core.needs import Waiting, per_organisation
from brain.models import Organisation
from contacts.models import HumanRequest

WAITING = [
    HumanRequest.Status.QUEUED,
    HumanRequest.Status.SENDING,
    HumanRequest.Status.SENT,
    HumanRequest.Status.DELIVERED,
    HumanRequest.Status.NOT_SENT,  # kept without a mail server: the asker passes its link on
]


def requests_waiting(orgs: Sequence[Organisation]) -> list[Waiting]:
    waiting = HumanRequest.objects.filter(org__in=orgs, status__in=WAITING)
    counts = dict(waiting.order_by().values_list("org").annotate(n=Count("pk")))
    url = f"{reverse('admin:contacts_humanrequest_changelist')}?status__in={','.join(WAITING)}"
    return per_organisation(
        orgs,
        counts,
        what=("request waiting for an answer", "requests waiting for an answer"),
        url=lambda org: url,
        order=3,
    )
