"""A document's ingestion status in words, for the Add knowledge page and its status endpoint."""

from __future__ import annotations

from typing import Any

from django.urls import reverse

from memory.documents.saving import OUT_OF_USAGE, PAUSED, why_waiting
from memory.models import Document

Status = Document.Status
FINAL = frozenset({Status.READY, Status.FAILED})
LABELS = {
    Status.QUEUED: "Queued",
    Status.WAITING: "Waiting",
    Status.PROCESSING: "Processing",
    Status.READY: "Ready",
    Status.FAILED: "Failed",
}
WAITING = {
    PAUSED: "Ingestion is paused for this organisation; it starts by itself when an admin resumes it.",
    OUT_OF_USAGE: "This organisation's usage has run out; it starts by itself once an admin adds credits "
    "or the month's free reads renew.",
    "": "It will be queued again within a minute.",
}


def detail(document: Document) -> str:
    if document.status == Status.QUEUED:
        return "Saved; waiting for the worker to take it."
    if document.status == Status.WAITING:
        return WAITING[why_waiting(document.org)]
    if document.status == Status.PROCESSING:
        return "Being split into passages and indexed."
    if document.status == Status.READY:
        passages = "passage" if document.chunk_count == 1 else "passages"
        return f"Searchable: {document.chunk_count} {passages}."
    return document.error or "Ingestion failed without a reason being recorded."


def status_of(document: Document, *, org_slug: str) -> dict[str, Any]:
    """What the page shows of one document the member may read."""
    status = Status(document.status)
    query = f"?org={org_slug}"
    return {
        "id": document.public_id,
        "title": document.title,
        "status": status.value,
        "label": LABELS[status],
        "detail": detail(document),
        "final": status in FINAL,
        "scope": document.scope,
        "category": document.category.name,
        "status_url": reverse("add-knowledge-status", args=[document.pk]) + query,
        "retry_url": reverse("add-knowledge-retry", args=[document.pk]) + query,
        "can_retry": status == Status.FAILED,
    }
