"""When a document was said, and who says each part of it.

``read_source`` reads a document the way a person does before taking anything from it: the moment
it speaks from (its own time, a mail's ``Date:`` header, a date in its title or first lines, the
file's own date, and only then the time it was saved), and which parts of it are what someone
said (the body), with who said them. Mail headers, quoted replies, forwarded headers, signatures,
greetings, sign-offs and attendee lines are structure: they are read into fields (sender,
recipients, subject, date, attendees) and left out of the body, so nothing is learnt from them.
In an issue or pull-request thread, each comment's heading ("Matt Duck commented at 2020-07-19
06:22", "mattduck on 2020-07-19:") is structure too: what follows it is said by that person, then.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time
from email.utils import getaddresses, parsedate_to_datetime
from zoneinfo import ZoneInfo

from django.db import transaction

from memory.documents.block_rows import load_blocks, replace_blocks
from memory.documents.chunking import ChunkDraft, chunk, is_conversation, line_paragraphs
from memory.documents.chunking import passages as block_passages
from memory.extraction import CONTENT, TURN, Block, Kind, clean_inline, field_words, plain_kind, read_blocks
from memory.extraction.lines import (
    ATTENDEES,
    DATES,
    FORWARDED,
    GREETING,
    HEADER,
    HEADING,
    LABELS,
    MONTHS,
    NAME_LINE,
    ORIGINAL,
    QUOTED,
    SENT_FROM,
    SIGN_OFF,
    SIGNATURE,
    SPEECH,
    WROTE,
    word_set,
)
from memory.models import Document

MAIL_KINDS = ("email", "mail")
# Sources that are people taking turns.
CONVERSATION_KINDS = ("slack", "chat", "transcript", "meeting", "teams", "discord")
# What the mark on a fact or a promise dated from the upload day says, wherever it is shown.
UPLOAD_DATED = "its source gives no date of its own, so its dates count from the day it was saved"
# How tool outputs describe their ``dated_from_upload`` field.
UPLOAD_DATED_HELP = (
    "Its source says nowhere when it was written, so its dates were read against the day it was saved; they may be off."
)
ORIGINS = ("occurred_at", "header", "title", "opening", "file", "upload")
# Minutes kept under their meeting's day as their title: "2019.01.04", "2019.1.4".
DOTTED_DATE = re.compile(r"(?<![\d.])(?P<year>(?:19|20)\d\d)\.(?P<mm>\d{1,2})\.(?P<day>\d{1,2})(?![\d.])")
# A comment's heading in a thread exported by gh2md: "#### <img ...>[Matt Duck](https://github.com/mattduck)
# commented at [2020-07-19 06:22](...):", "... opened issue at [...]".
THREAD_HEADING = re.compile(
    r"^\s*#{1,6}\s*(?:<img[^>]*>\s*)?\[(?P<name>[^\]\n]{1,80})\]\([^)\s]*\)\s+"
    r"(?:opened|commented|reviewed|merged)\b[^\n\[]{0,40}?\bat\s+\[?(?P<at>\d{4}-\d{2}-\d{2}(?:[ T]\d{2}:\d{2})?)"
)
# A comment's heading as the GitHub connector lays a thread out: "mattduck on 2020-07-19:" on its own line.
THREAD_LINE = re.compile(r"^(?P<name>[\w.\[\]-]{1,60}) on (?P<at>\d{4}-\d{2}-\d{2}):(?:\s+|$)")
# What the connector adds after the comments, said by nobody: a pull request's reviews, its files.
THREAD_END = re.compile(r"^\s*(?:Reviews:|Files:|-{3,}|\[Export of Github \w+ for\b.*)\s*$")
# The titles the connector gives a thread: "Issue owner/repo#12: ...", "Pull request owner/repo#12: ...".
THREAD_TITLE = re.compile(r"^(?:Issue|Pull request) [\w.-]+/[\w.-]+#\d+:")
THREAD_KINDS = ("issue", "pull_request")
_BLANK = re.compile(r"[^\n]")
OPENING_LINES = 5  # lines of the text read for a date when the title has none


@dataclass(frozen=True)
class Moment:
    """When the document speaks from, where that was read, and its day in the organisation's time zone."""

    at: datetime
    origin: str  # one of ORIGINS
    day: date

    @property
    def from_upload(self) -> bool:
        """Nothing in the document says when it was said: the time it was saved stands in."""
        return self.origin == "upload"


