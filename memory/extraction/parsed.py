"""What every file format's reader shares: the parsed document, errors, decoding and dates."""

from __future__ import annotations

import codecs
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from brain.core.inputs import storable, storable_json

MAX_LENGTH = 240


@dataclass(frozen=True)
class ParsedDocument:
    title: str
    content: str
    content_type: str
    source_kind: str
    external_id: str
    occurred_at: datetime | None
    metadata: dict[str, object] = field(default_factory=dict)
    source_url: str = ""
    speaker: str = ""  # who wrote it, when it is one message (an e-mail)
    conversation: str = ""  # the thread or channel it belongs to
    session: str = ""  # the sitting within it (a channel's day)


class ParseError(Exception):
    """A file could not be read or is not what its suffix claims."""


@dataclass(frozen=True)
class SourceFile:
    path: Path
    rel: str  # posix path relative to the walk root
    data: bytes


_Parser = Callable[[SourceFile], list[ParsedDocument]]
_Outcome = tuple[Path, list[ParsedDocument] | ParseError]


def _attempt(parse: Callable[[], list[ParsedDocument]]) -> list[ParsedDocument] | ParseError:
    try:
        return parse()
    except ParseError as exc:
        return exc


def _run(path: Path, root: Path | None, parser: _Parser) -> list[ParsedDocument]:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ParseError(f"cannot read {path}: {exc.strerror}") from exc
    if not data.strip():
        return []
    source = SourceFile(path=path, rel=_relative(path, root), data=data)
    try:
        return parser(source)
    except ParseError:
        raise
    except Exception as exc:  # third-party parsers raise many types on malformed input; one file must not stop a walk
        raise ParseError(f"cannot parse {source.rel}: {exc}") from exc


def _relative(path: Path, root: Path | None) -> str:
    try:
        return path.absolute().relative_to((root or path.parent).absolute()).as_posix()
    except ValueError:
        return path.name


def _cut(text: str) -> str:
    return " ".join(text.split())[:MAX_LENGTH]


def _decode(data: bytes) -> str:
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return _newlines(data.decode("utf-16"))  # Windows "Unicode" text: every other byte is NUL
    if b"\x00" in data:
        raise ParseError("binary data in a text file (it contains NUL bytes)")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = data.decode("latin-1")
    return _newlines(text)


def _newlines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _utc(moment: datetime) -> datetime | None:
    # A naive timestamp carries no zone at all; UTC is the least surprising reading. A moment
    # past the calendar once in UTC (9999-12-31 23:59 -12:00) is no usable date: None.
    try:
        return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
    except OverflowError:
        return None


def _stem_title(path: Path) -> str:
    return _cut(re.sub(r"[_-]+", " ", path.stem)) or path.name


def turn_paragraph(speaker: str, said: str, text: str) -> str:
    """One turn of a chat or meeting as the readers write it and the chunker reads it back
    (``memory.documents.chunking.TURN``): "**Name** (said): text", one paragraph a turn. A "*" in
    a name would end the bold early, so it is left out of the name."""
    return f"**{speaker.replace('*', '')}** ({said}): {text}"


def _document(
    source: SourceFile,
    title: str,
    content: str,
    content_type: str,
    source_kind: str,
    *,
    external_id: str = "",
    occurred_at: datetime | None = None,
    metadata: dict[str, object] | None = None,
    speaker: str = "",
    conversation: str = "",
    session: str = "",
) -> ParsedDocument:
    # What a parser extracted may hold NUL or broken surrogates (PDF text, JSON escapes, email
    # bytes); nobody can fix that in the file, so it is made storable here (brain.core.inputs).
    return ParsedDocument(
        title=_cut(storable(title)),
        content=storable(content),
        content_type=content_type,
        source_kind=source_kind,
        external_id=storable(external_id or source.rel)[:MAX_LENGTH],
        occurred_at=occurred_at,
        metadata=storable_json({"path": source.rel, **(metadata or {})}),
        speaker=_cut(storable(speaker))[:200],
        conversation=storable(conversation)[:240],
        session=storable(session)[:240],
    )
