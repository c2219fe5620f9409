"""Files that arrive attached to what a source brought in (a mail's attachments), read as an
uploaded file is: the same kinds of file and size limit, in a process of its own under the reading
budget (``reading``). The one way other apps read such a file."""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings

from memory.extraction import ParseError
from memory.upload.files import max_file_bytes
from memory.upload.reading import read_within_budget
from memory.upload.sandboxed import safe_name, unreadable_kind


@dataclass(frozen=True)
class Attachment:
    name: str  # one safe file name
    text: str = ""  # what it says; "" when it was not read
    not_read: str = ""  # why it was not read, in words


def max_attachment_bytes() -> int:
    """The largest file read; a larger one is named and not read."""
    return max_file_bytes()


def read_attachment(name: str, data: bytes | None) -> Attachment:
    """The text of one attached file, or why it was not read."""
    name = safe_name(name)
    if not isinstance(data, bytes) or not data.strip():
        return Attachment(name, not_read="it is empty")
    if unreadable_kind(name) is not None:
        return Attachment(name, not_read="Brain does not read this kind of file")
    if len(data) > max_attachment_bytes():
        return Attachment(name, not_read=f"it is larger than {settings.BRAIN_UPLOAD_MAX_FILE_MB} MB")
    try:
        documents = read_within_budget(name, data, seconds=settings.BRAIN_UPLOAD_READ_SECONDS)
    except ParseError as exc:
        return Attachment(name, not_read=str(exc))
    text = "\n\n".join(document.content for document in documents).strip()
    return Attachment(name, text=text) if text else Attachment(name, not_read="there is no text in it")
