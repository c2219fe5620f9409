"""The Trash page: what a member deleted or forgot, and for an admin everything of the
organisation they may read, each until the day it is deleted for good, with Restore.

Restoring is a POST with a CSRF token to the service (``memory.documents.trash``), which holds
the rule of who may; what the viewer may not restore is answered as not found. The notice after a
restore carries an Undo that puts it back in the trash (the delete page's POST)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_POST

from brain.core.errors import NotFound
from brain.faces.web import notice_with_undo, web_actor
from memory.access import audience_key
from memory.documents.placement import readers_of
from memory.documents.trash import delete_for_good, list_trash, purge_after, restore_document, trashed_for
from memory.models import Document


@dataclass(frozen=True)
class TrashRow:
    document: Document
    kind: str  # "memory" or "document"
    readers: str  # who reads it once restored, in words
    trashed_by: str
    until: datetime


def _rows(documents: list[Document], viewer: User) -> list[TrashRow]:
    readers: dict[tuple[object, ...], str] = {}  # one wording per audience, as My memories does
    rows = []
    for document in documents:
        audience = audience_key(document.scope, document.owner_id, document.category_id)
        if audience not in readers:
            readers[audience] = readers_of(document, viewer=viewer)
        by = document.trashed_by
        name = "you" if by == viewer else (by.get_full_name() or by.get_username()) if by is not None else ""
        rows.append(
            TrashRow(
                document=document,
                kind="memory" if document.source_kind == "remember" else "document",
                readers=readers[audience],
                trashed_by=name or "someone no longer a member",
                until=purge_after(document),
            )
        )
    return rows


@login_required
def trash_page(request: HttpRequest) -> HttpResponse:
    actor = web_actor(request)
    rows = _rows(list_trash(actor=actor), actor.user)
    context = {"org": actor.org, "rows": rows, "is_admin": actor.is_admin, "days": actor.org.trash_days}
    return render(request, "memory/trash.html", context)


@login_required
@require_POST
def restore_page(request: HttpRequest, document_id: int) -> HttpResponse:
    actor = web_actor(request)
    try:
        restored = restore_document(actor=actor, document_id=document_id)
    except NotFound as exc:
        messages.error(request, exc.message)
        return HttpResponseRedirect(f"{reverse('memory-trash')}?org={actor.org.slug}")
    notice_with_undo(
        request,
        f"Restored: {restored.title}",
        undo_url=f"{reverse('memory-document-delete', args=[restored.document_id])}?org={actor.org.slug}",
    )
    return HttpResponseRedirect(f"{reverse('memory-document', args=[restored.document_id])}?org={actor.org.slug}")


@login_required
def delete_for_good_page(request: HttpRequest, document_id: int) -> HttpResponse:
    """Asks first (GET), then deletes for good (POST): the one act on this page with no undo."""
    actor = web_actor(request)
    back = f"{reverse('memory-trash')}?org={actor.org.slug}"
    if request.method != "POST":
        document = trashed_for(actor=actor).filter(pk=document_id).first()
        if document is None:
            messages.error(request, f"No document doc_{document_id} in your trash.")
            return HttpResponseRedirect(back)
        return render(request, "memory/trash_delete.html", {"org": actor.org, "document": document, "back": back})
    try:
        gone = delete_for_good(actor=actor, document_id=document_id)
    except NotFound as exc:
        messages.error(request, exc.message)
        return HttpResponseRedirect(back)
    messages.success(request, f"Deleted for good: {gone.title}")
    return HttpResponseRedirect(back)
