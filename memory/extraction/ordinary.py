"""Words that are capitalised by their place, not because they name something: the word that opens
a sentence, a list item or a table cell ("Glad", "Contributes", "Delete"), the name of a field or a
column before its colon ("Policy Owner:", "Airfare: $300"), an ordinary word the text also writes in
lower case, a plural ("Teammates") and an error's type ("AttributeError"). The model calls many of
them people or companies; none of them is an entity.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from memory.extraction.names import common_word, field_words, plain_kind

if TYPE_CHECKING:
    from spacy.tokens import Doc, Span

# Parts of speech an opening word has when it is capitalised by its place, not because it names something.
_NOT_NAME_POS = frozenset({"VERB", "AUX", "ADJ", "ADV", "DET", "PRON", "INTJ", "ADP", "SCONJ", "CCONJ", "NUM"})
_NOT_NAME_TAGS = frozenset({"NNS", "VB", "VBZ", "VBD", "VBG", "VBN", "VBP", "MD", "JJ", "RB", "UH"})
_NEVER_NAME_POS = frozenset({"DET", "PRON", "ADP", "SCONJ", "CCONJ", "INTJ"})
# What ends a field's name or opens a cell: "Owner: Dora", "Price: 29 EUR; Seats: 50".
_OPENERS = frozenset({":", ";"})
# Words this common (Zipf) are everyday words even where they open a sentence: "delete", "restricted"
# (4.2); a company or project's one-word name seldom is ("falcon" 3.4, "heron" 2.9).
_EVERYDAY_ZIPF = 4.0
_ERROR_TYPE = re.compile(r"[A-Z]\w*(?:Error|Exception|Warning)")
# A field's or a column's name where a line, a cell or a clause starts: "Policy Owner: ...".
_LABEL = re.compile(r"(?:^|[;:])[ \t*_-]*([A-Z][\w'’ &/-]{0,40}?)[*_]*:\s", re.MULTILINE)


def sentence_start(doc: Doc, i: int) -> int:
    """Where the sentence holding token ``i`` starts: read back to its first token, not through
    ``Span.sent``, which reads the whole document each time (quadratic over a long text)."""
    while i > 0 and not doc[i].is_sent_start:
        i -= 1
    return i


def _opening(span: Span, doc: Doc) -> bool:
    """The span opens its sentence, list item or cell: nothing but punctuation before it, or a colon
    or semicolon just before it."""
    before = doc[sentence_start(doc, span.start) : span.start]
    if all(not any(c.isalnum() for c in t.text) for t in before):  # punctuation, a bullet ("○", "-")
        return True
    previous = next((t for t in reversed(before) if not t.is_space), None)
    return previous is not None and previous.text in _OPENERS


def opening_word_out(span: Span, doc: Doc, lower_words: frozenset[str]) -> Span | None:
    """A name the model found, without the ordinary word that opens its sentence, list item or cell:
    a capitalised "Glad", "Contributes", "Every" or "Ping" there is capitalised by its place. It is
    ordinary when the model reads it as a verb, an adjective, a plural and the like, or when the same
    word is written in lower case elsewhere in the text. What is left is the name ("Ping Andrea" is
    Andrea); nothing left, no name."""
    first = span.doc[span.start]
    if not _opening(span, doc) or not first.text[:1].isupper() or first.text.isupper():
        return span
    kind = plain_kind(span.text)
    if (len(span) > 1 and kind == "organisation") or (len(span) == 1 and kind):
        return span  # "Cloud Native Computing Foundation" or "Finance" opening a cell is a name all the same
    if first.lower_ in lower_words or first.pos_ in _NEVER_NAME_POS:
        ordinary = True
    elif len(span) == 1:  # a name the model does not know may be tagged a verb: the word must be common too
        ordinary = (first.pos_ in _NOT_NAME_POS or first.tag_ in _NOT_NAME_TAGS) and common_word(first.text)
    else:
        ordinary = False
    if not ordinary:
        return span
    rest = doc[span.start + 1 : span.end]
    return rest if len(rest) and rest.text[:1].isupper() else None


def field_name(span: Span, doc: Doc, lower_words: frozenset[str], person: bool) -> bool:
    """Ordinary words naming a field or a column, before its colon where a line, a cell or a clause
    starts: "Policy Owner: Dora", "Effective Date: 1 May", "Airfare: $300", a row "Food Tour: $100".
    A person's name there ("Ruben: looks good") is a speaker, and stays."""
    end = span.end
    while end < len(doc) and doc[end].text in ("*", "**", "_"):
        end += 1
    if end >= len(doc) or doc[end].text != ":" or not _opening(span, doc):
        return False
    if person and len(span) == 1:
        return span[0].lower_ in lower_words and common_word(span[0].text)
    return field_words(span.text, lower_words) or (len(span) == 1 and common_word(span[0].text))


def ordinary_word(span: Span, doc: Doc, lower_words: frozenset[str]) -> bool:
    """One capitalised ordinary word wherever it stands: written in lower case elsewhere in the text
    ("Restricted data" and "restricted data"), a plural ("Teammates"), or an error's type."""
    if _ERROR_TYPE.fullmatch(span.text.strip()):
        return True
    if len(span) != 1:
        return False
    token = span[0]
    if token.text.isupper() or not token.text[:1].isupper() or not token.is_alpha:
        return False
    if token.tag_ in ("NNS", "NNPS") and token.lower_.endswith("s") and wordfreq_zipf(token.lower_[:-1]) >= 3.0:
        return True  # "Teammates", "Platinums"; not "Leeds", whose "leed" is no word
    if token.lower_ in lower_words or token.pos_ in ("ADJ", "VERB", "ADV"):
        return common_word(token.text)
    return False


def everyday_opener(span: Span, doc: Doc) -> bool:
    """One very common word opening a sentence or a cell, which the model calls no person ("Delete
    data for any instance ...", "Sync for all teams"): capitalised by its place."""
    if len(span) != 1 or span[0].text.isupper() or not span[0].is_alpha or not _opening(span, doc):
        return False
    return wordfreq_zipf(span[0].text) >= _EVERYDAY_ZIPF


def field_names(text: str, lower_words: frozenset[str]) -> frozenset[str]:
    """The names of the text's fields and columns ("Pacific hours: 6am-2pm"), casefolded: said again
    in a sentence ("we list Pacific hours here"), they are still no entity."""
    return frozenset(m[1].strip().casefold() for m in _LABEL.finditer(text) if field_words(m[1], lower_words))


def wordfreq_zipf(word: str) -> float:
    import wordfreq

    return float(wordfreq.zipf_frequency(word.casefold(), "en"))