@dataclass(frozen=True)
class Segment:
    """A span of the text that is something said, and who said it ('' when nobody is known)."""

    start: int
    end: int
    speaker: str
    at: datetime | None = None  # when it was said, where the text gives its own time (a thread's comment)


@dataclass
class SourceReading:
    moment: Moment
    segments: list[Segment]
    fields: dict[str, object] = field(default_factory=dict)
    zone: ZoneInfo = field(default_factory=lambda: ZoneInfo("UTC"))

    def said_on(self, segment: Segment) -> date:
        """The day ``segment`` was said in the organisation's time zone: its own time (a comment in a
        thread), else the day the document speaks from."""
        return segment.at.astimezone(self.zone).date() if segment.at is not None else self.moment.day

    def speaker_at(self, start: int, end: int | None = None) -> str:
        """Who said what is written from ``start`` to ``end`` of the text (the first body span it
        touches; '' outside the body or when unknown)."""
        end = start + 1 if end is None else max(end, start + 1)
        for segment in self.segments:
            if segment.start < end and start < segment.end:
                return segment.speaker
        return ""

    def speakers(self) -> list[str]:
        """Everyone who says something in the document, and its sender, in order."""
        names = [str(self.fields.get("sender") or ""), *(s.speaker for s in self.segments)]
        return [n for n in dict.fromkeys(names) if n]

    def body(self, text: str) -> str:
        """``text`` with everything but the body blanked out, every offset and line break kept."""
        parts, at = [], 0
        for segment in sorted(self.segments, key=lambda s: s.start):
            if segment.start > at:
                parts.append(_BLANK.sub(" ", text[at : segment.start]))
            parts.append(text[max(at, segment.start) : segment.end])
            at = max(at, segment.end)
        parts.append(_BLANK.sub(" ", text[at:]))
        return "".join(parts)


def read_source(document: Document, text: str, *, passages: Sequence[tuple[int, str]] = ()) -> SourceReading:
    """The moment, body and fields of ``document``, whose text (or the passages of it being read) is
    ``text``. ``passages`` gives where each stored passage starts in ``text`` with its speaker, so a
    passage cut from a longer turn keeps the turn's speaker."""
    fields: dict[str, object] = {}
    segments = _segments(document, text, fields, passages)
    if not fields.get("sender") and document.speaker and _is_mail(document, text):
        fields["sender"] = document.speaker
    return SourceReading(moment=_moment(document, fields), segments=segments, fields=fields, zone=_zone(document))


def _is_mail(document: Document, text: str) -> bool:
    if document.source_kind in MAIL_KINDS:
        return True
    head = [line for line in text.lstrip().splitlines()[:6] if line.strip()]
    return sum(bool(HEADER.match(line)) for line in head) >= 2


# --- the moment ----------------------------------------------------------------------------------


def _zone(document: Document) -> ZoneInfo:
    try:
        return ZoneInfo(document.org.time_zone or "UTC")
    except (ValueError, KeyError):
        return ZoneInfo("UTC")


def _moment(document: Document, fields: dict[str, object]) -> Moment:
    zone = _zone(document)

    def at(moment: datetime, origin: str) -> Moment:
        return Moment(moment, origin, moment.astimezone(zone).date())

    def on(day: date, origin: str) -> Moment:  # a date without a time: midday of that day, where the org is
        return Moment(datetime.combine(day, time(12), tzinfo=zone), origin, day)

    created = _file_created(document)
    if document.occurred_at is not None:
        return at(document.occurred_at, "file" if created == document.occurred_at else "occurred_at")
    header = _mail_date(str(fields.get("date") or "")) or _mail_date(_header_date(document.content))
    if header is not None:
        return at(header, "header")
    titled = find_date(document.title) or _dotted_date(document.title)
    if titled is not None:
        return on(titled, "title")
    opening = find_date("\n".join(document.content.lstrip().splitlines()[:OPENING_LINES]))
    if opening is not None:
        return on(opening, "opening")
    if created is not None:
        return at(created, "file")
    return at(document.recorded_at, "upload")


