"""A document as a reader sees it: typed blocks with their offsets and the headings above them.

Every source is read once into blocks: headings, paragraphs (hard-wrapped lines joined back into
sentences), list items with the sentence that leads into them, table rows with their header, quotes
and quoted replies, code, signatures, greetings, header lines (a mail's ``From:``, a meeting's
attendees) and speaker turns. Passages, snippets, the page that shows a document and extraction
read these blocks, so no later stage has to guess again what a line was.

Markdown is read from markdown-it-py's tokens. Plain text, a mail's body among it, is read by the
same parser with the markdown that plain text does not mean switched off (indented code, setext
headings, HTML), after the lines that only mail has (headers, quotes, signatures, greetings and
sign-offs) are taken out as blocks of their own; its soft line breaks are joined only where the
line was wrapped, not where a short line ended on purpose.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from functools import lru_cache
from typing import TYPE_CHECKING

from bs4 import BeautifulSoup

from memory.extraction import lines as line_shapes

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.token import Token


class Kind(StrEnum):
    HEADING = "heading"
    PARAGRAPH = "paragraph"
    ITEM = "item"  # a list item; ``lead`` holds the sentence that introduces its list
    ROW = "row"  # a table row; ``header`` and ``cells`` hold the table's columns
    QUOTE = "quote"  # a quotation, or a quoted reply in a mail
    CODE = "code"
    SIGNATURE = "signature"
    GREETING = "greeting"  # "Hi Tom," and the sign-off ("Best, Marta")
    META = "meta"  # header lines: From/To/Date/Subject, attendees, front matter, a table's header
    LEAD = "lead"  # the sentence that introduces a list ("Tech leads are responsible for:")
    TURN = "turn"  # a speaker's turn: "Priya (10:02): ..."


# "Priya: ..." or "**Priya Shah** (10:02): ..." at the start of a line: one speaker turn.
TURN = re.compile(
    r"^\s*(?:\*\*(?P<bold>[^*\n]{1,80})\*\*|(?P<plain>[A-Z][\w .'’-]{0,40}?))"
    r"(?:\s*\((?P<time>[^)\n]{1,20})\))?:\s"
)
LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
EMPHASIS = re.compile(r"(\*\*|__|`+|~~)")
HTML_TAG = re.compile(r"</?[a-zA-Z][^>]{0,200}>")


def clean_inline(text: str) -> str:
    """Markdown syntax out, words in: links keep their text, emphasis and tags go."""
    text = LINK.sub(r"\1", text)
    text = HTML_TAG.sub("", text)
    text = EMPHASIS.sub("", text)
    return re.sub(r"[ \t]+", " ", text).strip()


# What a reader takes facts from; the rest is structure that is shown but never learnt from.
CONTENT = frozenset({Kind.PARAGRAPH, Kind.ITEM, Kind.ROW, Kind.TURN, Kind.QUOTE})


@dataclass(frozen=True)
class Block:
    kind: Kind
    text: str  # the words as read: inline markup out, wrapped lines joined
    start: int  # where the block stands in the document's text
    end: int
    path: tuple[str, ...] = ()  # the headings above it, outermost first
    lead: str = ""  # an item's lead-in ("Tech leads are responsible for:")
    header: tuple[str, ...] = ()  # a row's column names
    cells: tuple[str, ...] = ()  # a row's cells, in the header's order
    subject: int = 0  # which cell names what a row is about
    speaker: str = ""  # a turn's speaker
    said: str = ""  # the time written beside the speaker ("10:02")

    @property
    def heading(self) -> str:
        return " > ".join(self.path)

    def sentence(self) -> str:
        """What the block says as sentences, with nothing of its layout: a row as its subject and
        each named cell, an item with its lead-in, a turn without its speaker label."""
        if self.kind == Kind.ROW:
            return row_sentence(self.header, self.cells, self.subject)
        if self.kind == Kind.ITEM and self.lead:
            return item_sentence(self.lead, self.text)
        return self.text


@dataclass
class _Lines:
    """Offsets of a text's lines, so a token's line range becomes a character range."""

    text: str
    starts: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.starts = [0] + [m.end() for m in re.finditer("\n", self.text)]

    def span(self, first: int, last: int) -> tuple[int, int]:
        """Characters of lines ``first`` to ``last`` (exclusive), trailing line breaks left out."""
        start = self.starts[min(first, len(self.starts) - 1)]
        end = self.starts[last] if last < len(self.starts) else len(self.text)
        while end > start and self.text[end - 1] in "\r\n":
            end -= 1
        return start, end

    def line_of(self, offset: int) -> int:
        return bisect_right(self.starts, offset) - 1


# --- cells, rows and items as sentences -------------------------------------------------------------

_NAME_HEADER = re.compile(r"(?i)^(?:name|plan|product|tier|level|role|item|person|team|title|term)$")
_TRAILING_COLON = re.compile(r"\s*[:：]\s*$")
_END = re.compile(r"[.!?…]$")


def subject_column(header: Sequence[str]) -> int:
    """The column a row is about: one whose header says it holds names, else the first."""
    for index, name in enumerate(header):
        if _NAME_HEADER.match(name.strip()):
            return index
    return 0


def row_sentence(header: Sequence[str], cells: Sequence[str], subject: int = 0) -> str:
    """ "Team: Price per seat 29 EUR; Seats up to 50." for the row Team | 29 EUR | 50 under the
    header Plan | Price per seat | Seats up to. An empty cell says nothing; a cell without a header
    is said alone."""
    if not any(c.strip() for c in cells):
        return ""
    about = cells[subject].strip() if subject < len(cells) else ""
    said = []
    for index, cell in enumerate(cells):
        cell = cell.strip()
        if index == subject or not cell or cell in {"-", "–", "—"}:
            continue
        name = header[index].strip() if index < len(header) else ""
        said.append(f"{name}: {cell}" if name else cell)
    if not about:
        return "; ".join(said) + "." if said else ""
    return f"{about}: " + "; ".join(said) + "." if said else about


def item_sentence(lead: str, item: str) -> str:
    """A list item read with its lead-in: "Tech leads are responsible for: code review." The item
    keeps its own words; only a full stop is added when it has none."""
    lead = _TRAILING_COLON.sub("", lead.strip())
    item = item.strip()
    if len(lead.split()) <= 2:  # a label ("Decisions:", "Action items:") names no one the item is about
        return item
    text = f"{lead}: {item}"
    return text if _END.search(text) else text + "."


# --- markdown ----------------------------------------------------------------------------------------


@lru_cache(maxsize=2)
def _parser(markdown: bool) -> MarkdownIt:
    from markdown_it import MarkdownIt

    parser = MarkdownIt("commonmark").enable(["table", "strikethrough"])
    if not markdown:
        # Plain text means none of these: an indented line is a line, a row of dashes a rule.
        parser.disable(["code", "heading", "lheading", "html_block", "html_inline", "reference", "entity", "escape"])
    return parser


def _inline_lines(token: Token) -> list[str]:
    """The words of an inline token, line by line as written: links keep their text, images their
    description, markup goes."""
    lines: list[str] = [""]
    for child in token.children or ():
        if child.type in ("text", "code_inline", "image"):
            lines[-1] += child.content
        elif child.type in ("softbreak", "hardbreak") or _is_br(child):
            lines.append("")
    return [re.sub(r"[ \t]+", " ", line).strip() for line in lines if line.strip()]


def _is_br(token: Token) -> bool:
    return token.type == "html_inline" and token.content.lower().startswith("<br")


def _inline_text(token: Token) -> str:
    """The words of an inline token on one line (markdown: a line break inside a paragraph is a space)."""
    return " ".join(_inline_lines(token))


_HTML_TAG = re.compile(r"<[^>]{0,400}>")


@dataclass
class _Walk:
    lines: _Lines
    markdown: bool
    blocks: list[Block] = field(default_factory=list)
    path: list[tuple[int, str]] = field(default_factory=list)
    last_paragraph: Block | None = None  # the paragraph just before a list: its lead-in if it ends with ":"

    def heading_path(self) -> tuple[str, ...]:
        return tuple(text for _, text in self.path)

    def add(self, kind: Kind, text: str, span: tuple[int, int], **extra: object) -> Block | None:
        if not text.strip() and kind != Kind.ROW:
            return None
        block = Block(kind, text, span[0], span[1], self.heading_path(), **extra)  # type: ignore[arg-type]
        self.blocks.append(block)
        return block

    def take_lead(self) -> str:
        """The lead-in of a list about to start: the last sentence of the paragraph just before it,
        when that ends with a colon. It becomes a block of its own, out of the paragraph: alone it
        says nothing."""
        paragraph = self.last_paragraph
        if paragraph is None or paragraph.kind != Kind.PARAGRAPH or not paragraph.text.rstrip().endswith(":"):
            return ""
        cut = max(paragraph.text.rfind("\n"), *(paragraph.text.rfind(end) for end in (". ", "! ", "? ")))
        lead = paragraph.text[cut + 1 :].strip()
        raw = self.lines.text[paragraph.start : paragraph.end]
        at = raw.rfind(lead.split()[0]) if lead.split() else -1
        at = paragraph.start + at if at >= 0 else paragraph.start
        self.blocks.remove(paragraph)
        if cut > 0:
            self.blocks.append(
                replace(paragraph, text=paragraph.text[: cut + 1].strip(), end=max(paragraph.start, at - 1))
            )
        self.blocks.append(replace(paragraph, kind=Kind.LEAD, text=lead, start=at))
        return lead

    def paragraphs(self, token: Token, span: tuple[int, int]) -> Iterator[tuple[str, tuple[int, int]]]:
        """A paragraph's text and span, cut before each line that opens a speaker's turn
        ("Priya: ..."), which starts a paragraph of its own even without a blank line before it."""
        lines = _inline_lines(token)
        cuts = [k for k, line in enumerate(lines) if k and TURN.match(line)]
        if not cuts:
            yield self.text_of(token), span
            return
        raw, cursor = self.lines.text, span[0]
        for first, last in zip([0, *cuts], [*cuts, len(lines)], strict=True):
            part = lines[first:last]
            at = raw.find(part[0][:20], cursor, span[1])
            start = at if at >= 0 else cursor
            end = span[1] if last == len(lines) else max(start, raw.find(lines[last][:20], start + 1, span[1]) - 1)
            yield reflow_lines(part), (start, end)
            cursor = start + 1

    def text_of(self, token: Token) -> str:
        # Markdown joins a paragraph's lines too, but a line that ends a sentence is kept a line: people
        # write one sentence a line, and what reads them (sentences, names) is better for knowing it.
        return reflow_lines(_inline_lines(token))


def _span(walk: _Walk, token: Token) -> tuple[int, int]:
    return walk.lines.span(*token.map) if token.map else (0, 0)


def _walk_tokens(walk: _Walk, tokens: list[Token]) -> None:
    i = 0
    quote_depth = 0
    while i < len(tokens):
        token = tokens[i]
        kind = token.type
        if kind == "heading_open":
            level = int(token.tag[1:])
            text = _inline_text(tokens[i + 1])
            walk.path[:] = [h for h in walk.path if h[0] < level] + [(level, text)]
            walk.add(Kind.HEADING, text, _span(walk, token))
            walk.last_paragraph = None
            i += 3
            continue
        if kind == "blockquote_open":
            quote_depth += 1
        elif kind == "blockquote_close":
            quote_depth -= 1
        elif kind == "paragraph_open":
            block = None
            for text, span in walk.paragraphs(tokens[i + 1], _span(walk, token)):
                block = walk.add(Kind.QUOTE if quote_depth else Kind.PARAGRAPH, text, span)
            walk.last_paragraph = block
            i += 3
            continue
        elif kind in ("bullet_list_open", "ordered_list_open"):
            i = _walk_list(walk, tokens, i, walk.take_lead())
            walk.last_paragraph = None
            continue
        elif kind == "table_open":
            i = _walk_table(walk, tokens, i)
            walk.last_paragraph = None
            continue
        elif kind in ("fence", "code_block"):
            walk.add(Kind.CODE, token.content.rstrip("\n"), _span(walk, token))
        elif kind == "html_block" and _HTML_TABLE.search(token.content):
            _walk_html_table(walk, token)
        elif kind == "html_block":
            text = re.sub(r"\s+", " ", _HTML_TAG.sub(" ", token.content)).strip()
            if text:
                walk.add(Kind.PARAGRAPH, text, _span(walk, token))
        elif kind == "hr":
            walk.last_paragraph = None
        i += 1


def _close_of(tokens: list[Token], i: int) -> int:
    """The index of the token that closes the one opened at ``i``."""
    depth, opening = 0, tokens[i].type
    closing = opening.replace("_open", "_close")
    for j in range(i, len(tokens)):
        if tokens[j].type == opening:
            depth += 1
        elif tokens[j].type == closing:
            depth -= 1
            if depth == 0:
                return j
    return len(tokens) - 1


def _walk_list(walk: _Walk, tokens: list[Token], i: int, lead: str) -> int:
    """Each item of the list opened at ``i`` is a block with ``lead``; a nested list's lead-in is the
    item it hangs from. Returns the index after the list."""
    end = _close_of(tokens, i)
    j = i + 1
    while j < end:
        if tokens[j].type != "list_item_open":
            j += 1
            continue
        item_end = _close_of(tokens, j)
        words: list[str] = []
        k = j + 1
        while k < item_end:
            inner = tokens[k]
            if inner.type == "paragraph_open":
                words.append(walk.text_of(tokens[k + 1]))
                k += 3
                continue
            if inner.type in ("bullet_list_open", "ordered_list_open"):
                parent = " ".join(words)
                if words:
                    walk.add(Kind.ITEM, parent, _span(walk, tokens[j]), lead=lead)
                    words = []
                k = _walk_list(walk, tokens, k, parent if parent.rstrip().endswith(":") or parent else lead)
                continue
            if inner.type in ("fence", "code_block"):
                walk.add(Kind.CODE, inner.content.rstrip("\n"), _span(walk, inner))
            elif inner.type == "table_open":
                k = _walk_table(walk, tokens, k)
                continue
            k += 1
        if words:
            _add_item(walk, " ".join(words), _span(walk, tokens[j]), lead)
        j = item_end + 1
    return end + 1


def _add_item(walk: _Walk, text: str, span: tuple[int, int], lead: str) -> None:
    """An item, and the lines markdown read as its lazy continuation though each ends a sentence of
    its own ("3. Upgrade Django." followed by "Jonas decided ..." with no blank line): those are
    paragraphs after the list, not more of the item."""
    first, *rest = text.split("\n")
    if not rest:
        walk.add(Kind.ITEM, text, span, lead=lead)
        return
    raw = walk.lines.text
    cut = raw.find(rest[0][:20], span[0], span[1])
    cut = cut if cut > span[0] else span[1]
    walk.add(Kind.ITEM, first, (span[0], max(span[0], cut - 1)), lead=lead)
    walk.add(Kind.PARAGRAPH, "\n".join(rest), (cut, span[1]))


def _walk_table(walk: _Walk, tokens: list[Token], i: int) -> int:
    end = _close_of(tokens, i)
    header: tuple[str, ...] = ()
    row: list[str] = []
    row_token: Token | None = None
    in_head = False
    for j in range(i + 1, end):
        token = tokens[j]
        if token.type == "thead_open":
            in_head = True
        elif token.type == "thead_close":
            in_head = False
        elif token.type == "tr_open":
            row, row_token = [], token
        elif token.type == "inline":
            row.append(_inline_text(token))
        elif token.type == "tr_close" and row_token is not None:
            if in_head:
                header = tuple(row)
                walk.add(Kind.META, " | ".join(header), _span(walk, row_token), header=header)
            elif any(cell.strip() for cell in row):
                subject = subject_column(header)
                cells = tuple(row)
                walk.add(
                    Kind.ROW,
                    row_sentence(header, cells, subject),
                    _span(walk, row_token),
                    header=header,
                    cells=cells,
                    subject=subject,
                )
    return end + 1


_HTML_TABLE = re.compile(r"<table\b", re.IGNORECASE)
_HTML_ROW = re.compile(r"<tr\b.*?(?:</tr\s*>|(?=<tr\b)|$)", re.IGNORECASE | re.DOTALL)


def _walk_html_table(walk: _Walk, token: Token) -> None:
    """A table written in HTML inside markdown (as many handbooks keep their version tables) read
    as a markdown table is: its first row the header, and a row block for each other row, each at
    its own place in the text. Words beside the rows are a paragraph."""
    start, end = _span(walk, token)
    raw = walk.lines.text[start:end]
    rows = []
    for match in _HTML_ROW.finditer(raw):
        soup = BeautifulSoup(match.group(0), "html.parser")
        cells = [" ".join(cell.get_text(" ").split()) for cell in soup.find_all(["th", "td"])]
        if cells:
            rows.append((cells, (start + match.start(), start + match.end())))
    outside = _HTML_TAG.sub(" ", _HTML_ROW.sub(" ", raw))
    if words := " ".join(outside.split()):
        walk.add(Kind.PARAGRAPH, words, (start, end))
    if not rows:
        return
    first, span = rows[0]
    header = tuple(first)
    walk.add(Kind.META, " | ".join(header), span, header=header)
    subject = subject_column(header)
    for cells, span in rows[1:]:
        if any(cell for cell in cells):
            row = tuple(cells)
            walk.add(Kind.ROW, row_sentence(header, row, subject), span, header=header, cells=row, subject=subject)


# --- plain text: re-flowing wrapped lines -------------------------------------------------------

_WRAP_SHARE = 0.6  # a line this long against the paragraph's longest was wrapped, not ended
_WRAP_WIDTH = 30  # a paragraph whose lines are all shorter is a list of short lines (a title, a date)
# Words a line does not end on unless it was wrapped.
_OPEN_ENDINGS = frozenset(
    "a an the and or but to of for from with in on at by through until as that which who whose than if".split()  # noqa: SIM905
)
_LIST_START = re.compile(r"^\s*(?:[-*•+]|\d{1,3}[.)])\s+")


def reflow(raw: str) -> str:
    """``reflow_lines`` over a text's lines."""
    return reflow_lines([line.strip() for line in raw.splitlines() if line.strip()])


