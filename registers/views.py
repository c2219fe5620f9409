"""The members' read-only page of the registers: what their own token would list."""

from __future__ import annotations

from typing import Any, cast

from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from brain.actors import Actor
from brain.mcp.meter import OutOfCredits
from brain.models import Organisation
from brain.services import actor_for_user
from brain.web import page_read, switched_off
from memory.documents.source import UPLOAD_DATED
from registers.commitments.services import list_commitments
from registers.common import switched_on
from registers.contradictions.services import list_contradictions
from registers.glossary.services import glossary

SHOWN = 100


@login_required
def registers_page(request: HttpRequest) -> HttpResponse:
    user = cast(User, request.user)
    sections, off = [], []
    for org in Organisation.objects.filter(memberships__user=user).order_by("name"):
        on = switched_on(org)
        if not on:
            off.append(org)
            continue
        actor = actor_for_user(org=org, user=user, via="web")
        try:
            with page_read(actor, "registers"):
                sections.append(_section(actor, on))
        except OutOfCredits as exc:
            sections.append({"org": org, "refusal": exc.message})
    refused = bool(sections) and all("refusal" in section for section in sections)
    context = {"sections": sections, "off": switched_off(user, off), "upload_dated": UPLOAD_DATED}
    return render(request, "registers/registers.html", context, status=402 if refused else 200)


def _section(actor: Actor, on: set[str]) -> dict[str, Any]:
    return {
        "org": actor.org,
        "commitments": list_commitments(actor=actor, state="open", limit=SHOWN) if "commitments" in on else None,
        "contradictions": list_contradictions(actor=actor, limit=SHOWN) if "contradictions" in on else None,
        "terms": glossary(actor=actor, state="defined", limit=SHOWN * 2) if "glossary" in on else None,
    }