def _file_created(document: Document) -> datetime | None:
    """The date the file itself carries (a PDF's creation date), when its reader kept it."""
    value = (document.metadata or {}).get("file_created") if isinstance(document.metadata, dict) else None
    try:
        return datetime.fromisoformat(str(value)) if value else None
    except ValueError:
        return None


def _header_date(content: str) -> str:
    for line in content.lstrip().splitlines()[:12]:
        match = HEADER.match(line)
        if match is None:
            break
        if match["name"].lower() in ("date", "sent"):
            return match["value"].strip()
    return ""


def _mail_date(value: str) -> datetime | None:
    if not value:
        return None
    try:
        moment = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        day = find_date(value)
        return datetime.combine(day, time(12), tzinfo=UTC) if day else None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def find_date(text: str) -> date | None:
    """The first whole date written in ``text``: 2025-11-24, 24 Nov 2025, November 24, 2025,
    24/11/2025 (day first, unless only the other order is a date)."""
    found: list[tuple[int, date]] = []
    for pattern in DATES:
        for match in pattern.finditer(text):
            parts = match.groupdict()
            year, day = int(parts["year"]), int(parts["day"])
            month = MONTHS[parts["month"].lower()[:3]] if parts.get("month") else int(parts["mm"])
            if parts.get("mm") and "/" in match.group(0) + "." and month > 12 >= day:
                day, month = month, day  # 11/24/2025 written month first
            try:
                found.append((match.start(), date(year, month, day)))
            except ValueError:
                continue
            break
    return min(found)[1] if found else None


def _dotted_date(title: str) -> date | None:
    """A date written year first with dots ("2019.01.04"), read only in a title: in running text the
    same shape is more often a version."""
    match = DOTTED_DATE.search(title)
    if match is None:
        return None
    try:
        return date(int(match["year"]), int(match["mm"]), int(match["day"]))
    except ValueError:
        return None


# --- the body and its speakers -------------------------------------------------------------------


def _lines(text: str) -> list[tuple[int, str]]:
    out, offset = [], 0
    for line in text.splitlines(keepends=True):
        out.append((offset, line.rstrip("\r\n")))
        offset += len(line)
    return out


_LINK_ONLY = re.compile(r"<?(?:https?://|www\.)\S+")


def _a_field(words: list[str], rest: str, lower_words: frozenset[str]) -> bool:
    """Everyday words as a label, with a short value or the same words in lower case in the text."""
    label = " ".join(words)
    if len(words) < 2 or not field_words(label, lower_words | {w.casefold() for w in words}):
        return False
    return field_words(label, lower_words) or len(rest.split()) <= 4


def _label_speaker(
    line: str, repeated: Counter[str], known: set[str], turns: bool, lower_words: frozenset[str] = frozenset()
) -> tuple[str, int] | None:
    """(speaker, where the words start) when the line opens with a person's turn label."""
    match = TURN.match(line)
    if match is None:
        return None
    name = clean_inline(match["bold"] or match["plain"] or "").strip()
    words = name.split()
    if not name or name.lower() in LABELS or (words and words[0].lower() in LABELS) or re.search(r"\d", name):
        return None
    rest = line[match.end() :].strip()
    wordless = not re.search(r"[^\W\d_]", _LINK_ONLY.sub("", rest))
    if name not in known and (wordless or _a_field(words, rest, lower_words)):
        return None  # "**Policy Owner**: Tech Ops", "Food Tour: $100", "**Link:** https://...": a field
    timed_or_bold = bool(match["time"] or match["bold"])
    # "Brightline Logistics: pilot decision by Friday" in notes is a topic, not a company speaking.
    person_like = all(w[:1].isupper() for w in words) and 2 <= len(words) <= 4 and plain_kind(name) is None
    one_name = len(words) == 1 and words[0][:1].isupper()
    # A one-word label is a turn in a conversation ("Priya: ...", "Sam: ..."), or where the words
    # after it speak for themselves ("Priya: I'll send it").
    speaks = one_name and (turns or SPEECH.match(line[match.end() :]) is not None)
    if timed_or_bold or name in known or (person_like and len(words) >= 2) or repeated[name] >= 2 or speaks:
        return name, match.end()
    return None


