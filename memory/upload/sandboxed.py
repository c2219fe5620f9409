"""Reading one uploaded file into documents, in a process of its own under the reading budget.

``python -m memory.upload.sandboxed FOLDER NAME OUT SECONDS`` reads FOLDER/NAME and writes what it
found to OUT as JSON: ``{"documents": [...]}`` or ``{"error": reason}``. The process limits its
own processor time and memory before it reads anything, so the kernel ends it however the reader
is stuck (pypdf is pure Python, and much of a parser's time is spent where no signal handler
runs); the worker that started it turns such an end into a reason (memory.upload.reading).
"""

from __future__ import annotations

import json
import resource
import sys
from dataclasses import asdict, fields
from datetime import datetime
from pathlib import Path
from typing import Any

from memory.extraction import SUPPORTED_SUFFIXES, ParsedDocument, ParseError, parse_file
from memory.limits import MAX_DOCUMENT_CHARS, MAX_DOCUMENTS_PER_FILE, too_long, too_many_documents

READABLE = (
    ".md, .markdown, .txt (a WhatsApp chat export too), .html, .htm, .pdf, .json (a Slack export day), .eml, .mbox, "
    ".vtt and .srt (meeting transcripts)"
)
MEMORY_BYTES = 2 * 1024**3  # address space of the reading process
MAX_NAME = 120  # characters of a file name kept (file systems refuse names past 255 bytes)


def safe_name(name: str) -> str:
    """The uploaded name as one file name (no folders), short enough for any file system, its
    suffix kept."""
    path = Path(name.replace("/", "_").replace("\\", "_").replace("\x00", ""))
    stem, suffix = path.stem or "upload", path.suffix[:20]
    if stem in (".", ".."):
        stem = "upload"
    return stem[: MAX_NAME - len(suffix)] + suffix


def unreadable_kind(name: str) -> str | None:
    """Why a file of this name is not read at all, or None when its suffix is one Brain reads."""
    suffix = Path(name).suffix.lower()
    if suffix in SUPPORTED_SUFFIXES:
        return None
    kind = f"{suffix} files" if suffix else "files without a suffix"
    return f"Brain does not read {kind}; it reads {READABLE}."


def read_documents(path: Path, *, root: Path) -> list[ParsedDocument]:
    """The documents in one file, or ParseError saying why it cannot be added."""
    if (why := unreadable_kind(path.name)) is not None:
        raise ParseError(why)
    documents = parse_file(path, root=root)
    if not documents:
        raise ParseError("there is no text in it.")
    if len(documents) > MAX_DOCUMENTS_PER_FILE:
        raise ParseError(too_many_documents(len(documents)))
    if longest := max((len(d.content) for d in documents if len(d.content) > MAX_DOCUMENT_CHARS), default=0):
        raise ParseError(too_long("its text", longest))
    return documents


def encode(document: ParsedDocument) -> dict[str, Any]:
    out = asdict(document)
    out["occurred_at"] = document.occurred_at.isoformat() if document.occurred_at else None
    return out


def decode(data: dict[str, Any]) -> ParsedDocument:
    known = {f.name for f in fields(ParsedDocument)}
    values = {k: v for k, v in data.items() if k in known}
    moment = values.get("occurred_at")
    values["occurred_at"] = datetime.fromisoformat(moment) if moment else None
    return ParsedDocument(**values)


def main(argv: list[str]) -> int:
    folder, name, out, seconds = Path(argv[0]), argv[1], Path(argv[2]), int(argv[3])
    resource.setrlimit(resource.RLIMIT_CPU, (seconds, seconds + 5))  # SIGXCPU at the soft limit ends it
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))
    try:
        result: dict[str, Any] = {"documents": [encode(d) for d in read_documents(folder / name, root=folder)]}
    except ParseError as exc:
        result = {"error": str(exc)}
    except MemoryError:
        result = {"error": f"reading it needed more than {MEMORY_BYTES // 1024**2:,} MB of memory; split the file."}
    out.write_text(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
