"""Turn files on disk into documents for ingestion: markdown, text, HTML, PDF, email and Slack exports."""

from __future__ import annotations

import codecs
import email
import html
import io
import json
import mailbox
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email import policy
from email.message import EmailMessage, Message
from email.utils import getaddresses, parsedate_to_datetime
from functools import partial
from pathlib import Path
from typing import Any

from bs4 import BeautifulSoup, Tag
from pypdf import PdfReader

from brain.inputs import storable, storable_json
from memory.markup import soup_to_markdown

MAX_LENGTH = 240
SUPPORTED_SUFFIXES = {".md", ".markdown", ".txt", ".html", ".htm", ".pdf", ".json", ".eml", ".mbox"}


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


class ParseError(Exception):
    """A file could not be read or is not what its suffix claims."""


@dataclass(frozen=True)
class _Source:
    path: Path
    rel: str  # posix path relative to the walk root
    data: bytes


_Parser = Callable[[_Source], list[ParsedDocument]]
_Outcome = tuple[Path, list[ParsedDocument] | ParseError]


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
    source = _Source(path=path, rel=_relative(path, root), data=data)
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


def _document(
    source: _Source,
    title: str,
    content: str,
    content_type: str,
    source_kind: str,
    *,
    external_id: str = "",
    occurred_at: datetime | None = None,
    metadata: dict[str, object] | None = None,
) -> ParsedDocument:
    # What a parser extracted may hold NUL or broken surrogates (PDF text, JSON escapes, email
    # bytes); nobody can fix that in the file, so it is made storable here (brain.inputs).
    return ParsedDocument(
        title=_cut(storable(title)),
        content=storable(content),
        content_type=content_type,
        source_kind=source_kind,
        external_id=storable(external_id or source.rel)[:MAX_LENGTH],
        occurred_at=occurred_at,
        metadata=storable_json({"path": source.rel, **(metadata or {})}),
    )


# Plain text and markdown


def _parse_text(source: _Source) -> list[ParsedDocument]:
    content = _decode(source.data).strip()
    return [_document(source, _stem_title(source.path), content, "text/plain", "upload")] if content else []


def _parse_markdown(source: _Source) -> list[ParsedDocument]:
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


# HTML


def _parse_html(source: _Source) -> list[ParsedDocument]:
    soup = BeautifulSoup(_decode(source.data), "html.parser")
    title = _html_title(soup) or _stem_title(source.path)
    content = soup_to_markdown(soup)
    return [_document(source, title, content, "text/markdown", "upload")] if content else []


def _html_title(soup: BeautifulSoup) -> str:
    for tag in (soup.find("title"), soup.find("h1")):
        if isinstance(tag, Tag) and (text := _cut(tag.get_text(" "))):
            return text
    return ""


# PDF


def _parse_pdf(source: _Source) -> list[ParsedDocument]:
    try:
        reader = PdfReader(io.BytesIO(source.data))
        pages = [(page.extract_text() or "").strip() for page in reader.pages]
    except Exception as exc:  # pypdf has no single error type for damaged files
        raise ParseError(f"not a readable PDF: {source.rel} ({exc})") from exc
    content = "\n\n".join(page for page in pages if page)
    if not content:
        raise ParseError(f"no extractable text (scanned PDF?): {source.rel}")
    info = reader.metadata
    title, author = ((info.title or "").strip(), (info.author or "").strip()) if info else ("", "")
    metadata: dict[str, object] = {"pages": len(pages), **({"author": author} if author else {})}
    title = title or _stem_title(source.path)
    return [_document(source, title, content, "text/plain", "upload", occurred_at=_pdf_date(reader), metadata=metadata)]


def _pdf_date(reader: PdfReader) -> datetime | None:
    try:
        created = reader.metadata.creation_date if reader.metadata else None
    except ValueError:  # malformed date strings are common in the wild
        return None
    return _utc(created) if created else None


# Email


def _parse_eml(source: _Source) -> list[ParsedDocument]:
    return [_email_document(source, source.data, index=0)]