def _segments(
    document: Document, text: str, fields: dict[str, object], passages: Sequence[tuple[int, str]]
) -> list[Segment]:
    mail = _is_mail(document, text)
    lines = _lines(text)
    labels: Counter[str] = Counter()
    for _, line in lines:
        if (match := TURN.match(line)) is not None:
            labels[clean_inline(match["bold"] or match["plain"] or "").strip()] += 1
    turns = document.source_kind in CONVERSATION_KINDS  # its one-word labels are names
    lower_words = frozenset(re.findall(r"\b[a-z][a-z'-]+\b", text))
    metadata = document.metadata if isinstance(document.metadata, dict) else {}
    known = {str(s) for s in metadata.get("speakers", []) or []} | ({document.speaker} if document.speaker else set())
    starts = sorted(passages)
    default = document.speaker
    thread = is_thread(document)
    # Who says the comment under way, and when: a thread opens with its author's post.
    commenter = (str(metadata.get("author") or ""), document.occurred_at) if thread else ("", None)
    segments: list[Segment] = []
    in_header = mail  # a mail opens with its headers
    skipping = ""  # "quote", "earlier", "original", "signature": structure until something ends it
    turn = ""  # the speaker of the paragraph under way (a timed or bold turn)
    for start, line in lines:
        stripped = line.strip()
        if not stripped:
            in_header = in_header and not fields  # the headers end at the first blank line after them
            turn = ""
            continue
        comment = _comment_heading(line, thread)
        if comment is not None:
            commenter = comment[:2]
            if comment[2] < len(line):  # the heading and the comment's first words on one line
                segments.append(Segment(start + comment[2], start + len(line), *commenter))
            continue
        if commenter[0] and THREAD_END.match(line):
            commenter = ("", None)
            continue
        header = HEADER.match(line) if (in_header or mail or skipping == "forward") else None
        if header is not None:
            _header_field(fields, header["name"].lower(), header["value"].strip(), forwarded=skipping == "forward")
            if skipping == "forward" and header["name"].lower() == "from":
                default = _display_name(header["value"])
            continue
        in_header = False
        if mail and (QUOTED.match(line) or WROTE.match(line) or ORIGINAL.match(line)):
            # Lines marked '>' are a quote the reply may go on under; after "On ... wrote:" or an
            # "Original Message" line the rest is the earlier message until '>' lines say otherwise.
            if ORIGINAL.match(line):
                skipping = "original"
            elif QUOTED.match(line) and skipping in ("", "quote", "earlier"):
                skipping = "quote"
            elif not QUOTED.match(line) and skipping in ("", "quote"):
                skipping = "earlier"
            continue
        if mail and FORWARDED.match(line):
            skipping = "forward"
            continue
        if skipping in ("forward", "quote"):
            skipping = ""  # the forwarded message's body, said by its own sender; a reply between quotes
        if skipping:
            continue
        if mail and (SIGNATURE.match(line) or SIGN_OFF.match(line) or NAME_LINE.match(line)):
            if segments or not NAME_LINE.match(line):  # a name before the body greets; after it, signs
                skipping = "signature"
            continue
        if HEADING.match(line):
            continue
        if SENT_FROM.match(line) or GREETING.match(line) or SIGN_OFF.match(line) or SIGNATURE.match(line):
            continue
        attendees = ATTENDEES.match(line)
        if attendees is not None:
            value = re.sub(r"\([^)]*\)", "", attendees["value"])  # "Chloé Martin (chair)"
            names = [n.strip(" .*") for n in re.split(r",|;|\band\b", value) if n.strip(" .*")]
            fields.setdefault("attendees", [])
            fields["attendees"] += names  # type: ignore[operator]
            continue
        labelled = _label_speaker(line, labels, known, turns, lower_words)
        if labelled is not None:
            speaker, begin = labelled
            match = TURN.match(line)
            turn = speaker if match is not None and (match["time"] or match["bold"]) else ""
            if line[begin:].strip():
                segments.append(Segment(start + begin, start + len(line), speaker, commenter[1]))
            continue
        owner = max((s for s in starts if s[0] <= start), default=(0, ""))[1] if starts else ""
        speaker = turn or commenter[0] or owner or default or _sender(fields)
        segments.append(Segment(start, start + len(line), speaker, commenter[1]))
    return segments


