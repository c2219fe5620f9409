"""Split a document into passages on its structure: headings, paragraphs and speaker turns.

Passages hold up to ``MAX_CHARS`` characters (about 200 word pieces, inside the embedder's
256-token window together with the title and heading it is embedded with). A passage never
crosses a heading; a paragraph longer than the limit is split between sentences.

A conversation (a chat export, a transcript: most paragraphs are turns, and speakers come back)
is cut one turn a passage, each with its speaker and the time written beside the name, so a
message is what is found and cited.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from memory.extraction import TURN, Block, Kind, clean_inline, read_blocks

__all__ = [
    "TURN",
    "ChunkDraft",
    "Part",
    "chunk",
    "clean_inline",
    "is_conversation",
    "line_paragraphs",
    "opening_turn",
    "passages",
]

MAX_CHARS = 900
MIN_CHARS = 200

HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
CONVERSATION_SHARE = 0.6  # of paragraphs that are turns
SENTENCE_END = re.compile(r"(?<=[.!?…])\s+")
FENCE = re.compile(r"^\s*(```|~~~)")
# What a thread exported as markdown but saved as text still carries on its title line: the
# heading's marks and the escape before its number ("# \\#7 Issue closed: ...").
_TITLE_MARKS = re.compile(r"^#{1,6}\s+|\\(?=[#*_`\[\]])")


@dataclass(frozen=True)
class Paragraph:
    text: str
    start: int
    end: int
    heading: str


@dataclass(frozen=True)
class Part:
    """Where a part of a document opens that no heading marks (a thread's comment): its heading, and
    whether the block that opens it says more than that ("mattduck on 2020-07-19: Thanks!")."""

    heading: str
    says: bool = False


@dataclass(frozen=True)
class ChunkDraft:
    text: str
    heading: str
    char_start: int
    char_end: int
    speaker: str = ""
    said: str = ""  # the time written beside the speaker's name ("10:02"), if any


def line_paragraphs(content: str, markdown: bool) -> list[Paragraph]:
    blocks: list[Paragraph] = []
    headings: list[tuple[int, str]] = []
    current: list[tuple[int, int, str]] = []  # (start, end, line) of the open paragraph
    in_fence = False

    def flush() -> None:
        if current:
            text = "\n".join(line for _, _, line in current)
            blocks.append(Paragraph(text, current[0][0], current[-1][1], " > ".join(h for _, h in headings)))
            current.clear()

    offset = 0
    for line in content.splitlines(keepends=True):
        start, stripped = offset, line.rstrip("\r\n")
        offset += len(line)
        if markdown and FENCE.match(stripped):
            in_fence = not in_fence
            continue
        heading = HEADING.match(stripped) if markdown and not in_fence else None
        if heading:
            flush()
            level = len(heading.group(1))
            headings[:] = [h for h in headings if h[0] < level] + [(level, clean_inline(heading.group(2)))]
            continue
        if not stripped.strip():
            if not in_fence:
                flush()
            continue
        if TURN.match(stripped) and not in_fence:
            flush()
        current.append((start, start + len(stripped), stripped))
    flush()
    return blocks


def _split_long(block: Paragraph) -> list[Paragraph]:
    if len(block.text) <= MAX_CHARS:
        return [block]
    pieces: list[Paragraph] = []
    cursor = 0
    for sentence in _sentences(block.text):
        at = block.text.find(sentence, cursor)
        at = cursor if at < 0 else at
        pieces.append(Paragraph(sentence, block.start + at, block.start + at + len(sentence), block.heading))
        cursor = at + len(sentence)
    return pieces


def _sentences(text: str) -> list[str]:
    out: list[str] = []
    for sentence in SENTENCE_END.split(text):
        while len(sentence) > MAX_CHARS:  # no sentence boundary: cut between words
            cut = sentence.rfind(" ", 0, MAX_CHARS)
            cut = cut if cut > MAX_CHARS // 2 else MAX_CHARS
            out.append(sentence[:cut])
            sentence = sentence[cut:].lstrip()
        if sentence:
            out.append(sentence)
    return out


def opening_turn(text: str) -> tuple[str, str] | None:
    """(speaker, time as written) when the text opens with a speaker turn."""
    match = TURN.match(text)
    if match is None:
        return None
    return clean_inline(match["bold"] or match["plain"] or "").strip(), (match["time"] or "").strip()


def is_conversation(blocks: list[Paragraph]) -> bool:
    """Most paragraphs are turns, there are several, and speakers come back (a list of
    "Note: ..." and "Owner: ..." lines is not a conversation): at most two people for every
    three turns, so three people in five turns still make a short meeting."""
    speakers = [turn[0] for b in blocks if (turn := opening_turn(b.text))]
    return (
        len(speakers) >= 4
        and len(speakers) >= CONVERSATION_SHARE * len(blocks)
        and len(set(speakers)) <= len(speakers) * 2 // 3
    )


def chunk(
    content: str, content_type: str = "text/plain", *, conversation: bool = False, mail: bool = False
) -> list[ChunkDraft]:
    """Passages of a text; ``conversation`` says it is known to be turns (a chat's day, a meeting),
    so it is cut by turns whenever it has any, however few; ``mail`` that it is a mail."""
    markdown = content_type == "text/markdown"
    lines = line_paragraphs(content, markdown)
    if is_conversation(lines) or (conversation and any(opening_turn(b.text) for b in lines)):
        return _turns(lines, markdown)
    return passages(read_blocks(content, markdown=markdown, mail=mail), content)


def passages(blocks: list[Block], content: str, *, parts: Mapping[int, Part] | None = None) -> list[ChunkDraft]:
    """Passages that follow the blocks: a section's paragraphs together up to ``MAX_CHARS``, never
    across a heading; a list with its lead-in (a long one in parts, each opening with the lead-in);
    a table's rows together, apart from the rest, each row a line said with its header ("Team:
    Price per seat: 29 EUR."), never cut, so a question about one cell finds its row and the
    snippet shows that line.

    ``parts`` names the blocks (by where they start) that open a part of the document a heading
    does not mark, such as a thread's comments: a part never shares a passage with another, and
    its ``Part.heading`` ("Matt Duck, 2020-11-01") is its passages' heading under the section's.
    The words before the first part, when they are a line or two (a thread's title line), go
    with it rather than make a passage of their own."""
    parts = parts or {}
    first_part = min(parts, default=-1)
    drafts: list[ChunkDraft] = []
    group: list[tuple[str, int, int]] = []  # (text, start, end) of the passage under way
    heading = path = section = part = ""
    parted = False  # a part has been opened
    table: tuple[str, ...] | None = None  # the header of the table whose rows are under way

    def emit() -> None:
        text = "\n".join(t for t, _, _ in group if t).strip()
        if text:
            drafts.append(ChunkDraft(text, heading, group[0][1], group[-1][2]))
        group.clear()

    def add(text: str, start: int, end: int, *, lead: str = "") -> None:
        size = sum(len(t) + 1 for t, _, _ in group)
        if group and size + len(text) > MAX_CHARS:
            emit()
            if lead:
                group.append((lead, start, start))
        group.append((text, start, end))

    for at, block in enumerate(blocks):
        if block.heading != path:
            emit()
            path, section, part, table = block.heading, block.heading, "", None
        opens = parts.get(block.start)
        if opens is not None:
            if parted or sum(len(t) + 1 for t, _, _ in group) >= MIN_CHARS // 2:
                emit()
            part, parted, table = opens.heading, True, None
            if block.kind == Kind.HEADING:  # a comment's heading line: its part's heading says it
                section = " > ".join(block.path[:-1])
        heading = " > ".join(h for h in (section, part) if h)
        if opens is not None and (block.kind == Kind.HEADING or not opens.says):
            # The line that opens a part is no passage's words, but its passage starts there: who
            # says a comment is read from that line by whoever reads the passage's blocks.
            group.append(("", block.start, block.end))
            continue
        if block.kind == Kind.HEADING or (block.kind == Kind.META and block.header):
            continue
        if block.kind == Kind.ROW:
            # A table's rows only with rows of the same table, each a line said with its header:
            # a row alone is a few words, found by the page's title and heading it is embedded
            # with rather than by what it says, and ranked above every paragraph for it.
            if table != block.header:
                emit()
                table = block.header
            if block.text:
                add(block.text, block.start, block.end)
            continue
        if table is not None:
            emit()
            table = None
        if block.kind == Kind.ITEM:
            add(block.text, block.start, block.end, lead=block.lead)
            continue
        if block.kind == Kind.QUOTE and _parted_from_reply(group, block, blocks[at + 1 : at + 2]):
            emit()  # a quoted line opens the passage its reply is in, not the one before
        for text, start, end in _pieces(block, content):
            add(_TITLE_MARKS.sub("", text) if start < first_part else text, start, end)
    emit()
    return _merge_tiny_tail(drafts)


def _parted_from_reply(group: list[tuple[str, int, int]], quote: Block, after: list[Block]) -> bool:
    """The passage under way, the quote and the reply after it do not fit in one passage."""
    reply = after[0] if after and after[0].kind != Kind.QUOTE and after[0].heading == quote.heading else None
    if not group or reply is None:
        return False
    return sum(len(t) + 1 for t, _, _ in group) + len(quote.text) + min(len(reply.text), MAX_CHARS) + 1 > MAX_CHARS


def _pieces(block: Block, content: str) -> list[tuple[str, int, int]]:
    """A block's text in pieces of at most ``MAX_CHARS``, cut between sentences, each with where it
    starts in ``content`` as near as the words let it be found."""
    if len(block.text) <= MAX_CHARS:
        return [(block.text, block.start, block.end)]
    pieces, cursor = [], block.start
    for sentence in _sentences(block.text):
        words = sentence.split()
        at = content.find(words[0], cursor, block.end) if words else -1
        start = at if at >= 0 else cursor
        pieces.append((sentence, start, min(block.end, start + len(sentence))))
        cursor = start + 1
    return pieces


def _turns(blocks: list[Paragraph], markdown: bool) -> list[ChunkDraft]:
    """One passage a turn (a long turn in pieces, each with its speaker); text before the first
    turn, and paragraphs between turns, join the turn before them or stand alone."""
    drafts: list[ChunkDraft] = []
    speaker = said = ""
    for block in blocks:
        turn = opening_turn(block.text)
        joins = drafts and drafts[-1].heading == block.heading and len(drafts[-1].text) + len(block.text) < MAX_CHARS
        if turn is not None and joins and says_nothing(block.text[TURN.match(block.text).end() :]):  # type: ignore[union-attr]
            # "lol", "+1", an emoji: no passage of its own; it stays beside the turn it answers.
            last = drafts.pop()
            text = last.text + "\n" + (clean_inline(block.text) if markdown else block.text.strip())
            drafts.append(ChunkDraft(text, last.heading, last.char_start, block.end, last.speaker, last.said))
            continue
        if turn is not None:
            speaker, said = turn
        elif joins:
            last = drafts.pop()
            text = last.text + "\n" + (clean_inline(block.text) if markdown else block.text.strip())
            drafts.append(ChunkDraft(text, last.heading, last.char_start, block.end, last.speaker, last.said))
            continue
        for piece in _split_long(block):
            text = clean_inline(piece.text) if markdown else piece.text.strip()
            if text:
                drafts.append(ChunkDraft(text, piece.heading, piece.start, piece.end, speaker, said))
    return drafts


# Replies that carry nothing of their own ("ok" and "yes" do: they may accept what was asked).
_SHORT_REPLIES = frozenset("lol lmao haha hah hehe +1 same cool nice thx ty np".split())  # noqa: SIM905


def says_nothing(text: str) -> bool:
    """A chat turn with no content of its own: an emoji, "lol", "+1", "haha nice"."""
    words = re.findall(r"[\w+']+", text.casefold())
    return not words or (len(words) <= 2 and all(w in _SHORT_REPLIES for w in words))


def _merge_tiny_tail(drafts: list[ChunkDraft]) -> list[ChunkDraft]:
    """A very short last passage joins the one before it when both share a heading and fit. After
    a table's rows it is most often the table's footnote ("* For self-hosted, ..."), which is read
    with the rows its mark is on: measured, leaving it alone lost the question it answered."""
    if len(drafts) >= 2:
        last, before = drafts[-1], drafts[-2]
        tiny = len(last.text) < MIN_CHARS // 2 and last.heading == before.heading
        if tiny and len(before.text) + len(last.text) + 1 <= MAX_CHARS + MIN_CHARS:
            merged = ChunkDraft(before.text + "\n" + last.text, before.heading, before.char_start, last.char_end)
            return [*drafts[:-2], merged]
    return drafts
