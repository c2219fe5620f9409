"""Files a member adds on the Add knowledge page: the limits on count and size, kept while the
files arrive. Reading them is the worker's (memory.upload.reading)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.files.uploadhandler import FileUploadHandler, SkipFile
from django.http import HttpRequest

from memory.upload.sandboxed import READABLE

__all__ = ["READABLE", "LimitedUploads", "file_limit_text", "max_file_bytes", "max_files"]


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
