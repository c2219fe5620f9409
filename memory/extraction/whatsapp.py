"""Reading a WhatsApp chat export (the .txt "Export chat" writes): one document per day, like a
Slack channel's day, one turn a paragraph with its speaker and clock time.

Phones write each message as a line starting with its date and time, then the sender:

    12/01/2024, 09:02 - Priya Shah: morning!          (Android)
    [12/01/2024, 09:02:13] Priya Shah: morning!       (iPhone)
    1/12/24, 9:02 AM - Priya Shah: morning!           (12-hour clock)

Lines without that start continue the message before them. Lines with a date but no sender are
WhatsApp's own notices (encryption, someone added) and are left out. Whether the day or the
month comes first depends on the phone's language: the file decides (a first number above 12
is a day, a second one above 12 is a day); a file where both stay at 12 or below is read day
first, as most of the world writes it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, date, datetime

from memory.extraction.parsed import ParsedDocument, SourceFile, _document, _stem_title, turn_paragraph

_LINE = re.compile(
    r"^\[?(?P<a>\d{1,2})[/.](?P<b>\d{1,2})[/.](?P<year>\d{2}|\d{4}),?\s+"
    r"(?P<hour>\d{1,2})[:.](?P<minute>\d{2})(?:[:.]\d{2})?\s*(?P<half>[AaPp]\.?\s?[Mm]\.?)?\]?"
    r"(?:\s+-\s+|\s+)(?P<rest>.*)$"
)
_SENDER = re.compile(r"^(?P<name>[^:]{1,80}?):\s(?P<text>.*)$")
_INVISIBLE = re.compile("[\u200e\u200f\u202a-\u202e\u2066-\u2069]")
# What stands in for a photo, a voice note or a deleted message: nothing to search by.
_PLACEHOLDER = re.compile(
    r"^<?(?:(?:media|image|video|audio|sticker|gif|document|contact card) omitted|attached: [^>]*|"
    r"this message was deleted|you deleted this message|null)>?$",
    re.I,
)
MIN_MESSAGES = 3  # fewer dated lines with a sender than this is a text that happens to hold dates


@dataclass
class _Message:
    at: datetime
    sender: str
    lines: list[str] = field(default_factory=list)


def parse_whatsapp(source: SourceFile, text: str) -> list[ParsedDocument] | None:
    """The chat's days as documents, or None when the text is not a WhatsApp export."""
    lines = [_INVISIBLE.sub("", line).replace("\u202f", " ") for line in text.split("\n")]
    matched = [(line, _LINE.match(line.strip())) for line in lines]
    starts = [match for _, match in matched if match]
    first = next((match for line, match in matched if line.strip()), None)
    if first is None or sum(1 for match in starts if _SENDER.match(match["rest"])) < MIN_MESSAGES:
        return None
    day_first = _day_first(starts)
    messages: list[_Message] = []
    notice = False  # a notice's continuation lines are left out with it
    for line, match in matched:
        said = _SENDER.match(match["rest"]) if match else None
        at = _moment(match, day_first) if match else None
        if match and (said is None or at is None):
            notice = True
        elif match and said and at:
            notice = False
            messages.append(_Message(at, said["name"].strip(), [said["text"]]))
        elif messages and not notice:
            messages[-1].lines.append(line)
    return _days(source, messages)


def _day_first(starts: list[re.Match[str]]) -> bool:
    # Month first only when a second number is above 12; a first one above 12, or no sign: day first.
    return not any(int(match["b"]) > 12 for match in starts)


def _moment(match: re.Match[str], day_first: bool) -> datetime | None:
    day, month = (int(match["a"]), int(match["b"])) if day_first else (int(match["b"]), int(match["a"]))
    year = int(match["year"]) + (2000 if len(match["year"]) == 2 else 0)
    hour, minute = int(match["hour"]), int(match["minute"])
    half = (match["half"] or "").lower()[:1]
    if half == "p" and hour < 12:
        hour += 12
    elif half == "a" and hour == 12:
        hour = 0
    try:
        return datetime(year, month, day, hour, minute, tzinfo=UTC)  # as written: the export has no zone
    except ValueError:
        return None


def _days(source: SourceFile, messages: list[_Message]) -> list[ParsedDocument]:
    chat = _stem_title(source.path)
    by_day: dict[date, list[_Message]] = {}
    for message in messages:
        words = " ".join(" ".join(message.lines).split())
        if words and not _PLACEHOLDER.match(words):
            by_day.setdefault(message.at.date(), []).append(message)
    documents = []
    for day, said in sorted(by_day.items()):
        turns = [turn_paragraph(m.sender, f"{m.at:%H:%M}", " ".join(" ".join(m.lines).split())) for m in said]
        participants = list(dict.fromkeys(m.sender for m in said))
        documents.append(
            _document(
                source,
                f"{chat} {day.isoformat()}",
                "\n\n".join(turns),
                "text/markdown",
                "chat",
                external_id=f"whatsapp:{source.rel}:{day.isoformat()}",
                occurred_at=said[0].at,
                metadata={"participants": participants, "messages": len(turns)},
                conversation=f"whatsapp:{source.rel}",
                session=day.isoformat(),
            )
        )
    return documents
