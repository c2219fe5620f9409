"""What the Add knowledge page saves: each uploaded file's documents, or one pasted text, through
``add_document`` (which decides what the member may save). A file that cannot be added is refused
with the reason; the others are kept."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.core.files.uploadedfile import UploadedFile

from brain.actors import Actor
from brain.errors import DomainError, InvalidArgument
from brain.inputs import checked_text
from memory.documents.parsing import MAX_CONTENT, MAX_LENGTH, ParsedDocument, ParseError
from memory.documents.saving import Saved, add_document, resolve_category
from memory.models import Scope
from memory.upload.files import read_upload

SOURCE_KIND = "upload"


@dataclass(frozen=True)
class Refused:
    name: str
    reason: str


@dataclass
class Added:
    saved: list[Saved] = field(default_factory=list)
    refused: list[Refused] = field(default_factory=list)


def check_place(*, actor: Actor, category: str, scope: str) -> None:
    """Refuse, before anything is read, a category the member may not read or an unknown scope."""
    if scope not in Scope.values:
        raise InvalidArgument("Choose personal or shared.")
    resolve_category(actor=actor, slug=category or None)


def add_files(*, actor: Actor, uploads: list[UploadedFile], category: str, scope: str) -> Added:
    check_place(actor=actor, category=category, scope=scope)
    added = Added()
    for upload in uploads:
        name = upload.name or "upload"
        try:
            documents = read_upload(upload)
        except ParseError as exc:
            added.refused.append(Refused(name, str(exc)))
            continue
        for parsed in documents:
            try:
                added.saved.append(_save_parsed(actor, parsed, category=category, scope=scope))
            except DomainError as exc:
                added.refused.append(Refused(f"{name} ({parsed.title})", exc.message))
    return added


def add_text(*, actor: Actor, title: str, content: str, category: str, scope: str) -> Saved:
    check_place(actor=actor, category=category, scope=scope)
    return add_document(
        actor=actor,
        title=checked_text(title, "The title", MAX_LENGTH, required=True),
        content=checked_text(content, "The text", MAX_CONTENT, required=True),
        content_type="text/markdown",
        source_kind=SOURCE_KIND,
        category=category or None,
        scope=scope,
    )


def _save_parsed(actor: Actor, parsed: ParsedDocument, *, category: str, scope: str) -> Saved:
    # The reader names a document after its file (or its message or channel and day). Under the
    # member's own prefix, the same file sent again by them is unchanged or its next version, and a
    # colleague's file of the same name stays a document of its own.
    return add_document(
        actor=actor,
        title=parsed.title,
        content=parsed.content,
        content_type=parsed.content_type,
        source_kind=parsed.source_kind,
        source_url=parsed.source_url,
        external_id=f"web:{actor.user.pk}:{parsed.external_id}"[:MAX_LENGTH],
        metadata=parsed.metadata,
        category=category or None,
        scope=scope,
        occurred_at=parsed.occurred_at,
        speaker=parsed.speaker,
        conversation=parsed.conversation,
        session=parsed.session,
    )
