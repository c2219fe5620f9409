"""Knowledge with an owner on the members' pages (``memory.documents.stewardship``): a document's
steward and review interval set, "Still correct" said, and the To review page, which opens with the
viewer's Needs-you list and lists what they look after, stale first. A document the viewer may not
read is answered as one that does not exist."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import cast

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_POST

from brain.core.actors import Actor
from brain.core.errors import DomainError, NotFound
from brain.core.needs import list_waiting_work
from brain.core.reviews import stale_since, today
from brain.faces.web import member_organisations, web_actor
from memory.documents.stewardship import (
    looked_after,
    may_set_review,
    may_verify,
    set_document_review,
    steward_choices,
    verify_document,
)
from memory.models import Document
from memory.web.common import message_page


def review_context(actor: Actor, document: Document) -> dict[str, object]:
    """What the document page shows of its review: the stale mark, who looks after it, and the
    button and form for those who may use them."""
    may_set = may_set_review(actor, document) and document.superseded_at is None
    base = f"?org={actor.org.slug}"
    return {
        "stale_since": stale_since(document.review_due_on, on=today(actor.org)) if not document.superseded_at else None,
        "may_verify": may_verify(actor, document) and document.superseded_at is None,
        "may_set": may_set,
        "members": steward_choices(actor, document) if may_set else [],
        "verify_url": reverse("memory-document-review", args=[document.pk, "verify"]) + base,
        "set_url": reverse("memory-document-review", args=[document.pk, "set"]) + base,
    }


@login_required
@require_POST
def document_review(request: HttpRequest, document_id: int, action: str) -> HttpResponse:
    """``verify``: the steward says the document is still correct; ``set``: name its steward and interval."""
    actor = web_actor(request)
    try:
        if action == "verify":
            document = verify_document(actor=actor, document_id=document_id)
            due = f"; next review due on {document.review_due_on:%Y-%m-%d}" if document.review_due_on else ""
            messages.success(request, f"Marked as still correct{due}.")
        elif action == "set":
            post = request.POST
            set_document_review(
                actor=actor,
                document_id=document_id,
                steward_id=post.get("steward"),
                review_every_days=post.get("review_every_days"),
            )
            messages.success(request, "Saved who looks after it.")
        else:
            return message_page(request, title="Not found", message="No such action.", status=404)
    except NotFound as exc:
        return message_page(request, title="Document not found", message=exc.message, status=404)
    except DomainError as exc:
        messages.error(request, exc.message)
    back = request.POST.get("next", "")
    if back == "review":
        return HttpResponseRedirect(f"{reverse('memory-review')}?org={actor.org.slug}")
    return HttpResponseRedirect(f"{reverse('memory-document', args=[document_id])}?org={actor.org.slug}")


@dataclass(frozen=True)
class LookedAfter:
    document: Document
    stale_since: date | None


@login_required
def review_page(request: HttpRequest) -> HttpResponse:
    actor = web_actor(request)
    on = today(actor.org)
    rows = [LookedAfter(d, stale_since(d.review_due_on, on=on)) for d in looked_after(actor=actor)]
    rows.sort(key=lambda row: (row.stale_since is None, row.document.review_due_on or date.max, row.document.title))
    return render(
        request,
        "memory/review.html",
        {
            "org": actor.org,
            "orgs": member_organisations(cast(User, request.user)),
            "waiting": list_waiting_work(user=request.user, org=actor.org),
            "rows": rows,
        },
    )