def is_thread(document: Document) -> bool:
    """An issue or pull request with its comments, as the GitHub connector saves one."""
    metadata = document.metadata if isinstance(document.metadata, dict) else {}
    return metadata.get("kind") in THREAD_KINDS or THREAD_TITLE.match(document.title or "") is not None


def thread_subject(document: Document) -> str:
    """What an issue or pull request is about, as its title says ('' for any other document)."""
    if not is_thread(document):
        return ""
    return THREAD_TITLE.sub("", document.title or "").strip()


def _comment_heading(line: str, thread: bool) -> tuple[str, datetime | None, int] | None:
    """(who, when, where the comment's words start on the line) when ``line`` opens a comment of a
    thread: a gh2md heading anywhere, the connector's "login on 2020-07-19:" in a thread."""
    match, whole = THREAD_HEADING.match(line), True
    if match is None and thread:
        match, whole = THREAD_LINE.match(line), False
    if match is None:
        return None
    name = clean_inline(match["name"]).strip()
    try:
        at = datetime.fromisoformat(match["at"].replace(" ", "T"))
    except ValueError:
        at = None
    if at is not None:
        at = at.replace(tzinfo=UTC) if ":" in match["at"] else datetime.combine(at.date(), time(12), tzinfo=UTC)
    return name, at, len(line) if whole else match.end()


def _sender(fields: dict[str, object]) -> str:
    return str(fields.get("sender") or "")


def _display_name(value: str) -> str:
    pairs = getaddresses([value])
    name, address = pairs[0] if pairs else ("", "")
    return (name or address or value).strip()


def _header_field(fields: dict[str, object], name: str, value: str, *, forwarded: bool) -> None:
    """A header line read into the document's fields (a forwarded message's headers go under
    ``forwarded``, so the mail's own sender and date stay its own)."""
    target: dict[str, object] = fields
    if forwarded:
        inner = fields.setdefault("forwarded", {})
        target = inner if isinstance(inner, dict) else {}
    if name == "from":
        target.setdefault("sender", _display_name(value))
        target.setdefault("sender_address", value)
    elif name in ("to", "cc", "bcc"):
        target.setdefault("recipients", [])
        target["recipients"] = [*target["recipients"], *(n or a for n, a in getaddresses([value]) if n or a)]  # type: ignore[misc]
    elif name in ("date", "sent"):
        target.setdefault("date", value)
    elif name == "subject":
        target.setdefault("subject", value)


# --- speaking as the speaker ------------------------------------------------------------------------

_THIRD = {"am": "is", "have": "has", "do": "does", "don't": "doesn't", "go": "goes", "was": "was"}
_VERBS = word_set(
    """think need want know prefer like expect plan hope agree suggest propose see guess believe send take handle own
    review check call update write prepare share book confirm look work feel mean promise understand remember
    forget owe lead manage approve run sign follow draft post ask intend aim use meet close offer ship deploy support
    host"""
)
_FIRST = re.compile(
    r"\b(?:I(?P<tail>'(?:ll|m|ve|d)|’(?:ll|m|ve|d))?|[Mm]e|[Mm]y|[Mm]ine|[Mm]yself)\b(?:\s+(?P<next>[\w’']+))?"
)
_TAILS = {"'ll": "will", "'m": "is", "'ve": "has", "'d": "would"}


_WE = re.compile(
    r"\b(?:[Ww]e(?P<tail>'(?:ll|re|ve|d)|’(?:ll|re|ve|d))?|[Oo]ur|[Oo]urs|[Uu]s|[Oo]urselves)\b(?:\s+(?P<next>[\w’']+))?"
)
_WE_TAILS = {"'ll": "will", "'re": "is", "'ve": "has", "'d": "would"}
_WE_THIRD = _THIRD | {"are": "is", "were": "was"}


