"""A member's own documents: delete one (into the trash, with an Undo that restores it), or take a
shared one back into their personal memory.

Each is a confirmation page (GET) that says who reads the document now, and a POST with a CSRF
token that calls the service (``memory.documents.placement``), which holds the rule of who may,
checks it again under a lock and records the change in the audit trail. A document the viewer may
not read is answered as one that does not exist; one they read but may not change, with 403."""

from __future__ import annotations

from collections.abc import Callable

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from brain.core.actors import Actor
from brain.core.errors import DomainError, NotFound, PermissionDenied
from brain.faces.times import page_time
from brain.faces.web import notice_with_undo, web_actor
from memory.documents.placement import (
    delete_document,
    make_document_personal,
    may_delete,
    may_make_personal,
    readers_of,
)
from memory.documents.selectors import get_document
from memory.models import Document
from memory.web.common import message_page


def _confirm(
    request: HttpRequest,
    document_id: int,
    *,
    action: str,
    allowed: Callable[[Actor, Document], bool],
    refusal: str,
    act: Callable[[Actor, Document], HttpResponseRedirect],
) -> HttpResponse:
    actor = web_actor(request)
    try:
        document = get_document(actor=actor, document_id=document_id)
    except NotFound as exc:
        return message_page(request, title="Document not found", message=exc.message, status=404)
    if not allowed(actor, document):
        return message_page(request, title="Not yours to change", message=refusal, status=403)
    if request.method == "POST":
        try:
            return act(actor, document)
        except PermissionDenied as exc:
            return message_page(request, title="Not yours to change", message=exc.message, status=403)
        except DomainError as exc:
            return message_page(request, title=document.title, message=exc.message, status=exc.status)
    readers = readers_of(document, viewer=actor.user)
    context = {"document": document, "action": action, "readers": readers, "org": actor.org}
    return render(request, "memory/confirm_change.html", context)


@login_required
@require_http_methods(["GET", "POST"])
def delete_page(request: HttpRequest, document_id: int) -> HttpResponse:
    def act(actor: Actor, document: Document) -> HttpResponseRedirect:
        trashed = delete_document(actor=actor, document_id=document.pk)
        notice_with_undo(
            request,
            f"Deleted: {trashed.title}. It is in the trash until {page_time(trashed.until, actor.org)}.",
            undo_url=f"{reverse('memory-trash-restore', args=[trashed.document_id])}?org={actor.org.slug}",
        )
        return HttpResponseRedirect(f"{reverse('memory-documents')}?org={actor.org.slug}")

    return _confirm(
        request,
        document_id,
        action="delete",
        allowed=may_delete,
        refusal="Only the member who added this document, or an admin, may delete it.",
        act=act,
    )


@login_required
@require_http_methods(["GET", "POST"])
def make_personal_page(request: HttpRequest, document_id: int) -> HttpResponse:
    def act(actor: Actor, document: Document) -> HttpResponseRedirect:
        moved = make_document_personal(actor=actor, document_id=document.pk)
        messages.success(request, f"Now personal: only you read {moved.title}.")
        return HttpResponseRedirect(f"{reverse('memory-document', args=[moved.pk])}?org={actor.org.slug}")

    return _confirm(
        request,
        document_id,
        action="make personal",
        allowed=may_make_personal,
        refusal="Only the member who added this shared document may make it personal.",
        act=act,
    )
