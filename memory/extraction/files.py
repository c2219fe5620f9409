"""Reading files and folders into documents: the walk, the formats by suffix, text, markdown, HTML, PDF."""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from datetime import datetime
from functools import partial
from pathlib import Path

from bs4 import BeautifulSoup, Tag
from pypdf import PageObject, PdfReader

from memory.extraction.mail import _parse_eml, _parse_mbox
from memory.extraction.markup import soup_to_markdown
from memory.extraction.parsed import (
    ParsedDocument,
    ParseError,
    SourceFile,
    _attempt,
    _cut,
    _decode,
    _document,
    _Outcome,
    _Parser,
    _run,
    _stem_title,
    _utc,
)
from memory.extraction.slack import _is_slack_export, _parse_slack_file, _walk_slack
from memory.extraction.transcripts import parse_srt, parse_vtt
from memory.extraction.whatsapp import parse_whatsapp
from memory.limits import MAX_DOCUMENT_CHARS, MAX_PDF_DRAWING_BYTES, MAX_PDF_PAGES

SUPPORTED_SUFFIXES = {".md", ".markdown", ".txt", ".html", ".htm", ".pdf", ".json", ".eml", ".mbox", ".vtt", ".srt"}


def parse_file(path: Path, *, root: Path | None = None) -> list[ParsedDocument]:
    parser = _PARSERS.get(path.suffix.lower())
    if parser is None:
        raise ParseError(f"unsupported file type {path.suffix or '(no suffix)'}: {path}")
    return _run(path, root, parser)


def iter_documents(paths: list[Path]) -> Iterator[_Outcome]:
    for path in paths:
        if path.is_dir():
            yield from _walk(path, root=path)
        else:
            # An explicitly named file is always attempted, so an unsupported one is reported rather than dropped.
            yield path, _attempt(partial(parse_file, path, root=path.parent))


def _walk(folder: Path, root: Path) -> Iterator[_Outcome]:
    try:
        is_slack_export, children = _is_slack_export(folder), sorted(folder.iterdir())
    except OSError as exc:
        yield folder, ParseError(f"cannot list folder {folder}: {exc.strerror}")
        return
    if is_slack_export:
        yield from _walk_slack(folder, root)
        return
    for child in children:
        if child.name.startswith("."):
            continue
        if child.is_dir():
            if not child.is_symlink():  # avoid cycles through linked folders
                yield from _walk(child, root)
        elif child.suffix.lower() in SUPPORTED_SUFFIXES:
            yield child, _attempt(partial(parse_file, child, root=root))


def _parse_text(source: SourceFile) -> list[ParsedDocument]:
    content = _decode(source.data).strip()
    if (chat := parse_whatsapp(source, content)) is not None:
        return chat
    return [_document(source, _stem_title(source.path), content, "text/plain", "upload")] if content else []


def _parse_markdown(source: SourceFile) -> list[ParsedDocument]:
    content = _decode(source.data).strip()
    title = _markdown_title(content) or _stem_title(source.path)
    return [_document(source, title, content, "text/markdown", "upload")] if content else []


def _markdown_title(text: str) -> str:
    in_fence = False
    for line in text.splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            in_fence = not in_fence  # a '# ' line inside a code block is a shell comment, not a heading
        elif not in_fence and (match := re.match(r"#\s+(.+?)\s*#*\s*$", line)):
            return match.group(1)
    return ""


def _parse_html(source: SourceFile) -> list[ParsedDocument]:
    soup = BeautifulSoup(_decode(source.data), "html.parser")
    title = _html_title(soup) or _stem_title(source.path)
    content = soup_to_markdown(soup)
    return [_document(source, title, content, "text/markdown", "upload")] if content else []


def _html_title(soup: BeautifulSoup) -> str:
    for tag in (soup.find("title"), soup.find("h1")):
        if isinstance(tag, Tag) and (text := _cut(tag.get_text(" "))):
            return text
    return ""


def _parse_pdf(source: SourceFile) -> list[ParsedDocument]:
    try:
        reader = PdfReader(io.BytesIO(source.data))
        pages = _pdf_pages(reader)
    except ParseError:
        raise
    except Exception as exc:  # pypdf has no single error type for damaged files
        raise ParseError(f"not a readable PDF: {source.rel} ({exc})") from exc
    content = "\n\n".join(page for page in pages if page).translate(_PDF_GLYPHS)
    if not content:
        raise ParseError(f"no extractable text (scanned PDF?): {source.rel}")
    info = reader.metadata
    title, author = ((info.title or "").strip(), (info.author or "").strip()) if info else ("", "")
    metadata: dict[str, object] = {"pages": len(pages), **({"author": author} if author else {})}
    title = title or _stem_title(source.path)
    created = _pdf_date(reader)
    if created is not None:  # the file's own date: what its relative dates count from (memory.documents.source)
        metadata["file_created"] = created.isoformat()
    return [_document(source, title, content, "text/plain", "upload", occurred_at=created, metadata=metadata)]


