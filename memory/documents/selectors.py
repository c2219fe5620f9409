"""Reads of documents and chunks, always through the actor's access filter."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import urlencode

from django.db.models import Count, QuerySet
from django.urls import reverse

from brain.core.actors import Actor
from brain.core.errors import NotFound
from brain.core.needs import Waiting, per_organisation
from brain.models import Organisation
from memory.access import current, outside_trash, readable
from memory.models import Chunk, Document, Scope


def list_documents(*, actor: Actor, status: str | None = None) -> QuerySet[Document]:
    documents = Document.objects.filter(readable(actor)).order_by("-recorded_at", "-pk")
    return documents.filter(status=status) if status else documents


def memory_is_empty(*, actor: Actor) -> bool:
    """Whether the actor may read no document at all yet (a fresh install, or nothing shared)."""
    return not Document.objects.filter(readable(actor)).exists()


def get_document(*, actor: Actor, document_id: int) -> Document:
    document = Document.objects.filter(readable(actor), pk=document_id).first()
    if document is None:
        raise NotFound(f"No document doc_{document_id} in this organisation.")
    return document


def visible_documents(*, actor: Actor, ids: list[int]) -> dict[int, Document]:
    return {d.pk: d for d in Document.objects.filter(readable(actor), pk__in=ids)}


def visible_chunks(*, actor: Actor, ids: list[int]) -> dict[int, Chunk]:
    chunks = Chunk.objects.filter(readable(actor), pk__in=ids).select_related("document", "document__category")
    return {c.pk: c for c in chunks}


def chunk_ids_within(*, document: Document, chars: int) -> list[int]:
    return list(
        Chunk.objects.filter(document=document, char_start__lt=chars).order_by("ordinal").values_list("pk", flat=True)
    )


def list_passages(*, actor: Actor, document: Document) -> list[Chunk]:
    return list(Chunk.objects.filter(readable(actor), document=document).order_by("ordinal"))


MAX_VERSIONS = 50


def list_versions(*, actor: Actor, document: Document) -> list[Document]:
    """The document's versions the caller may read, oldest first: the ones it replaced (through
    ``previous``) and the ones that replaced it, as far as the chain stays readable."""
    documents = Document.objects.filter(readable(actor))
    earlier: list[Document] = []
    seen = {document.pk}
    step: Document | None = document
    while step is not None and step.previous_id and step.previous_id not in seen and len(earlier) < MAX_VERSIONS:
        step = documents.filter(pk=step.previous_id).first()
        if step is not None:
            earlier.insert(0, step)
            seen.add(step.pk)
    later: list[Document] = []
    step = document
    while step is not None and len(later) < MAX_VERSIONS:
        step = documents.filter(previous_id=step.pk).exclude(pk__in=seen).order_by("-version", "-pk").first()
        if step is not None:
            later.append(step)
            seen.add(step.pk)
    return [*earlier, document, *later]


def list_saved_documents(*, actor: Actor, limit: int = 200) -> list[Document]:
    """The current versions of the documents the caller saved (not their remembered memories)."""
    mine = Document.objects.filter(current(), readable(actor), owner=actor.user)
    return list(mine.exclude(source_kind="remember").order_by("-recorded_at", "-pk")[:limit])


# The documents page's orders: query value -> ORM order (the last key keeps pages stable).
LIBRARY_ORDERS = {
    "title": ("title", "pk"),
    "-title": ("-title", "-pk"),
    "added": ("recorded_at", "pk"),
    "-added": ("-recorded_at", "-pk"),
    "kind": ("source_kind", "-recorded_at", "-pk"),
    "-kind": ("-source_kind", "-recorded_at", "-pk"),
}


@dataclass(frozen=True)
class LibraryFilter:
    """What the documents page narrows to: empty strings narrow nothing."""

    kind: str = ""
    category: str = ""  # a category's slug
    status: str = ""
    title: str = ""
    sort: str = "-added"


def list_library(*, actor: Actor, chosen: LibraryFilter) -> QuerySet[Document]:
    """The current version of every document the caller may read, narrowed and ordered as chosen."""
    rows = Document.objects.filter(current(), readable(actor)).select_related("category", "owner")
    if chosen.kind:
        rows = rows.filter(source_kind=chosen.kind)
    if chosen.category:
        rows = rows.filter(category__slug=chosen.category)
    if chosen.status:
        rows = rows.filter(status=chosen.status)
    if chosen.title.strip():
        rows = rows.filter(title__icontains=chosen.title.strip())
    return rows.order_by(*LIBRARY_ORDERS.get(chosen.sort, LIBRARY_ORDERS["-added"]))


def library_choices(*, actor: Actor) -> tuple[list[str], list[tuple[str, str]]]:
    """The kinds of source and the categories (slug, name) among the documents the caller may read."""
    rows = Document.objects.filter(current(), readable(actor))
    kinds = list(rows.order_by("source_kind").values_list("source_kind", flat=True).distinct())
    categories = rows.order_by("category__name").values_list("category__slug", "category__name").distinct()
    return kinds, list(categories)


def documents_that_failed(orgs: Sequence[Organisation]) -> list[Waiting]:
    """Memory's part of the work waiting for people (brain.core.needs): current shared documents that
    failed, retried from the overview (personal ones are their owners')."""
    failed = Document.objects.filter(
        current(), outside_trash(), org__in=orgs, scope=Scope.SHARED, status=Document.Status.FAILED
    )
    counts = dict(failed.order_by().values_list("org").annotate(n=Count("pk")))

    def url(org: Organisation) -> str:
        return f"{reverse('overview')}?{urlencode({'org': org.slug})}#documents"

    return per_organisation(orgs, counts, what=("document that failed", "documents that failed"), url=url, order=4)