def _parse_mbox(source: _Source) -> list[ParsedDocument]:
    box = mailbox.mbox(source.path, create=False)
    try:
        raw_messages = [box.get_bytes(key) for key in box.iterkeys()]
    finally:
        box.close()
    if not raw_messages:
        raise ParseError(f"no messages found (not an mbox file?): {source.rel}")
    return [_email_document(source, raw, index) for index, raw in enumerate(raw_messages)]


def _email_document(source: _Source, raw: bytes, index: int) -> ParsedDocument:
    message = email.message_from_bytes(raw, policy=policy.default)
    sender, to, cc = _header(message, "From"), _addresses(message, "To"), _addresses(message, "Cc")
    subject, date = _header(message, "Subject"), _header(message, "Date")
    body, content_type = _email_body(message)
    fields = [("From", sender), ("To", ", ".join(to)), ("Cc", ", ".join(cc)), ("Date", date), ("Subject", subject)]
    head = "\n".join(f"{name}: {value}" for name, value in fields if value)
    metadata: dict[str, object] = {"from": sender, "to": to, "cc": cc, "subject": subject}
    if isinstance(message, EmailMessage):
        metadata["attachments"] = [name for part in message.iter_attachments() if (name := part.get_filename())]
    return _document(
        source,
        subject or "(no subject)",
        f"{head}\n\n{body}".strip(),
        content_type,
        "email",
        external_id=_header(message, "Message-ID") or f"email:{source.rel}#{index}",
        occurred_at=_email_date(date),
        metadata=metadata,
    )


def _header(message: Message, name: str) -> str:
    return " ".join(str(message.get(name, "")).split())


def _addresses(message: Message, name: str) -> list[str]:
    pairs = getaddresses([str(value) for value in message.get_all(name, [])])
    return [f"{display} <{address}>" if display else address for display, address in pairs if address]


def _email_date(value: str) -> datetime | None:
    try:
        return _utc(parsedate_to_datetime(value)) if value else None
    except (TypeError, ValueError, IndexError):
        return None


def _email_body(message: Message) -> tuple[str, str]:
    part = message.get_body(preferencelist=("plain", "html")) if isinstance(message, EmailMessage) else None
    if part is None:
        return "", "text/plain"
    try:
        text = str(part.get_content())
    except (LookupError, UnicodeError):  # unknown or lying charset declaration
        payload = part.get_payload(decode=True)
        text = payload.decode("latin-1") if isinstance(payload, bytes) else ""
    if part.get_content_subtype() == "html":
        return soup_to_markdown(BeautifulSoup(text, "html.parser")), "text/markdown"
    return text.replace("\r\n", "\n").strip(), "text/plain"


# Slack exports

_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")
_SKIPPED_SUBTYPES = {"channel_join", "channel_leave", "group_join", "group_leave"}
_MENTION = re.compile(r"<@([A-Z0-9]+)(?:\|([^>]*))?>")
_CHANNEL_LINK = re.compile(r"<#[A-Z0-9]+\|([^>]*)>")
_URL_LINK = re.compile(r"<((?:https?|mailto):[^>|]+)(?:\|([^>]*))?>")


def _is_slack_export(folder: Path) -> bool:
    if not ((folder / "channels.json").is_file() or (folder / "users.json").is_file()):
        return False
    channels = [child for child in folder.iterdir() if child.is_dir()]
    return any(_DAY.fullmatch(day.stem) for channel in channels for day in channel.glob("*.json"))


def _walk_slack(folder: Path, root: Path) -> Iterator[_Outcome]:
    parser = partial(_parse_slack_day, users=_load_users(folder))
    for channel in sorted(child for child in folder.iterdir() if child.is_dir() and not child.name.startswith(".")):
        for day in sorted(channel.glob("*.json")):
            if _DAY.fullmatch(day.stem):
                yield day, _attempt(partial(_run, day, root, parser))


def _load_users(folder: Path) -> dict[str, str]:
    # Without a readable user list speakers fall back to their ids: worse names, but no lost messages.
    try:
        users = json.loads(_decode((folder / "users.json").read_bytes()))
    except (OSError, ValueError, ParseError):
        return {}
    users = users if isinstance(users, list) else []
    return {user["id"]: _user_name(user) for user in users if isinstance(user, dict) and "id" in user}


