"""A document's ingestion status in words, for the Add knowledge page and its status endpoint."""

from __future__ import annotations

from typing import Any

from django.urls import reverse

from memory.documents.saving import OUT_OF_USAGE, PAUSED, why_waiting
from memory.models import Document, Upload

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
        "url": reverse("memory-document", args=[document.pk]) + query,
    }


def upload_status(upload: Upload, *, org_slug: str) -> dict[str, Any]:
    """What the page shows of one uploaded file: its reading, then what became of its documents."""
    query = f"?org={org_slug}"
    status, detail = _upload_state(upload)
    return {
        "id": f"upl_{upload.pk}",
        "title": upload.name,
        "status": status.value,
        "label": LABELS[status],
        "detail": detail,
        "final": status in FINAL,
        "scope": upload.scope,
        "category": upload.category.name,
        "status_url": reverse("add-knowledge-upload-status", args=[upload.pk]) + query,
        "retry_url": reverse("add-knowledge-upload-retry", args=[upload.pk]) + query,
        "can_retry": upload.status == Status.FAILED and not upload.document_ids,
        "url": _upload_link(upload, query),
    }


def _upload_link(upload: Upload, query: str) -> str:
    """Where an upload's row leads once it has documents: its document, or the first of several."""
    first = min(upload.document_ids or [0])
    return reverse("memory-document", args=[first]) + query if first else ""


def _upload_state(upload: Upload) -> tuple[Status, str]:
    if upload.status == Status.QUEUED:
        return Status.QUEUED, "Saved; waiting for the worker to read it."
    if upload.status == Status.PROCESSING:
        return Status.PROCESSING, "Being read."
    if upload.status == Status.FAILED and not upload.document_ids:
        return Status.FAILED, f"Not added: {upload.error or 'reading it failed without a reason being recorded.'}"
    documents = list(Document.objects.filter(pk__in=upload.document_ids).select_related("org"))
    if len(documents) == 1 and not upload.error:
        only = documents[0]
        return Status(only.status), detail(only)
    counts = {state: sum(1 for d in documents if d.status == state) for state in Status}
    plural = "s" if len(documents) != 1 else ""
    made = f"Read into {len(documents):,} document{plural}: {counts[Status.READY]:,} searchable"
    made += f", {counts[Status.FAILED]:,} failed" if counts[Status.FAILED] else ""
    left = len(documents) - counts[Status.READY] - counts[Status.FAILED]
    made += f", {left:,} still being indexed." if left else "."
    made += f" {upload.error}" if upload.error else ""
    if left:
        waiting = counts[Status.WAITING] == left
        return (Status.WAITING if waiting else Status.PROCESSING), made
    return (Status.FAILED if counts[Status.FAILED] or upload.error else Status.READY), made