def in_third_person(statement: str, speaker: str, team: str = "") -> str:
    """``statement`` with its speaker named where it says I, me or my: "I'll send the quote" said by
    Marta Ruiz is "Marta Ruiz will send the quote"; and, when the speaker's team is known, the team
    where it says we, us or our. Without a speaker it is left as written."""
    if not speaker:
        return statement
    statement = _FIRST.sub(lambda match: _named(match, speaker, _TAILS, _THIRD), statement)
    if team:
        statement = _WE.sub(lambda match: _named(match, team, _WE_TAILS, _WE_THIRD), statement)
    return statement


def _named(match: re.Match[str], name: str, tails: dict[str, str], third: dict[str, str]) -> str:
    """One first-person word (and the verb after it) said in the third person of ``name``."""
    word, tail, following = match.group(0).split()[0], match["tail"], match["next"]
    rest = match.group(0)[len(word) :]
    lowered = word.lower()
    if lowered in ("my", "mine", "our", "ours"):
        return f"{name}'s{rest}"
    if lowered in ("me", "myself", "us", "ourselves"):
        return f"{name}{rest}"
    if tail:
        return f"{name} {tails[tail.replace('’', chr(39))]}{rest}"
    if following is None:
        return name
    verb = following.lower()
    gap = rest[: len(rest) - len(following)]
    if verb in third:
        return f"{name}{gap}{third[verb]}"
    if verb in _VERBS:
        return f"{name}{gap}{following}{'es' if verb.endswith(('s', 'sh', 'ch', 'o')) else 's'}"
    return f"{name}{rest}"


# --- the document's blocks ---------------------------------------------------------------------------


def is_turns(document: Document) -> bool:
    """A document of a conversation that is not one message (a chat's day, a meeting) is known to be
    turns, however few: it is cut by turns without the chunker having to guess."""
    return bool(document.conversation) and not document.speaker


@dataclass(frozen=True)
class DocumentReading:
    """What ingestion reads from a document once: its blocks (kept, for every later stage) and the
    passages cut from them."""

    blocks: list[Block]
    passages: list[ChunkDraft]


def read_document(document: Document) -> DocumentReading:
    """The blocks and passages of ``document``, from one parse. A conversation read by turns keeps
    blocks read as turns (for its page); its passages are its turns."""
    markdown = document.content_type == "text/markdown"
    mail = _is_mail(document, document.content)
    turns = is_turns(document) or is_conversation(line_paragraphs(document.content, markdown))
    blocks = read_blocks(document.content, markdown=markdown, mail=mail, conversation=turns)
    if turns:
        drafts = chunk(document.content, document.content_type, conversation=is_turns(document), mail=mail)
    else:
        drafts = block_passages(blocks, document.content)
    return DocumentReading(blocks, drafts)


def passages_of(document: Document) -> list[ChunkDraft]:
    """The passages ingestion stores for ``document``."""
    return read_document(document).passages


def blocks_of(document: Document) -> list[Block] | None:
    """The blocks of ``document`` as ingestion read them (kept with it), or None when it is read by
    turns (a conversation, whose passages are its turns). A document ingested before blocks were
    kept, or whose kept blocks reach past its text (the text changed and they were not read again),
    is read again here."""
    if is_turns(document):
        return None
    kept = load_blocks(document.pk) if document.pk else []
    if kept and max(block.end for block in kept) <= len(document.content):
        return None if any(block.kind == Kind.TURN for block in kept) else kept
    markdown = document.content_type == "text/markdown"
    if is_conversation(line_paragraphs(document.content, markdown)):
        return None
    return read_blocks(document.content, markdown=markdown, mail=_is_mail(document, document.content))


def reread_blocks(document: Document) -> None:
    """Read ``document``'s blocks again with the current rules and keep them (``manage.py reextract``)."""
    with transaction.atomic():
        replace_blocks(document.pk, read_document(document).blocks)


