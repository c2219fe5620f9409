"""Meeting transcripts as caption files: WebVTT (.vtt, as Teams, Zoom and Meet export them) and
SubRip (.srt).

A file becomes one document, the meeting, written as one turn a paragraph so the chunker cuts it
one turn a passage with its speaker (``memory.documents.chunking``). The speaker comes from a
WebVTT voice tag (``<v Priya Shah>``) or a "Name: " the caption starts with; consecutive captions
of one speaker make one turn, and the turn keeps where it starts in the recording ("at
00:12:31") so an answer can point into it. Captions without a speaker join the turn before them.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass, field

import webvtt

from memory.extraction.parsed import (
    ParsedDocument,
    ParseError,
    SourceFile,
    _decode,
    _document,
    _stem_title,
    turn_paragraph,
)

# "Priya Shah: we ship Friday" at the start of a caption. A name is short, starts with a capital
# and holds no sentence punctuation, so "Note: ..." style lines stay text only when they are long.
SPOKEN_BY = re.compile(r"^(?P<name>[A-Z][\w .'’-]{0,60}?):\s+(?P<text>\S.*)$", re.S)
VOICE_TAG = re.compile(r"</?v[^>]*>")


@dataclass
class _Turn:
    speaker: str
    start: str
    lines: list[str] = field(default_factory=list)

    def paragraph(self) -> str:
        text = " ".join(" ".join(self.lines).split())
        return turn_paragraph(self.speaker, f"at {self.start}", text) if self.speaker else text


def _parse_captions(source: SourceFile, kind: str) -> list[ParsedDocument]:
    text = _decode(source.data)
    try:
        captions = webvtt.from_buffer(io.StringIO(text), format=kind).captions
    except Exception as exc:  # the library's own errors say what is wrong with the file
        raise ParseError(f"not a {kind.upper()} caption file: {exc}") from exc
    spoken = [_spoken(caption.voice, caption.text) for caption in captions]
    # A "Name: " seen once is more likely a label in the text ("Note: ...") than a speaker.
    named = [speaker for speaker, _ in spoken if speaker]
    speakers = {name for name in named if named.count(name) > 1 or len(set(named)) == 1}
    turns: list[_Turn] = []
    for caption, (speaker, said) in zip(captions, spoken, strict=True):
        if speaker not in speakers and not caption.voice:
            speaker, said = "", f"{speaker}: {said}" if speaker else said
        if not said:
            continue
        start = caption.start.split(".")[0].split(",")[0]
        if turns and (speaker == turns[-1].speaker or not speaker):
            turns[-1].lines.append(said)
        else:
            turns.append(_Turn(speaker, start, [said]))
    content = "\n\n".join(turn.paragraph() for turn in turns)
    if not content.strip():
        return []
    title = _stem_title(source.path)
    return [
        _document(
            source,
            title,
            content,
            "text/markdown",
            "transcript",
            conversation=f"transcript:{source.rel}",
            metadata={"speakers": sorted({t.speaker for t in turns if t.speaker})[:50]},
        )
    ]


def _spoken(voice: str | None, text: str) -> tuple[str, str]:
    """Who said a caption and what, without tags."""
    said = " ".join(VOICE_TAG.sub("", text).split())
    if voice:
        return " ".join(voice.split())[:80], said
    match = SPOKEN_BY.match(said)
    if match:
        return match["name"].strip()[:80], match["text"].strip()
    return "", said


def parse_vtt(source: SourceFile) -> list[ParsedDocument]:
    return _parse_captions(source, "vtt")


def parse_srt(source: SourceFile) -> list[ParsedDocument]:
    return _parse_captions(source, "srt")
