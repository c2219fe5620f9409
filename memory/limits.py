"""How much Brain takes in at once, written once for every way in (MCP, REST, the Add knowledge
page, ``manage.py ingest``) and for the worker that reads uploaded files.

A document past ``MAX_DOCUMENT_CHARS`` is refused by ``add_document`` whichever way it came, with
a message naming the limit; the interfaces' own field limits point here, so they say the same.
An uploaded file is read in the worker under a budget (``memory.upload.reading``): at most
``MAX_PDF_PAGES`` pages, ``MAX_DOCUMENT_CHARS`` characters of text and ``MAX_DOCUMENTS_PER_FILE``
documents, and ``settings.BRAIN_UPLOAD_READ_SECONDS`` of processor time; what passes any of them
is refused with the reason, which the uploader sees on the page.
"""

from __future__ import annotations

# The text fields a save takes, and their longest: the Document model's columns take their lengths
# from here, and MCP's and REST's argument models, the Add knowledge form and ``add_document`` check
# them. This module imports nothing, so the file reader's process (no Django) reads it too.
FIELD_CHARS = {
    "title": 240,
    "source_url": 1000,
    "external_id": 240,
    "speaker": 200,
    "conversation": 240,
    "session": 240,
}
MAX_TITLE_CHARS = FIELD_CHARS["title"]
MAX_DOCUMENT_CHARS = 2_000_000  # characters of one document, on every way in
MAX_METADATA_CHARS = 20_000  # a document's metadata, written out, on every way in
MAX_DOCUMENTS_PER_FILE = 1_000  # documents one uploaded file may make (an mbox's messages, a Slack day's)
MAX_PDF_PAGES = 2_000  # pages of one uploaded PDF
# Drawing instructions of all pages of one PDF, counted before any text is read: a page that
# draws a stream another page drew counts again, so pages repeating one huge stream are refused
# at once instead of after the processor-time budget (pypdf reads about 0.25 to 0.5 MB a second).
MAX_PDF_DRAWING_BYTES = 32 * 1024 * 1024
# A document longer than this is ingested in the bulk lane (queue ``ingest_bulk``), so a few long
# documents never hold the lane where short ones pass (memory.documents.lanes).
BULK_CHARS = 100_000


def too_long(what: str, length: int) -> str:
    """The refusal of a text past ``MAX_DOCUMENT_CHARS``, the same words on every way in."""
    return (
        f"{what} is {length:,} characters long; one document may hold at most {MAX_DOCUMENT_CHARS:,}. "
        "Split it into several documents."
    )


def too_many_documents(count: int) -> str:
    return (
        f"it holds {count:,} documents; one file may make at most {MAX_DOCUMENTS_PER_FILE:,}. "
        "Split it into several files."
    )


def metadata_problem(metadata: dict[str, object] | None) -> str | None:
    """Why a document's metadata cannot be kept (too large), or None; the same words on every way in."""
    if metadata and len(str(metadata)) > MAX_METADATA_CHARS:
        return f"metadata is too large (keep it under {MAX_METADATA_CHARS:,} characters)"
    return None


def field_problem(name: str, value: str) -> str | None:
    """Why a saved text field cannot be kept (too long), or None; the same words on every way in."""
    if len(value) > FIELD_CHARS[name]:
        return f"{name} is {len(value):,} characters long; it may hold at most {FIELD_CHARS[name]:,}."
    return None
