"""The library of what Brain knows: every document the viewer may read, and a directory of the
entities they may see, each paged, narrowed and ordered through the query string (so a filtered
view is a link). Each is paid for as one read of memory (``brain.faces.web.page_read``)."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.contrib.auth.decorators import login_required
from django.core.paginator import Page, Paginator
from django.http import HttpRequest, HttpResponse, QueryDict
from django.shortcuts import render

from brain.faces.web import page_read, web_actor
from brain.mcp.meter import OutOfCredits
from memory.documents.selectors import LIBRARY_ORDERS, LibraryFilter, library_choices, list_library
from memory.graph.entity_views import entity_views
from memory.graph.reads import entity_type_counts, list_entity_directory
from memory.models import Document
from memory.web.common import message_page

PER_PAGE = 50
TEXT_LIMIT = 200  # the longest title or name searched for


def same_view(query: QueryDict, **changes: str) -> str:
    """The query string of the current view with ``changes`` (an empty value drops its key)."""
    kept = {key: value for key, value in query.items() if value}
    kept.update(changes)
    return "?" + urlencode({key: value for key, value in kept.items() if value})


def _page(request: HttpRequest, rows: Any) -> Page:
    return Paginator(rows, PER_PAGE).get_page(request.GET.get("page"))


@login_required
def documents_page(request: HttpRequest) -> HttpResponse:
    actor = web_actor(request)
    sort = request.GET.get("sort", "-added")
    chosen = LibraryFilter(
        kind=request.GET.get("kind", "")[:40],
        category=request.GET.get("category", "")[:80],
        status=request.GET.get("status", "")[:16],
        title=request.GET.get("title", "")[:TEXT_LIMIT],
        sort=sort if sort in LIBRARY_ORDERS else "-added",
    )
    try:
        with page_read(actor, "documents"):
            page = _page(request, list_library(actor=actor, chosen=chosen))
            kinds, categories = library_choices(actor=actor)
            rows = list(page.object_list)
    except OutOfCredits as exc:
        return message_page(request, title="Out of credits", message=exc.message, status=exc.status)
    query = request.GET.copy()
    query.pop("page", None)
    sorts = [
        {
            "label": column.capitalize(),
            "url": same_view(query, sort=column if chosen.sort != column else f"-{column}"),
            "order": {column: "ascending", f"-{column}": "descending"}.get(chosen.sort, ""),
        }
        for column in ("title", "added", "kind")
    ]
    context = {
        "org": actor.org,
        "chosen": chosen,
        "page": page,
        "documents": rows,
        "kinds": kinds,
        "categories": categories,
        "statuses": Document.Status.choices,
        "sorts": sorts,
        "previous_url": same_view(query, page=str(page.previous_page_number())) if page.has_previous() else "",
        "next_url": same_view(query, page=str(page.next_page_number())) if page.has_next() else "",
    }
    return render(request, "memory/documents.html", context)


@login_required
def entities_page(request: HttpRequest) -> HttpResponse:
    actor = web_actor(request)
    name = request.GET.get("q", "")[:TEXT_LIMIT]
    kind = request.GET.get("kind", "")[:40]
    try:
        with page_read(actor, "entities"):
            page = _page(request, list_entity_directory(actor=actor, name=name, type=kind))
            listed = list(page.object_list)
            views = entity_views(actor=actor, entity_ids=[entity.pk for entity in listed])
            kinds = entity_type_counts(actor=actor)
    except OutOfCredits as exc:
        return message_page(request, title="Out of credits", message=exc.message, status=exc.status)
    query = request.GET.copy()
    query.pop("page", None)
    entities = [(views[entity.pk], entity.connections) for entity in listed if entity.pk in views]
    context = {
        "org": actor.org,
        "q": name,
        "kind": kind,
        "kinds": [(k, n, same_view(query, kind=k)) for k, n in kinds.items()],
        "all_kinds_url": same_view(query, kind=""),
        "page": page,
        "entities": entities,
        "previous_url": same_view(query, page=str(page.previous_page_number())) if page.has_previous() else "",
        "next_url": same_view(query, page=str(page.next_page_number())) if page.has_next() else "",
    }
    return render(request, "memory/entities.html", context)
