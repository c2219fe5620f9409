"""The members' read-only page of the registers: what their own token would list."""

from __future__ import annotations

from typing import cast

from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from brain.models import Organisation
from brain.services import actor_for_user
from registers.commitments.services import list_commitments
from registers.common import switched_on
from registers.contradictions.services import list_contradictions
from registers.glossary.services import glossary

SHOWN = 100


@login_required
def registers_page(request: HttpRequest) -> HttpResponse:
    user = cast(User, request.user)
    sections = []
    for org in Organisation.objects.filter(memberships__user=user).order_by("name"):
        on = switched_on(org)
        if not on:
            continue
        actor = actor_for_user(org=org, user=user, via="web")
        sections.append({
            "org": org,
            "commitments": list_commitments(actor=actor, state="open", limit=SHOWN) if "commitments" in on else None,
            "contradictions": list_contradictions(actor=actor, limit=SHOWN) if "contradictions" in on else None,
            "terms": glossary(actor=actor, state="defined", limit=SHOWN * 2) if "glossary" in on else None,
        })  # fmt: skip
    return render(request, "registers/registers.html", {"sections": sections})