def _user_name(user: dict[str, Any]) -> str:
    profile = user.get("profile")
    profile = profile if isinstance(profile, dict) else {}
    for name in (user.get("real_name"), profile.get("real_name"), profile.get("display_name"), user.get("name")):
        if isinstance(name, str) and name.strip():
            return name.strip()
    return str(user["id"])


def _parse_slack_file(source: _Source) -> list[ParsedDocument]:
    # A day file on its own may still sit in an export, two folders up, whose user list names the speakers.
    return _parse_slack_day(source, users=_load_users(source.path.parent.parent))


def _parse_slack_day(source: _Source, *, users: dict[str, str]) -> list[ParsedDocument]:
    try:
        messages = json.loads(_decode(source.data))
    except ValueError as exc:
        raise ParseError(f"invalid JSON in {source.rel}: {exc}") from exc
    if not isinstance(messages, list) or not all(isinstance(m, dict) and "ts" in m for m in messages):
        raise ParseError(f"not a Slack export day file: {source.rel}")
    kept = [m for m in messages if m.get("subtype") not in _SKIPPED_SUBTYPES]
    said = [(_speaker(m, users), _slack_time(m), text) for m in kept if (text := _message_text(m, users))]
    if not said:
        return []
    channel, times = source.path.parent.name, [moment for _, moment, _ in said if moment]
    first = times[0] if times else None
    day = source.path.stem if _DAY.fullmatch(source.path.stem) else (first.date().isoformat() if first else "")
    # Times are UTC like every other timestamp here; one turn per paragraph so a chunker can split between turns.
    turns = [f"**{who}** ({at.strftime('%H:%M') if at else '--:--'}): {text}" for who, at, text in said]
    participants = list(dict.fromkeys(who for who, _, _ in said))
    metadata: dict[str, object] = {"channel": channel, "participants": participants, "messages": len(turns)}
    content = "\n\n".join(turns)
    title, external_id = f"#{channel} {day}", f"slack:{channel}:{day}"
    return [
        _document(
            source,
            title,
            content,
            "text/markdown",
            "chat",
            external_id=external_id,
            occurred_at=first,
            metadata=metadata,
        )
    ]


def _slack_time(message: dict[str, Any]) -> datetime | None:
    try:
        return datetime.fromtimestamp(float(message["ts"]), UTC)
    except (TypeError, ValueError, OverflowError, OSError):
        return None


def _speaker(message: dict[str, Any], users: dict[str, str]) -> str:
    user = message.get("user")
    if isinstance(user, str) and user in users:
        return users[user]
    profile = message.get("user_profile")
    if isinstance(profile, dict) and (name := profile.get("real_name") or profile.get("display_name")):
        return str(name)
    return str(user or message.get("username") or "unknown")


def _message_text(message: dict[str, Any], users: dict[str, str]) -> str:
    text = str(message.get("text") or "")
    text = _MENTION.sub(lambda m: f"@{users.get(m.group(1)) or m.group(2) or m.group(1)}", text)
    text = _CHANNEL_LINK.sub(lambda m: f"#{m.group(1)}", text)
    text = html.unescape(_URL_LINK.sub(lambda m: f"[{m.group(2)}]({m.group(1)})" if m.group(2) else m.group(1), text))
    files = [f"[file: {f['name']}]" for f in message.get("files") or [] if isinstance(f, dict) and f.get("name")]
    # A blank line inside one message would split its speaker turn into two paragraphs.
    return re.sub(r"\n\s*\n+", "\n", " ".join([text.strip(), *files]).strip())


_PARSERS: dict[str, _Parser] = {
    ".md": _parse_markdown, ".markdown": _parse_markdown, ".txt": _parse_text, ".html": _parse_html,
    ".htm": _parse_html, ".pdf": _parse_pdf, ".json": _parse_slack_file, ".eml": _parse_eml, ".mbox": _parse_mbox,
}  # fmt: skip
