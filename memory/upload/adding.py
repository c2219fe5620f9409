"""What the Add knowledge page saves: each uploaded file as sent, for a worker to read into
documents under the reading budget (memory.upload.reading), or one pasted text through
``add_document``. A file that can be refused at once (a kind Brain does not read, an empty one)
is refused with the reason; the others are kept."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.core.files.uploadedfile import UploadedFile

from brain.core.actors import Actor
from brain.core.errors import InvalidArgument
from brain.core.inputs import checked_text
from brain.core.reviews import checked_interval, checked_steward
from memory.documents.saving import Saved, add_document, resolve_category
from memory.documents.stewardship import steward_may_read
from memory.extraction import ParseError
from memory.limits import MAX_DOCUMENT_CHARS, MAX_TITLE_CHARS
from memory.models import Scope, Upload
from memory.upload.reading import save_upload

SOURCE_KIND = "upload"


@dataclass(frozen=True)
class Refused:
    name: str
    reason: str


@dataclass
class Added:
    saved: list[Saved] = field(default_factory=list)
    uploads: list[Upload] = field(default_factory=list)
    refused: list[Refused] = field(default_factory=list)


def check_place(*, actor: Actor, category: str, scope: str) -> None:
    """Refuse, before anything is read, a category the member may not read or an unknown scope."""
    if scope not in Scope.values:
        raise InvalidArgument("Choose personal or shared.")
    resolve_category(actor=actor, slug=category or None)


def add_files(*, actor: Actor, uploads: list[UploadedFile], category: str, scope: str) -> Added:
    """Keep each file for the worker to read; nothing is parsed while the member waits."""
    check_place(actor=actor, category=category, scope=scope)
    added = Added()
    for upload in uploads:
        name = upload.name or "upload"
        try:
            data = b"".join(upload.chunks())  # at most BRAIN_UPLOAD_MAX_FILE_MB (memory.upload.files)
            added.uploads.append(save_upload(actor=actor, name=name, data=data, category=category, scope=scope))
        except ParseError as exc:
            added.refused.append(Refused(name, str(exc)))
    return added


def add_text(
    *,
    actor: Actor,
    title: str,
    content: str,
    category: str,
    scope: str,
    steward_id: str | None = None,
    review_every_days: str | None = None,
) -> Saved:
    """Save a pasted text; its steward (who keeps it correct) and review interval are optional, and
    a steward who could not read it where it is placed is refused."""
    check_place(actor=actor, category=category, scope=scope)
    steward = checked_steward(org=actor.org, user_id=steward_id)
    every_days = checked_interval(review_every_days)
    placed = resolve_category(actor=actor, slug=category or None)
    if steward is not None and not steward_may_read(
        steward, org=actor.org, category_id=placed.pk, scope=scope, owner_id=actor.user.pk
    ):
        raise InvalidArgument(
            "Choose a steward who can read it"
            + (": a personal text is looked after by you." if scope == Scope.PERSONAL else " in this category.")
        )
    return add_document(
        actor=actor,
        title=checked_text(title, "The title", MAX_TITLE_CHARS, required=True),
        content=checked_text(content, "The text", MAX_DOCUMENT_CHARS, required=True),
        content_type="text/markdown",
        source_kind=SOURCE_KIND,
        category=category or None,
        scope=scope,
        steward=steward,
        review_every_days=every_days,
    )
