"""Documents for tests, ingested synchronously with the real pipeline."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from pypdf import PdfWriter
from pypdf.generic import ContentStream, DecodedStreamObject, DictionaryObject, NameObject

from brain.core.actors import Actor
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


def write_pdf(
    path: Path, drawing: str | None, *, width: float, height: float, metadata: dict[str, str] | None = None
) -> Path:
    """A one-page PDF at ``path`` whose content stream is ``drawing`` (PDF operators; Helvetica is
    font /F1), or a blank page when it is None."""
    writer = PdfWriter()
    page = writer.add_blank_page(width=width, height=height)
    if drawing is not None:
        font = DictionaryObject(
            {
                NameObject("/Type"): NameObject("/Font"),
                NameObject("/Subtype"): NameObject("/Type1"),
                NameObject("/BaseFont"): NameObject("/Helvetica"),
            }
        )
        page[NameObject("/Resources")] = DictionaryObject(
            {NameObject("/Font"): DictionaryObject({NameObject("/F1"): font})}
        )
        stream = DecodedStreamObject()
        stream.set_data(drawing.encode("latin-1"))
        page.replace_contents(ContentStream(stream, writer))
    if metadata:
        writer.add_metadata(metadata)
    with path.open("wb") as handle:
        writer.write(handle)
    return path
