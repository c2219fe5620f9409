"""Reads of documents and chunks, always through the actor's access filter."""

from __future__ import annotations

from django.db.models import QuerySet

from brain.actors import Actor
from brain.errors import NotFound
from memory.access import readable
from memory.models import Chunk, Document


def list_documents(*, actor: Actor, status: str | None = None) -> QuerySet[Document]:
    documents = Document.objects.filter(readable(actor)).order_by("-recorded_at", "-pk")
    return documents.filter(status=status) if status else documents


def get_document(*, actor: Actor, document_id: int) -> Document:
    document = Document.objects.filter(readable(actor), pk=document_id).first()
    if document is None:
        raise NotFound(f"No document doc_{document_id} in this organisation.")
    return document


def visible_documents(*, actor: Actor, ids: list[int]) -> dict[int, Document]:
    return {d.pk: d for d in Document.objects.filter(readable(actor), pk__in=ids)}


def visible_chunks(*, actor: Actor, ids: list[int]) -> dict[int, Chunk]:
    chunks = Chunk.objects.filter(readable(actor), pk__in=ids).select_related("document")
    return {c.pk: c for c in chunks}


def chunk_ids_within(*, document: Document, chars: int) -> list[int]:
    return list(
        Chunk.objects.filter(document=document, char_start__lt=chars).order_by("ordinal").values_list("pk", flat=True)
    )