def reflow_lines(lines: list[str]) -> str:
    """Join the lines of a plain-text paragraph where they were wrapped, keep a break where a line
    ended on purpose: after a full stop, a colon or a question, a short line, or before a line that
    opens a list item."""
    if len(lines) < 2:
        return lines[0] if lines else ""
    widest = max(len(line) for line in lines)
    out = lines[0]
    for before, line in zip(lines, lines[1:], strict=False):
        ended = before.endswith((".", "!", "?", ":", ";", "…")) or _LIST_START.match(line) is not None
        wrapped = len(before) >= _WRAP_SHARE * widest and widest >= _WRAP_WIDTH
        last_word = before.rsplit(None, 1)[-1].casefold() if before.split() else ""
        continuing = line[:1].islower() or before.endswith((",", "-", "–", "(")) or last_word in _OPEN_ENDINGS
        if not ended and (wrapped or continuing):
            hyphen = out.endswith("-") and line[:1].islower() and before[-2:-1].isalpha()
            out = (out[:-1] if hyphen else out + " ") + line
        else:
            out += "\n" + line
    return out


# --- mail structure in plain text ------------------------------------------------------------------


def _mail_lines(text: str, lines: _Lines) -> Iterator[tuple[Kind, int, int]]:
    """(kind, first line, last line exclusive) of the runs of lines that only mail has: the header at
    the top, greetings, quoted replies with the line that introduces them, signatures and sign-offs."""
    rows = text.split("\n")
    n = len(rows)
    i = 0
    while i < n and not rows[i].strip():
        i += 1
    start = i
    while i < n and (line_shapes.HEADER.match(rows[i]) or (i > start and rows[i][:1] in " \t" and rows[i].strip())):
        i += 1
    if i - start >= 2:
        yield Kind.META, start, i
    k = i
    while k < n:
        line = rows[k]
        if _quoting(rows, k):
            first = k
            while k < n and (_quoting(rows, k) or (not rows[k].strip() and k + 1 < n and _quoting(rows, k + 1))):
                k += 1
            yield Kind.QUOTE, first, k
            continue
        if line_shapes.SIGNATURE.match(line) or line_shapes.SENT_FROM.match(line):
            first = k
            while k < n and not _quoting(rows, k):
                k += 1
            yield Kind.SIGNATURE, first, k
            continue
        if line_shapes.ATTENDEES.match(line):
            yield Kind.META, k, k + 1
        elif line_shapes.GREETING.match(line):
            yield Kind.GREETING, k, k + 1
        elif line_shapes.SIGN_OFF.match(line):
            first = k
            k += 1
            while k < n and k <= first + 3 and line_shapes.NAME_LINE.match(rows[k]):
                k += 1
            yield Kind.GREETING, first, k
            continue
        k += 1


