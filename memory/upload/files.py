"""Files a member adds on the Add knowledge page: the limits, kept while the files arrive, and
reading each one with the readers ``manage.py ingest`` uses (memory.documents.parsers)."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.core.files.uploadhandler import FileUploadHandler, SkipFile
from django.http import HttpRequest

from memory.documents.parsers import SUPPORTED_SUFFIXES, parse_file
from memory.documents.parsing import MAX_CONTENT, ParsedDocument, ParseError

READABLE = (
    ".md, .markdown, .txt (a WhatsApp chat export too), .html, .htm, .pdf, .json (a Slack export day), .eml, .mbox, "
    ".vtt and .srt (meeting transcripts)"
)
MAX_NAME = 120  # characters of a file name kept (file systems refuse names past 255 bytes)


def max_files() -> int:
    return int(settings.BRAIN_UPLOAD_MAX_FILES)


def max_file_bytes() -> int:
    return int(settings.BRAIN_UPLOAD_MAX_FILE_MB) * 1024 * 1024


def file_limit_text() -> str:
    return f"{settings.BRAIN_UPLOAD_MAX_FILE_MB} MB"


class LimitedUploads(FileUploadHandler):
    """The first upload handler of a submission: it drops a file as soon as it passes the size limit,
    and every file past the count, so neither is kept in memory or on disk, and notes which."""

    def __init__(self, request: HttpRequest | None = None) -> None:
        super().__init__(request)
        self.chosen = 0  # files in the submission, kept or not
        self.too_large: list[str] = []

    def new_file(self, field_name: str, file_name: str, *args: Any, **kwargs: Any) -> None:
        super().new_file(field_name, file_name, *args, **kwargs)
        self.chosen += 1
        if self.chosen > max_files():
            raise SkipFile()  # the whole submission is refused; nothing more is kept
        declared = self.content_length
        if declared is not None and declared > max_file_bytes():
            self._refuse()

    def receive_data_chunk(self, raw_data: bytes, start: int) -> bytes:
        if start + len(raw_data) > max_file_bytes():
            self._refuse()
        return raw_data  # the next handler (memory or a temporary file) keeps it

    def file_complete(self, file_size: int) -> None:
        return None  # the next handler makes the file

    @property
    def too_many(self) -> bool:
        return self.chosen > max_files()

    def _refuse(self) -> None:
        self.too_large.append(str(self.file_name))
        raise SkipFile()


def read_upload(upload: UploadedFile) -> list[ParsedDocument]:
    """The documents in one uploaded file, or ParseError saying why it cannot be added."""
    name = _safe_name(upload.name or "")
    suffix = Path(name).suffix.lower()
    if suffix not in SUPPORTED_SUFFIXES:
        kind = f"{suffix} files" if suffix else "files without a suffix"
        raise ParseError(f"Brain does not read {kind}; it reads {READABLE}.")
    # The readers take a path: mailboxes are opened by name, and a Slack day file looks beside it
    # for the export's user list. A folder of its own per file, so neighbours never mix.
    with tempfile.TemporaryDirectory(prefix="brain-upload-") as tmp:
        folder = Path(tmp) / "upload"
        folder.mkdir()
        path = folder / name
        with path.open("wb") as out:
            for piece in upload.chunks():
                out.write(piece)
        documents = parse_file(path, root=folder)
    if not documents:
        raise ParseError("there is no text in it.")
    if any(len(document.content) > MAX_CONTENT for document in documents):
        raise ParseError(f"its text is longer than {MAX_CONTENT:,} characters, the most one document may hold.")
    return documents


def _safe_name(name: str) -> str:
    """The uploaded name (Django already took the folders and unprintable characters off), short
    enough for any file system, its suffix kept."""
    path = Path(name.replace("/", "_").replace("\\", "_"))
    stem, suffix = path.stem or "upload", path.suffix[:20]
    return stem[: MAX_NAME - len(suffix)] + suffix