def _pdf_pages(reader: PdfReader) -> list[str]:
    """Each page's text, within the budget: a file of many pages, or of pages that all draw one
    huge content stream, is refused before its text is extracted whole (memory.limits)."""
    if len(reader.pages) > MAX_PDF_PAGES:
        raise ParseError(f"it has {len(reader.pages):,} pages; a PDF may have at most {MAX_PDF_PAGES:,}.")
    drawn = 0
    for page in reader.pages:  # cheap: a stream is decompressed once however many pages draw it
        contents = page.get_contents()
        drawn += len(contents.get_data()) if contents is not None else 0
        if drawn > MAX_PDF_DRAWING_BYTES:
            raise ParseError(
                f"its pages hold more than {MAX_PDF_DRAWING_BYTES // 1024**2} MB of drawing instructions, the most "
                "a PDF may hold (pages that repeat one large page count each time); split the file."
            )
    pages, total = [], 0
    for page in reader.pages:
        text = _page_text(page).strip()
        total += len(text)
        if total > MAX_DOCUMENT_CHARS:
            raise ParseError(
                f"its text passes {MAX_DOCUMENT_CHARS:,} characters, the most one document may hold; split the file."
            )
        pages.append(text)
    return pages


# Glyphs some writers' fonts map to the wrong characters: modifier letters for an apostrophe and a
# closing quote ("CNCFʼs", "Licenseˮ", which search would read as one word with the letter), and
# private-use points for the brackets around an abbreviation, which are no characters at all.
_PDF_GLYPHS = {0x02BC: "\u2019", 0x02EE: "\u201d", **{point: None for point in range(0xE000, 0xF900)}}

_PARAGRAPH_GAP = 1.4  # a gap between lines this many times the usual one ends a paragraph
_LEADING = 1.2  # a line's usual height, in its font size
_HEADING_SIZE = 1.15  # a line in a font this much larger than the next heads it


def _page_text(page: PageObject) -> str:
    """A page's text as pypdf extracts it, with a blank line where the layout leaves a gap between
    lines wider than the usual line spacing (and than the lines' own font sizes need), except after a
    line in a larger font, which heads the lines under it: a PDF keeps no paragraphs, only where
    lines stand, and without the gap a paragraph's last line would be read as wrapped into the next."""
    lines: list[tuple[str, float | None, float]] = [("", None, 0.0)]  # words, height on the page, font size

    def visit(text: str, cm: list[float], tm: list[float], _font: object, size: object) -> None:
        y = tm[4] * cm[1] + tm[5] * cm[3] + cm[5]
        height = float(size) * abs(tm[3] * cm[3]) if isinstance(size, int | float) else 0.0
        for n, piece in enumerate(text.split("\n")):
            if n:
                lines.append(("", None, 0.0))
            words, at, tallest = lines[-1]
            if piece.strip():
                at, tallest = (y if at is None else at), max(tallest, height)
            lines[-1] = (words + piece, at, tallest)

    page.extract_text(visitor_text=visit)
    lines = _on_baselines(lines)
    placed = [y for _, y, _ in lines if y is not None]
    gaps = sorted(a - b for a, b in zip(placed, placed[1:], strict=False) if a - b > 0)
    usual = gaps[(len(gaps) - 1) // 4] if gaps else 0.0  # the spacing of lines within a paragraph
    out: list[str] = []
    before: tuple[float, float] | None = None  # the last placed line's height on the page and font size
    for words, y, size in lines:
        # A line in a larger font than the one after it heads what follows: no break after it.
        heads = before is not None and before[1] > _HEADING_SIZE * size
        if usual and y is not None and before is not None and out and not heads:
            needed = _PARAGRAPH_GAP * max(usual, _LEADING * max(size, before[1]))
            if before[0] - y > needed:
                out.append("")
        out.append(words)
        before = (y, size) if y is not None else before
    return "\n".join(out)


_SAME_BASELINE = 0.5  # points: pieces drawn this near one height stand on one line


def _on_baselines(lines: list[tuple[str, float | None, float]]) -> list[tuple[str, float | None, float]]:
    """Pieces drawn on one baseline joined into the line they stand on. Some writers draw every word
    on its own and pypdf returns each one a line, with a line of a space between: read as it comes,
    every word would be a paragraph of its own."""
    out: list[tuple[str, float | None, float]] = []
    between: list[tuple[str, float | None, float]] = []  # lines with nothing drawn since the last placed one
    for words, y, size in lines:
        if y is None:
            if words.strip() or not out:
                between.append((words, y, size))
            continue
        last = out[-1] if out and not any(w.strip() for w, _, _ in between) else None
        if last is not None and last[1] is not None and abs(last[1] - y) < _SAME_BASELINE:
            joint = "" if last[0].endswith(" ") or words.startswith(" ") else " "
            out[-1] = (last[0] + joint + words, last[1], max(last[2], size))
        else:
            out.extend(between)
            out.append((words, y, size))
        between = []
    return out + between


def _pdf_date(reader: PdfReader) -> datetime | None:
    try:
        created = reader.metadata.creation_date if reader.metadata else None
    except ValueError:  # malformed date strings are common in the wild
        return None
    return _utc(created) if created else None


_PARSERS: dict[str, _Parser] = {
    ".md": _parse_markdown,
    ".markdown": _parse_markdown,
    ".txt": _parse_text,
    ".html": _parse_html,
    ".htm": _parse_html,
    ".pdf": _parse_pdf,
    ".json": _parse_slack_file,
    ".eml": _parse_eml,
    ".mbox": _parse_mbox,
    ".vtt": parse_vtt,
    ".srt": parse_srt,
}
