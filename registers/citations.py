"""What a register entry rests on, as people read it: the sentence, where it was said and when,
and a link to that passage in its document. Never an id: ``chunk_11`` and ``(doc_3)`` are for
assistants, which pass them back to tools; a person follows the link.

Each reader is shown only what they may read now: a passage moved to a restricted category,
made personal or deleted since the entry was written is left out for those who may not read it
(``memory.access.readable``), whatever the entry says.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date

from django.urls import reverse

from brain.core.actors import Actor
from memory.access import current, readable
from memory.models import Chunk, Document, Fact
from registers.models import Commitment, Contradiction

# An id as the tools write one ("chunk_11", "doc_3", "mem_7"), alone or between brackets.
RAW_ID = re.compile(r"\s*\(?\b(?:chunk|doc|mem|cmt|ctr|term|fact|passage)_\d+\b\)?", re.IGNORECASE)
SENTENCE = 300  # the longest sentence shown


@dataclass(frozen=True)
class Cited:
    """One piece of what an entry rests on, as a page shows it."""

    sentence: str
    title: str
    day: str = ""
    url: str = ""  # the passage in its document; empty when there is none to open


@dataclass(frozen=True)
class Side:
    """One statement of a contradiction: a, b, then c, d..."""

    letter: str
    claim: str
    source: Cited


def plain(text: str) -> str:
    """``text`` without the ids tools write into it: "Sales deck (doc_3)" reads "Sales deck"."""
    return " ".join(RAW_ID.sub("", text).split())


def passage_url(actor: Actor, document_id: int, passage_id: int | None = None) -> str:
    """The document page, at the passage when there is one (as the search page links a hit)."""
    url = f"{reverse('memory-document', args=[document_id])}?org={actor.org.slug}"
    return f"{url}#passage-{passage_id}" if passage_id else url


def readable_passages(actor: Actor, ids: Iterable[object]) -> dict[int, int]:
    """The passages among ``ids`` the actor may read now, each with its document."""
    wanted = {i for i in ids if isinstance(i, int)}
    if not wanted:
        return {}
    rows = Chunk.objects.filter(readable(actor), current(), pk__in=wanted)
    return dict(rows.values_list("pk", "document_id"))


def readable_documents(actor: Actor, ids: Iterable[object]) -> set[int]:
    wanted = {i for i in ids if isinstance(i, int)}
    if not wanted:
        return set()
    return set(Document.objects.filter(readable(actor), pk__in=wanted).values_list("pk", flat=True))


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= SENTENCE else text[: SENTENCE - 1].rstrip() + "…"


@dataclass(frozen=True)
class Reach:
    """The passages and documents among those a page cites that its reader may read now, read
    once for the whole page."""

    actor: Actor
    passages: dict[int, int]  # passage -> its document
    documents: set[int]

    @classmethod
    def of(cls, actor: Actor, *, passages: Iterable[object], documents: Iterable[object]) -> Reach:
        return cls(actor, readable_passages(actor, passages), readable_documents(actor, documents))


def commitments_reach(actor: Actor, commitments: Iterable[Commitment], verdicts: Iterable[object]) -> Reach:
    """What the commitments on a page cite (where each was said, again, and its latest verdict's
    evidence), as far as the reader may read it."""
    passages: list[object] = []
    documents: list[object] = []
    for commitment in commitments:
        passages += [commitment.chunk_id, *(s.chunk_id for s in getattr(commitment, "said_also", []))]
        documents.append(commitment.document_id)
    for found in verdicts:
        for item in found if isinstance(found, list) else []:
            passages.append(item.get("passage_pk"))
            documents.append(item.get("document_pk"))
    return Reach.of(actor, passages=passages, documents=documents)


def verdict_evidence(reach: Reach, found: list[Mapping[str, object]]) -> list[Cited]:
    """What a commitment's latest verdict found, each with its sentence and a link to its passage;
    what the reader may no longer read is left out."""
    actor, shown = reach.actor, []
    for item in found:
        sentence = str(item.get("line") or item.get("statement") or item.get("text") or "")
        title, day = plain(str(item.get("title") or "")), str(item.get("day") or "")
        passage, document = item.get("passage_pk"), item.get("document_pk")
        if isinstance(passage, int) and passage in reach.passages:
            shown.append(Cited(_short(sentence), title, day, passage_url(actor, reach.passages[passage], passage)))
        elif passage is None and isinstance(document, int) and document in reach.documents:
            shown.append(Cited(_short(sentence), title, day, passage_url(actor, document)))
        elif passage is None and document is None:  # a remembered memory: no document to open
            shown.append(Cited(_short(sentence), title or "remembered", day))
    return shown


def promise_source(reach: Reach, commitment: Commitment) -> Cited | None:
    """Where a commitment was read: its words and a link to the passage, when the reader may read it."""
    if commitment.document_id is None or commitment.document_id not in reach.documents:
        return None
    passage = commitment.chunk_id if commitment.chunk_id in reach.passages else None
    url = passage_url(reach.actor, commitment.document_id, passage)
    title = commitment.document.title if commitment.document else ""
    return Cited(_short(commitment.quote or commitment.what), title, commitment.promised_on.isoformat(), url)


def said_also(reach: Reach, commitment: Commitment) -> list[Cited]:
    """The further places a commitment was said (``said_also``, already those the reader may read)."""
    return [
        Cited(
            _short(s.quote or s.what),
            s.document.title,
            s.promised_on.isoformat(),
            passage_url(reach.actor, s.document_id, s.chunk_id if s.chunk_id in reach.passages else None),
        )
        for s in getattr(commitment, "said_also", [])
    ]


def _statements(entry: Contradiction) -> list[tuple[str, str, str, object, object]]:
    """Each statement of an entry: letter, claim, source as written, date, the fact behind it."""
    sides: list[tuple[str, str, str, object, object]] = [
        ("a", entry.claim_a, entry.source_a, entry.date_a, entry.fact_a_id),
        ("b", entry.claim_b, entry.source_b, entry.date_b, entry.fact_b_id),
    ]
    for letter, side in zip("cdef", entry.more, strict=False):
        sides.append(
            (letter, str(side.get("claim", "")), str(side.get("source", "")), side.get("date"), side.get("fact"))
        )
    return sides


def contradiction_sides(actor: Actor, entries: list[Contradiction]) -> dict[int, list[Side]]:
    """Every statement of each contradiction (by entry) with its source named and linked to the
    passage that says it (through the fact behind it), never by id; read once for all entries."""
    statements = {entry.pk: _statements(entry) for entry in entries}
    wanted = [fact for sides in statements.values() for *_, fact in sides if isinstance(fact, int)]
    facts = {
        f.pk: f
        for f in Fact.objects.filter(pk__in=wanted)
        .select_related("document")
        .only("pk", "chunk_id", "document_id", "document__title")
    }
    reach = Reach.of(
        actor,
        passages=[f.chunk_id for f in facts.values()],
        documents=[f.document_id for f in facts.values()],
    )
    shown: dict[int, list[Side]] = {}
    for pk, sides in statements.items():
        shown[pk] = []
        for letter, claim, source, day, fact_id in sides:
            fact = facts.get(fact_id) if isinstance(fact_id, int) else None
            title, url = plain(source), ""
            if fact is not None and fact.document is not None and fact.document_id in reach.documents:
                title = fact.document.title
                passage = fact.chunk_id if fact.chunk_id in reach.passages else None
                url = passage_url(actor, fact.document_id, passage)
            when = day.isoformat() if isinstance(day, date) else str(day or "")
            shown[pk].append(Side(letter, claim, Cited(_short(claim), title, when, url)))
    return shown


def term_examples(reach: Reach, examples: list[Mapping[str, object]], titles: Mapping[int, str]) -> list[Cited]:
    """A glossary entry's uses the reader may read, each with its sentence and passage."""
    shown = []
    for example in examples:
        passage = example.get("passage")
        if isinstance(passage, int) and passage in reach.passages:
            document = reach.passages[passage]
            url = passage_url(reach.actor, document, passage)
            shown.append(Cited(_short(str(example.get("sentence", ""))), titles.get(document, ""), "", url))
    return shown


def document_titles(reach: Reach) -> dict[int, str]:
    """The titles of the documents of the passages the reader may read."""
    ids = set(reach.passages.values())
    return dict(Document.objects.filter(pk__in=ids).values_list("pk", "title")) if ids else {}
