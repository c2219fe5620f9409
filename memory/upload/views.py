"""The Add knowledge page: a member uploads files or pastes a text into a category they may read,
personal or shared, then watches each item's ingestion until it is ready or failed (and retries)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.core.exceptions import RequestDataTooBig, TooManyFilesSent
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.csrf import csrf_exempt, csrf_protect
from django.views.decorators.http import require_GET, require_POST

from brain.core.actors import Actor
from brain.core.errors import DomainError, NotFound
from brain.faces.web import member_organisations, notice_with_undo, web_actor
from brain.models import Category
from memory.access import readable_category_ids
from memory.documents.ingestion import retry_document
from memory.documents.saving import Saved
from memory.documents.selectors import get_document, visible_documents
from memory.documents.stewardship import steward_choices
from memory.extraction import SUPPORTED_SUFFIXES
from memory.models import Upload
from memory.upload.adding import Added, Refused, add_files, add_text
from memory.upload.files import READABLE, LimitedUploads, file_limit_text, max_file_bytes, max_files
from memory.upload.reading import get_upload, retry_upload, visible_uploads
from memory.upload.status import status_of, upload_status

SESSION_KEY = "brain_added_documents"
UPLOADS_KEY = "brain_added_uploads"
SHOWN = 100  # items of the last submission listed (a mailbox may hold thousands)


@csrf_exempt  # the size limit must be in place before the body is read; CSRF is checked in _submit
@login_required
def add_knowledge(request: HttpRequest) -> HttpResponse:
    if request.method != "POST":
        return _page(request)
    limits = LimitedUploads(request)
    request.upload_handlers = [limits, *request.upload_handlers]
    try:
        _ = request.POST, request.FILES  # the body is read here, under the limits
    except (TooManyFilesSent, RequestDataTooBig):
        return _page(request, error=_too_much(), status=413)  # nothing was saved, so no token is needed
    return _submit(request, limits)


@csrf_protect
def _submit(request: HttpRequest, limits: LimitedUploads) -> HttpResponse:
    actor = web_actor(request)
    category, scope = request.POST.get("category", ""), request.POST.get("scope", "shared")
    try:
        if request.POST.get("kind") == "text":
            added = Added(saved=[_text(request, actor, category, scope)])
        else:
            added = _files(request, actor, limits, category, scope)
    except DomainError as exc:
        return _page(request, error=exc.message, status=400)
    for refused in added.refused:
        messages.error(request, f"{refused.name} was not added: {refused.reason}")
    if added.saved or added.uploads:
        request.session[SESSION_KEY] = [saved.document.pk for saved in added.saved][:SHOWN]
        request.session[UPLOADS_KEY] = [upload.pk for upload in added.uploads][:SHOWN]
        _notice(request, actor, added)
    return HttpResponseRedirect(f"{reverse('add-knowledge')}?org={actor.org.slug}")


def _notice(request: HttpRequest, actor: Actor, added: Added) -> None:
    """What was saved; a single new document gets an Undo, which moves it to the trash (the delete
    page's POST, whose own notice can restore it)."""
    if not added.saved:
        messages.success(request, _kept_message(added.uploads))
        return
    new = [saved.document for saved in added.saved if saved.created]
    if len(added.saved) == 1 and len(new) == 1 and not added.uploads:
        undo = f"{reverse('memory-document-delete', args=[new[0].pk])}?org={actor.org.slug}"
        notice_with_undo(request, _saved_message(added.saved), undo_url=undo)
    else:
        messages.success(request, _saved_message(added.saved))


def _text(request: HttpRequest, actor: Actor, category: str, scope: str) -> Saved:
    post = request.POST
    return add_text(
        actor=actor,
        title=post.get("title", ""),
        content=post.get("content", ""),
        category=category,
        scope=scope,
        steward_id=post.get("steward"),
        review_every_days=post.get("review_every_days"),
    )


def _files(request: HttpRequest, actor: Actor, limits: LimitedUploads, category: str, scope: str) -> Added:
    if limits.too_many:
        raise DomainError(_too_much(chosen=limits.chosen))
    uploads = request.FILES.getlist("files")
    if not uploads and not limits.too_large:
        raise DomainError("Choose at least one file.")
    added = add_files(actor=actor, uploads=uploads, category=category, scope=scope)
    for name in limits.too_large:
        added.refused.insert(0, _too_large(name))
    return added


def _too_large(name: str) -> Refused:
    return Refused(name, f"it is larger than {file_limit_text()}, the most one file may be.")


def _too_much(chosen: int | None = None) -> str:
    you_chose = f" (you chose {chosen})" if chosen else ""
    limits = f"Choose at most {max_files()} files at a time{you_chose}, each at most {file_limit_text()}"
    return f"{limits}; nothing was saved."


def _saved_message(saved: list[Saved]) -> str:
    new = sum(1 for s in saved if s.created)
    same = len(saved) - new
    parts = [f"{new} item{'s' if new != 1 else ''} saved"] if new else []
    parts += [f"{same} already saved and unchanged"] if same else []
    whose = "Its" if len(saved) == 1 else "Their"
    return f"{', '.join(parts)}. {whose} progress is shown below."


def _kept_message(uploads: list[Upload]) -> str:
    files = f"{len(uploads)} file{'s' if len(uploads) != 1 else ''}"
    return f"{files} saved; each is read into documents in the background. Progress is shown below."


def _page(request: HttpRequest, *, error: str = "", status: int = 200) -> HttpResponse:
    actor = web_actor(request)
    upload_ids = request.session.get(UPLOADS_KEY, [])
    uploads = visible_uploads(actor=actor, ids=upload_ids)
    items = [upload_status(uploads[pk], org_slug=actor.org.slug) for pk in upload_ids if pk in uploads]
    ids = request.session.get(SESSION_KEY, [])
    found = visible_documents(actor=actor, ids=ids)
    items += [status_of(found[pk], org_slug=actor.org.slug) for pk in ids if pk in found]
    context = {
        "org": actor.org,
        "orgs": member_organisations(cast(User, request.user)),
        "categories": Category.objects.filter(pk__in=readable_category_ids(actor=actor)).order_by("name"),
        "default_category": Category.DEFAULT_SLUG,
        "items": items,
        "error": error,
        "readable": READABLE,
        "accept": ",".join(sorted(SUPPORTED_SUFFIXES)),
        "max_files": max_files(),
        "max_file_bytes": max_file_bytes(),
        "file_limit": file_limit_text(),
        "form": request.POST if error else {},
        "members": steward_choices(actor),
    }
    return render(request, "memory/add/add.html", context, status=status)


@login_required
@require_GET
def document_status(request: HttpRequest, document_id: int) -> JsonResponse:
    """One document's status, for the page's polling; a document the member may not read is a 404."""
    actor = web_actor(request)
    try:
        document = get_document(actor=actor, document_id=document_id)
    except NotFound:
        return JsonResponse({"error": "No such document."}, status=404)
    return JsonResponse(status_of(document, org_slug=actor.org.slug))


@login_required
@require_POST
def retry(request: HttpRequest, document_id: int) -> HttpResponse:
    def again(actor: Actor) -> tuple[dict[str, Any], str]:
        get_document(actor=actor, document_id=document_id)  # the page retries only what it may show
        document = retry_document(actor=actor, document_id=document_id)
        return status_of(document, org_slug=actor.org.slug), f"{document.title}: queued again."

    return _answer_retry(request, again)


@login_required
@require_GET
def upload_status_view(request: HttpRequest, upload_id: int) -> JsonResponse:
    """One uploaded file's reading and its documents, for the page's polling; only its sender's."""
    actor = web_actor(request)
    try:
        upload = get_upload(actor=actor, upload_id=upload_id)
    except NotFound:
        return JsonResponse({"error": "No such upload."}, status=404)
    return JsonResponse(upload_status(upload, org_slug=actor.org.slug))


@login_required
@require_POST
def retry_upload_view(request: HttpRequest, upload_id: int) -> HttpResponse:
    def again(actor: Actor) -> tuple[dict[str, Any], str]:
        upload = retry_upload(actor=actor, upload_id=upload_id)
        return upload_status(upload, org_slug=actor.org.slug), f"{upload.name}: queued to be read again."

    return _answer_retry(request, again)


def _answer_retry(request: HttpRequest, again: Callable[[Actor], tuple[dict[str, Any], str]]) -> HttpResponse:
    """Run a retry for the page: its status as JSON for the page's script, else a message and
    back to the page; a refusal answered the same two ways."""
    actor = web_actor(request)
    wants_json = "application/json" in request.headers.get("Accept", "")
    back = HttpResponseRedirect(f"{reverse('add-knowledge')}?org={actor.org.slug}")
    try:
        status, said = again(actor)
    except DomainError as exc:
        if wants_json:
            return JsonResponse({"error": exc.message}, status=exc.status)
        messages.error(request, exc.message)
        return back
    if wants_json:
        return JsonResponse(status)
    messages.success(request, said)
    return back