def reading_text(document: Document, blocks: Sequence[Block]) -> list[tuple[Block, str]]:
    """What is read for facts, block by block: what a content block says as sentences (a row with
    its header, an item with its lead-in); structure (a mail's header, greeting, quoted reply and
    signature) as written, for ``read_source`` to know and leave out; headings, lead-ins on their
    own, a table's header and code not at all."""
    mail = _is_mail(document, document.content)
    out = []
    for block in blocks:
        written = document.content[block.start : block.end]
        if THREAD_HEADING.match(written):
            out.append((block, written))  # a comment's heading: who says what follows, for read_source
            continue
        if block.kind in (Kind.HEADING, Kind.LEAD, Kind.CODE) or (block.kind == Kind.META and block.header):
            continue
        structure = block.kind not in CONTENT or (mail and block.kind == Kind.QUOTE)
        said = document.content[block.start : block.end] if structure else block.sentence()
        if block.kind == Kind.ITEM and not structure:
            said = f"- {said}"  # an item stays an item: "- Samuel Osei: renew ..." is an action item, not a turn
        if said.strip():
            out.append((block, said))
    return out


@dataclass(frozen=True)
class Piece:
    """A part of a document as it is read for facts and promises, with the stored passage it is in."""

    passage: int  # the passage's id
    text: str
    speaker: str
    block: Block | None = None  # the block it says, for a document read by blocks (a row keeps its cells)


# A stored passage as the readers ask for it: id, text, speaker, and where it starts and ends.
PassageRow = tuple[int, str, str, int, int]


def reading_pieces(document: Document, passages: Sequence[PassageRow], *, all_passages: bool = True) -> list[Piece]:
    """What is read of ``document`` within ``passages``, piece by piece: a block said as sentences
    (``reading_text``) for a document read by blocks, a passage itself for a conversation read by turns.
    ``all_passages``: the passages are all the document has, so a block that none of them holds (a
    document cut into passages by older rules) goes with the passage before it; otherwise it is not
    among those being read."""
    blocks = blocks_of(document)
    if blocks is None or not passages:
        return [Piece(pk, text, speaker) for pk, text, speaker, _, _ in passages]
    pieces = []
    for block, said in reading_text(document, blocks):
        passage = _passage_at(passages, block.start, fallback=all_passages)
        if passage is not None:
            pieces.append(Piece(passage, said, block.speaker, block))
    return pieces


def between(piece: Piece, after: Piece | None) -> str:
    """What separates two pieces in the text read: a line break within a passage, a blank line
    between passages (the language model reads names differently across the two)."""
    return "\n" if after is not None and after.passage == piece.passage else "\n\n"


@dataclass(frozen=True)
class ReadText:
    """The text read of a document for facts and promises, joined from its pieces, with where each
    piece starts in it."""

    text: str
    pieces: list[Piece]
    starts: list[int]

    @property
    def speakers(self) -> list[tuple[int, str]]:
        """Where each piece starts and who says it, as ``read_source`` takes them."""
        return [(start, piece.speaker) for start, piece in zip(self.starts, self.pieces, strict=True)]

    def piece_at(self, offset: int) -> int:
        """The index of the piece that holds ``offset`` of the text."""
        return max((i for i, start in enumerate(self.starts) if start <= offset), default=0)


def read_text(document: Document, passages: Sequence[PassageRow], *, all_passages: bool = True) -> ReadText:
    """``reading_pieces`` joined into one text: a line break between pieces of one passage, a blank
    line between passages (``between``)."""
    pieces = reading_pieces(document, passages, all_passages=all_passages)
    text, starts = "", []
    for piece, after in zip(pieces, [*pieces[1:], None], strict=True):
        starts.append(len(text))
        text += piece.text + between(piece, after)
    return ReadText(text, pieces, starts)


def _passage_at(passages: Sequence[PassageRow], offset: int, *, fallback: bool) -> int | None:
    before = passages[0][0] if fallback else None
    for pk, _, _, start, end in passages:
        if start <= offset < max(end, start + 1):
            return pk
        if start <= offset and fallback:
            before = pk
    return before
