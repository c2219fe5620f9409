"""Reading sources: the one layer that turns files and text into what Brain knows.

Everything that reads content lives here, below the documents and the graph, and touches no
database: file formats (``files``, ``parsed``, and a module per kind of export), the typed blocks a
source is made of (``blocks``, with the shapes of mail lines in ``lines``), and the rules that read
sentences and records into entities, facts, dates and values (``extract``, ``dates``, ``kinds``,
``values``, ``topics``, ``linking``, ``vocabulary``).

Code outside this package imports from here, the names below, or from the two tables of words
and patterns (``memory.extraction.lines``, ``memory.extraction.vocabulary``); nothing else reaches
inside (``tests/test_import_direction.py`` checks it). The order the ingestion runs these in is
written once, in ``memory.documents.ingestion``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from memory.extraction.blocks import CONTENT, TURN, Block, Kind, clean_inline, read_blocks
from memory.extraction.files import SUPPORTED_SUFFIXES, iter_documents, parse_file
from memory.extraction.kinds import everyday_cells, looks_like_person, record_names, role_kinds, short_form
from memory.extraction.linking import KnownEntity, link_name
from memory.extraction.mail import read_message
from memory.extraction.markup import html_to_markdown
from memory.extraction.names import common_word, field_words, plain_kind
from memory.extraction.parsed import ParsedDocument, ParseError, SourceFile, turn_paragraph
from memory.extraction.shapes import MAX_FACTS, ExtractedEntity, ExtractedFact, ExtractedValue, Extraction
from memory.extraction.slack import SKIPPED_SUBTYPES, message_text, message_time, speaker_of, user_name
from memory.extraction.transcripts import parse_vtt
from memory.extraction.values import record_values

if TYPE_CHECKING:
    from memory.extraction.dates import LATER_EVENT, sentence_dates
    from memory.extraction.sentences import extract, nlp

# Loaded on first use: spaCy and dateparser stay out of processes that never read a sentence (web).
_LAZY = {"extract": "sentences", "nlp": "sentences", "sentence_dates": "dates", "LATER_EVENT": "dates"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(f"memory.extraction.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "CONTENT",
    "LATER_EVENT",
    "MAX_FACTS",
    "SKIPPED_SUBTYPES",
    "SUPPORTED_SUFFIXES",
    "TURN",
    "Block",
    "ExtractedEntity",
    "ExtractedFact",
    "ExtractedValue",
    "Extraction",
    "Kind",
    "KnownEntity",
    "ParseError",
    "ParsedDocument",
    "SourceFile",
    "clean_inline",
    "common_word",
    "everyday_cells",
    "extract",
    "field_words",
    "html_to_markdown",
    "iter_documents",
    "link_name",
    "looks_like_person",
    "message_text",
    "message_time",
    "nlp",
    "parse_file",
    "parse_vtt",
    "plain_kind",
    "read_blocks",
    "read_message",
    "record_names",
    "record_values",
    "role_kinds",
    "sentence_dates",
    "short_form",
    "speaker_of",
    "turn_paragraph",
    "user_name",
]