def _quoting(rows: list[str], k: int) -> bool:
    line = rows[k]
    return bool(line_shapes.QUOTED.match(line) or line_shapes.WROTE.match(line) or line_shapes.ORIGINAL.match(line))


def _blank(text: str, lines: _Lines, runs: list[tuple[Kind, int, int]]) -> str:
    chars = list(text)
    for _, first, last in runs:
        start, end = lines.span(first, last)
        for at in range(start, end):
            if chars[at] not in "\r\n":
                chars[at] = " "
    return "".join(chars)


# --- the one entry point ---------------------------------------------------------------------------

_FRONT_MATTER = re.compile(r"\A---[ \t]*\n(?:.*\n){0,80}?---[ \t]*(?:\n|\Z)")


def read_blocks(text: str, *, markdown: bool, mail: bool = False, conversation: bool = False) -> list[Block]:
    """The blocks of a document's text, in order. ``markdown``: the text is markdown; ``mail``: it is
    a mail (its header, quotes, greetings and signature are blocks of their own; a plain text whose
    first lines are mail headers is read as one too); ``conversation``: its paragraphs that open with
    a speaker's name are turns."""
    lines = _Lines(text)
    runs: list[tuple[Kind, int, int]] = []
    front = _FRONT_MATTER.match(text) if markdown else None
    if front:
        runs.append((Kind.META, 0, lines.line_of(front.end() - 1) + 1))
    if mail or not markdown:
        runs += list(_mail_lines(text, lines)) if mail or _looks_like_mail(text) else []
    walk = _Walk(lines, markdown)
    _walk_tokens(walk, _parser(markdown).parse(_blank(text, lines, runs)))
    for kind, first, last in runs:
        start, end = lines.span(first, last)
        raw = text[start:end]
        words = raw.strip()
        if front and start == 0 and kind == Kind.META:  # front matter: its fields, without the fences
            words = raw.strip().strip("-").strip()
        if kind == Kind.QUOTE:
            words = reflow("\n".join(re.sub(r"^\s*>[> ]*", "", line) for line in raw.splitlines()))
        if words:
            walk.blocks.append(Block(kind, words, start, end, _path_at(walk.blocks, start)))
    blocks = sorted(walk.blocks, key=lambda b: (b.start, b.end))
    return _turns(blocks) if conversation else blocks


def _looks_like_mail(text: str) -> bool:
    head = [line for line in text.lstrip().splitlines()[:6] if line.strip()]
    return sum(bool(line_shapes.HEADER.match(line)) for line in head) >= 2


def _path_at(blocks: list[Block], start: int) -> tuple[str, ...]:
    before = [b for b in blocks if b.start <= start]
    return before[-1].path if before else ()


def _opening_turn(text: str) -> re.Match[str] | None:
    return TURN.match(text)


def _turns(blocks: list[Block]) -> list[Block]:
    out = []
    for block in blocks:
        match = _opening_turn(block.text) if block.kind == Kind.PARAGRAPH else None
        if match is None:
            out.append(block)
            continue
        speaker = clean_inline(match["bold"] or match["plain"] or "").strip()
        out.append(
            Block(
                Kind.TURN,
                block.text[match.end() :].strip(),
                block.start,
                block.end,
                block.path,
                speaker=speaker,
                said=(match["time"] or "").strip(),
            )
        )
    return out
