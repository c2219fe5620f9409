"""Documents for tests, ingested synchronously with the real pipeline."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from brain.actors import Actor
from memory.documents.ingestion import ingest_documents
from memory.documents.saving import add_document
from memory.models import Document


def save(actor: Actor, title: str, content: str, *, ingest: bool = True, **kw: Any) -> Document:
    saved = add_document(actor=actor, title=title, content=content, **kw)
    if ingest and saved.created:
        ingest_documents(document_ids=[saved.document.pk])
    saved.document.refresh_from_db()
    return saved.document


def said(actor: Actor, speaker: str, text: str, at: datetime, conversation: str = "team", **kw: Any) -> Document:
    """One message of a conversation, saved and ingested."""
    return save(actor, speaker, text, speaker=speaker, occurred_at=at, conversation=conversation, **kw)
