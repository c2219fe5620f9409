"""Reading mail: .eml files and .mbox archives, one document per message."""

from __future__ import annotations

import email
import mailbox
import re
from datetime import datetime
from email import policy
from email.message import EmailMessage, Message
from email.utils import getaddresses, parsedate_to_datetime
from pathlib import Path

from bs4 import BeautifulSoup

from memory.extraction.markup import soup_to_markdown
from memory.extraction.parsed import ParsedDocument, ParseError, SourceFile, _document, _utc


def _parse_eml(source: SourceFile) -> list[ParsedDocument]:
    return [_email_document(source, source.data, index=0)]


def _parse_mbox(source: SourceFile) -> list[ParsedDocument]:
    box = mailbox.mbox(source.path, create=False)
    try:
        raw_messages = [box.get_bytes(key) for key in box.iterkeys()]
    finally:
        box.close()
    if not raw_messages:
        raise ParseError(f"no messages found (not an mbox file?): {source.rel}")
    return [_email_document(source, raw, index) for index, raw in enumerate(raw_messages)]


def read_message(raw: bytes, *, name: str) -> tuple[ParsedDocument, Message]:
    """One message as the .eml reader reads it (``name`` stands in for its file name), and the
    parsed message, for what else a caller reads from it (its attachments)."""
    message = email.message_from_bytes(raw, policy=policy.default)
    return _message_document(SourceFile(path=Path(name), rel=name, data=b""), message, index=0), message


def _email_document(source: SourceFile, raw: bytes, index: int) -> ParsedDocument:
    return _message_document(source, email.message_from_bytes(raw, policy=policy.default), index)


def _message_document(source: SourceFile, message: Message, index: int) -> ParsedDocument:
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
        speaker=_sender_name(sender),
        conversation=_thread(message, subject),
    )


def _sender_name(sender: str) -> str:
    pairs = getaddresses([sender])
    name, address = pairs[0] if pairs else ("", "")
    return name or address or sender


def _thread(message: Message, subject: str) -> str:
    """The thread a message belongs to, named by its first message: the first one it refers to,
    or itself; without ids, its subject without "Re:" and "Fwd:" in front."""
    first = (_header(message, "References").split() or _header(message, "In-Reply-To").split() or [""])[0]
    first = first or _header(message, "Message-ID")
    if first:
        return f"mail:{first}"
    topic = re.sub(r"^(\s*(re|fwd?|aw|wg)\s*:\s*)+", "", subject, flags=re.I).strip().lower()
    return f"mail:{topic}" if topic else ""


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
    text = text.replace("\r\n", "\n")
    if str(part.get_param("format") or "").lower() == "flowed":
        text = unflow(text, delsp=str(part.get_param("delsp") or "").lower() == "yes")
    return text.strip(), "text/plain"


_QUOTE_MARKS = re.compile(r"^>+")


def unflow(text: str, *, delsp: bool = False) -> str:
    """A format=flowed body (RFC 3676) as the lines its writer meant: a line that ends with a space
    goes on in the next line of the same quote depth; a line opening with a space was stuffed."""
    lines: list[str] = []
    open_depth: str | None = None  # the quote marks of a line that goes on in the next, if any
    for raw in text.split("\n"):
        quote = _QUOTE_MARKS.match(raw)
        marks = quote.group(0) if quote else ""
        body = raw[len(marks) :]
        body = body[1:] if body.startswith(" ") else body
        flowed = body.endswith(" ") and body != "-- "
        if flowed and delsp:
            body = body[:-1]
        if open_depth is not None and open_depth == marks and lines:
            lines[-1] += body
        else:
            lines.append(f"{marks} {body}" if marks else body)
        open_depth = marks if flowed else None
    return "\n".join(line.rstrip() if line != "-- " else line for line in lines)
