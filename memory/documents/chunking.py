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
from dataclasses import dataclass

MAX_CHARS = 900
MIN_CHARS = 200

HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
# "Priya: ..." or "**Priya Shah** (10:02): ..." at the start of a line: one speaker turn.
TURN = re.compile(
    r"^\s*(?:\*\*(?P<bold>[^*\n]{1,80})\*\*|(?P<plain>[A-Z][\w .'’-]{0,40}?))"
    r"(?:\s*\((?P<time>[^)\n]{1,20})\))?:\s"
)
CONVERSATION_SHARE = 0.6  # of paragraphs that are turns
SENTENCE_END = re.compile(r"(?<=[.!?…])\s+")
LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
EMPHASIS = re.compile(r"(\*\*|__|`+|~~)")
HTML_TAG = re.compile(r"</?[a-zA-Z][^>]{0,200}>")
FENCE = re.compile(r"^\s*(```|~~~)")


@dataclass(frozen=True)
class Block:
    text: str
    start: int
    end: int
    heading: str


@dataclass(frozen=True)
class ChunkDraft:
    text: str
    heading: str
    char_start: int
    char_end: int
    speaker: str = ""
    said: str = ""  # the time written beside the speaker's name ("10:02"), if any


def clean_inline(text: str) -> str:
    """Markdown syntax out, words in: links keep their text, emphasis and tags go."""
    text = LINK.sub(r"\1", text)
    text = HTML_TAG.sub("", text)
    text = EMPHASIS.sub("", text)
    return re.sub(r"[ \t]+", " ", text).strip()


def _blocks(content: str, markdown: bool) -> list[Block]:
    blocks: list[Block] = []
    headings: list[tuple[int, str]] = []
    current: list[tuple[int, int, str]] = []  # (start, end, line) of the open paragraph
    in_fence = False

    def flush() -> None:
        if current:
            text = "\n".join(line for _, _, line in current)
            blocks.append(Block(text, current[0][0], current[-1][1], " > ".join(h for _, h in headings)))
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


def _split_long(block: Block) -> list[Block]:
    if len(block.text) <= MAX_CHARS:
        return [block]
    pieces: list[Block] = []
    cursor = 0
    for sentence in _sentences(block.text):
        at = block.text.find(sentence, cursor)
        at = cursor if at < 0 else at
        pieces.append(Block(sentence, block.start + at, block.start + at + len(sentence), block.heading))
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


def is_conversation(blocks: list[Block]) -> bool:
    """Most paragraphs are turns, there are several, and speakers come back (a list of
    "Note: ..." and "Owner: ..." lines is not a conversation): at most two people for every
    three turns, so three people in five turns still make a short meeting."""
    speakers = [turn[0] for b in blocks if (turn := opening_turn(b.text))]
    return (
        len(speakers) >= 4
        and len(speakers) >= CONVERSATION_SHARE * len(blocks)
        and len(set(speakers)) <= len(speakers) * 2 // 3
    )


def chunk(content: str, content_type: str = "text/plain", *, conversation: bool = False) -> list[ChunkDraft]:
    """Passages of a text; ``conversation`` says it is known to be turns (a chat's day, a meeting),
    so it is cut by turns whenever it has any, however few."""
    markdown = content_type == "text/markdown"
    blocks = _blocks(content, markdown)
    if is_conversation(blocks) or (conversation and any(opening_turn(b.text) for b in blocks)):
        return _turns(blocks, markdown)
    drafts: list[ChunkDraft] = []
    group: list[Block] = []

    def emit() -> None:
        if group:
            text = "\n".join(clean_inline(b.text) if markdown else b.text.strip() for b in group).strip()
            if text:
                drafts.append(ChunkDraft(text, group[0].heading, group[0].start, group[-1].end))
            group.clear()

    for block in blocks:
        for piece in _split_long(block):
            size = sum(len(b.text) + 1 for b in group)
            if group and (piece.heading != group[0].heading or size + len(piece.text) > MAX_CHARS):
                emit()
            group.append(piece)
    emit()
    return _merge_tiny_tail(drafts)


def _turns(blocks: list[Block], markdown: bool) -> list[ChunkDraft]:
    """One passage a turn (a long turn in pieces, each with its speaker); text before the first
    turn, and paragraphs between turns, join the turn before them or stand alone."""
    drafts: list[ChunkDraft] = []
    speaker = said = ""
    for block in blocks:
        turn = opening_turn(block.text)
        if turn is not None:
            speaker, said = turn
        elif drafts and drafts[-1].heading == block.heading and len(drafts[-1].text) + len(block.text) < MAX_CHARS:
            last = drafts.pop()
            text = last.text + "\n" + (clean_inline(block.text) if markdown else block.text.strip())
            drafts.append(ChunkDraft(text, last.heading, last.char_start, block.end, last.speaker, last.said))
            continue
        for piece in _split_long(block):
            text = clean_inline(piece.text) if markdown else piece.text.strip()
            if text:
                drafts.append(ChunkDraft(text, piece.heading, piece.start, piece.end, speaker, said))
    return drafts


def _merge_tiny_tail(drafts: list[ChunkDraft]) -> list[ChunkDraft]:
    """A very short last passage joins the one before it when both share a heading and fit."""
    if len(drafts) >= 2:
        last, before = drafts[-1], drafts[-2]
        tiny = len(last.text) < MIN_CHARS // 2 and last.heading == before.heading
        if tiny and len(before.text) + len(last.text) + 1 <= MAX_CHARS + MIN_CHARS:
            merged = ChunkDraft(before.text + "\n" + last.text, before.heading, before.char_start, last.char_end)
            return [*drafts[:-2], merged]
    return drafts
