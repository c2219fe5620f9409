"""The members' page of the registers: what their own token would list, with the commitments that
concern them to settle (with the note the tools require) and the contradictions they read to
answer. Every change goes through the service the tools call, with its checks and audit record."""

from __future__ import annotations

from typing import Any, cast

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST

from brain.core.actors import Actor
from brain.core.errors import DomainError, NotFound, PermissionDenied
from brain.core.services import actor_for_user
from brain.faces.web import page_read, switched_off, web_actor
from brain.mcp.meter import OutOfCredits
from brain.models import Organisation
from registers.citations import (
    commitments_reach,
    contradiction_sides,
    promise_source,
    said_also,
    verdict_evidence,
)
from registers.commitments.services import Listed, concerns, list_commitments, update_commitment, visible_commitments
from registers.common import switched_on
from registers.contradictions.services import answer_contradiction, list_contradictions, visible_contradictions
from registers.forms import AnswerForm, ProposeForm
from registers.glossary.proposals import accept_term, list_candidates, propose_term, reject_term
from registers.glossary.services import glossary
from registers.models import Contradiction

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
    context = {"sections": sections, "off": switched_off(user, off)}
    return render(request, "registers/registers.html", context, status=402 if refused else 200)


def _section(actor: Actor, on: set[str]) -> dict[str, Any]:
    """One organisation's registers as the actor reads them: every entry with what it rests on
    (the sentence and a link to its passage, never an id)."""
    commitments = list_commitments(actor=actor, state="open", limit=SHOWN) if "commitments" in on else None
    contradictions = list_contradictions(actor=actor, limit=SHOWN) if "contradictions" in on else None
    return {
        "org": actor.org,
        "is_admin": actor.is_admin,
        "commitments": None if commitments is None else _commitments(actor, commitments),
        "settles": {item.commitment.pk for item in commitments or [] if concerns(actor, item.commitment)},
        "contradictions": None if contradictions is None else _contradictions(actor, contradictions),
        "terms": glossary(actor=actor, state="defined", limit=SHOWN * 2) if "glossary" in on else None,
        "candidates": list_candidates(actor=actor, limit=SHOWN) if "glossary" in on else None,
    }


def _contradictions(actor: Actor, entries: list[Contradiction]) -> list[dict[str, Any]]:
    sides = contradiction_sides(actor, entries)
    return [{"entry": entry, "sides": sides[entry.pk]} for entry in entries]


def _commitments(actor: Actor, listed: list[Listed]) -> list[dict[str, Any]]:
    verdicts = [item.verdict.found for item in listed if item.verdict]
    reach = commitments_reach(actor, (item.commitment for item in listed), verdicts)
    return [
        {
            "item": item,
            "source": promise_source(reach, item.commitment),
            "said_also": said_also(reach, item.commitment),
            "evidence": verdict_evidence(reach, item.verdict.found) if item.verdict else [],
        }
        for item in listed
    ]


def _refused(request: HttpRequest, message: str, status: int = 403) -> HttpResponse:
    title = "Not found" if status == 404 else "Not yours to change" if status == 403 else "Not saved"
    return render(request, "memory/message.html", {"title": title, "message": message}, status=status)


def _back(actor: Actor, at: str = "") -> HttpResponseRedirect:
    return HttpResponseRedirect(f"{reverse('registers')}?org={actor.org.slug}" + (f"#{at}" if at else ""))


@login_required
@require_POST
def settle_commitment(request: HttpRequest, commitment_id: int) -> HttpResponse:
    """Mark a commitment that concerns the viewer done or dropped, with a one-line note."""
    actor = web_actor(request)
    commitment = visible_commitments(actor=actor).filter(pk=commitment_id).first()
    if commitment is None:
        return _refused(request, f"No commitment cmt_{commitment_id} that you can see.", 404)
    if not concerns(actor, commitment):
        return _refused(request, "Only the person who owes it, who recorded it, or an admin may settle it here.")
    status = request.POST.get("status", "")
    if status not in ("done", "dropped"):
        return _refused(request, "Choose done or dropped.", 400)
    try:
        update_commitment(
            actor=actor, commitment_id=commitment.public_id, status=status, note=request.POST.get("note", "")
        )
    except DomainError as exc:
        messages.error(request, f"{commitment.what}: {exc.message}")
    else:
        messages.success(request, f"Marked {status}: {commitment.what}")
    return _back(actor)


@login_required
@require_http_methods(["GET", "POST"])
def answer_page(request: HttpRequest, contradiction_id: int) -> HttpResponse:
    """Answer a contradiction the viewer may read: which statement stands, and why."""
    actor = web_actor(request)
    entry = visible_contradictions(actor=actor).filter(pk=contradiction_id).first()
    if entry is None:
        return _refused(request, f"No contradiction ctr_{contradiction_id} that you can see.", 404)
    form = AnswerForm(request.POST or None, statements=2 + len(entry.more))
    if request.method == "POST" and form.is_valid():
        try:
            answer_contradiction(
                actor=actor,
                contradiction_id=entry.public_id,
                answer=form.cleaned_data["answer"],
                note=form.cleaned_data["note"],
            )
        except DomainError as exc:
            form.add_error(None, exc.message)
        else:
            messages.success(request, f"Answered: {entry.about}")
            return _back(actor)
    context = {"entry": entry, "sides": contradiction_sides(actor, [entry])[entry.pk], "form": form, "org": actor.org}
    return render(request, "registers/answer.html", context)


@login_required
@require_POST
def propose_page(request: HttpRequest) -> HttpResponse:
    """A member proposes what a word means here, for an admin to accept."""
    actor = web_actor(request)
    if "glossary" not in switched_on(actor.org):
        return _refused(request, "The glossary is switched off for this organisation.")
    form = ProposeForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Not proposed: " + " ".join(str(e) for errors in form.errors.values() for e in errors))
        return _back(actor)
    try:
        entry = propose_term(actor=actor, **form.cleaned_data)
    except DomainError as exc:
        messages.error(request, f"Not proposed: {exc.message}")
    else:
        messages.success(request, f"Proposed: {entry.term}. An admin will accept or reject it.")
    return _back(actor, "glossary")


@login_required
@require_POST
def decide_term_page(request: HttpRequest, term_id: int) -> HttpResponse:
    """An admin accepts a candidate (with the proposal, the suggestion or their own words) or rejects it."""
    actor = web_actor(request)
    if "glossary" not in switched_on(actor.org):
        return _refused(request, "The glossary is switched off for this organisation.")
    decision = request.POST.get("decision", "")
    try:
        if decision == "accept":
            entry = accept_term(actor=actor, term_id=f"term_{term_id}", definition=request.POST.get("definition"))
            messages.success(request, f"Defined: {entry.term}: {entry.definition}")
        elif decision == "reject":
            left = reject_term(actor=actor, term_id=f"term_{term_id}", note=request.POST.get("note"))
            messages.success(
                request, "Rejected." if left is None or left.state == "open" else f"Dismissed: {left.term}"
            )
        else:
            return _refused(request, "Choose accept or reject.", 400)
    except NotFound as exc:
        return _refused(request, exc.message, 404)
    except PermissionDenied as exc:
        return _refused(request, exc.message)
    except DomainError as exc:
        messages.error(request, exc.message)
    return _back(actor, "glossary")
