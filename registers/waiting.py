"""The registers' part of the work waiting for people (brain.core.needs): open contradictions to answer,
where the register is switched on (a pair touching a personal memory stays its owner's), and terms
members proposed, for an admin to accept or reject on the registers page."""

from __future__ import annotations

from collections.abc import Sequence

from django.db.models import Count
from django.urls import reverse

from brain.core.needs import Waiting, per_organisation
from brain.models import Organisation
from registers.contradictions.services import without_personal
from registers.models import Contradiction, Term


def contradictions_to_answer(orgs: Sequence[Organisation]) -> list[Waiting]:
    open_ = Contradiction.objects.filter(
        org__in=orgs, org__features__contradictions=True, state=Contradiction.State.OPEN
    )
    counts = dict(without_personal(open_).order_by().values_list("org").annotate(n=Count("pk")))
    url = f"{reverse('admin:registers_contradiction_changelist')}?state__exact={Contradiction.State.OPEN}"
    return per_organisation(
        orgs, counts, what=("contradiction to answer", "contradictions to answer"), url=lambda org: url, order=2
    )


def terms_to_accept(orgs: Sequence[Organisation]) -> list[Waiting]:
    proposed = Term.objects.filter(org__in=orgs, org__features__glossary=True, state=Term.State.OPEN).exclude(
        proposal=""
    )
    counts = dict(proposed.order_by().values_list("org").annotate(n=Count("pk")))
    return per_organisation(
        orgs,
        counts,
        what=("proposed term to accept", "proposed terms to accept"),
        url=lambda org: f"{reverse('registers')}?org={org.slug}#glossary",
        order=3,
    )
