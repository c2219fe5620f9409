"""The production path: each labelled document saved as its source saves it, ingested with the clock
at its upload time, the commitment register's nightly scan, then what was derived read back, and
each question searched as search_company_memory searches.

How each kind is saved (``SAVED_AS``): mail pasted as text is an e-mail, markdown pages (handbook,
policy, wiki) are wiki pages, minutes and meeting notes are uploaded markdown, chat is one message a
document with its speaker, time, conversation and session, and an issue thread is saved as the
GitHub connector saves it (its text laid out as the connector lays it out: the body, then each
comment as "login on YYYY-MM-DD:"). A document given as a file (a raw .eml message, a PDF) is read
by the same file readers an upload uses, and a WebVTT transcript by the caption reader.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any
from unittest import mock

from django.core.management.base import CommandError

from brain.core.actors import Actor
from brain.models import Features, Organisation
from memory.documents.ingestion import ingest_documents
from memory.documents.saving import add_document
from memory.extraction import ParsedDocument, ParseError, SourceFile, parse_file, parse_vtt
from memory.mcp_tools.documents import SearchArgs, snippet
from memory.models import Document, Fact, Mention, Value
from memory.search.answer import answer_card
from memory.search.evidence import card_search, said_when
from memory.search.passages import search_chunks
from registers.evaluation.matching import Asked, Derived, DerivedFact, DerivedPromise, DerivedValue
from registers.models import Commitment, CommitmentSource
from registers.nightly import run_nightly

# kind -> (source_kind, content type). "connector" is the source kind connectors.sync saves items as.
SAVED_AS = {
    "mail": ("email", "text/plain"),
    "meeting": ("upload", "text/markdown"),
    "minutes": ("upload", "text/markdown"),
    "chat": ("chat", "text/plain"),
    "transcript": ("transcript", "text/plain"),
    "wiki": ("wiki", "text/markdown"),
    "handbook": ("wiki", "text/markdown"),
    "policy": ("wiki", "text/markdown"),
    "issue": ("connector", "text/plain"),
    "pdf": ("upload", "text/plain"),
}
TOP_K = int(SearchArgs.model_fields["top_k"].default)  # what search_company_memory returns when not told


@contextmanager
def clock(moment: datetime) -> Iterator[None]:
    """``timezone.now`` answers ``moment`` inside (the upload time a document pretends to have)."""
    with mock.patch("django.utils.timezone.now", return_value=moment):
        yield


def _moment(value: Any) -> datetime | None:
    return datetime.fromisoformat(value) if value else None


def _parsed(parsed: ParsedDocument) -> dict[str, Any]:
    return {
        "title": parsed.title,
        "content": parsed.content,
        "content_type": parsed.content_type,
        "source_kind": parsed.source_kind,
        "source_url": parsed.source_url,
        "external_id": parsed.external_id,
        "metadata": parsed.metadata,
        "occurred_at": parsed.occurred_at,
        "speaker": parsed.speaker,
        "conversation": parsed.conversation,
        "session": parsed.session,
    }


def savings(row: dict[str, Any]) -> list[dict[str, Any]]:
    """The arguments of ``add_document`` for one labelled document: a file read as its upload is
    (one document or more), a WebVTT transcript read by the caption reader, else the text as is."""
    if row.get("file"):
        try:
            return [_parsed(parsed) for parsed in parse_file(Path(row["file"]))]
        except ParseError as exc:
            raise CommandError(f"{row['id']}: {exc}") from None
    text = row["text"]
    if row["kind"] == "transcript" and text.lstrip().startswith("WEBVTT"):
        name = f"{row['id']}.vtt"
        captions = parse_vtt(SourceFile(Path(name), name, text.encode()))
        if captions:
            own = _parsed(captions[0])
            return [{**own, "title": row["title"], "conversation": row.get("conversation") or own["conversation"]}]
    source_kind, content_type = SAVED_AS[row["kind"]]
    return [
        {
            "title": row["title"],
            "content": text,
            "content_type": content_type,
            "source_kind": source_kind,
            "external_id": row.get("external_id") or "",
            "occurred_at": _moment(row.get("occurred_at")),
            "speaker": row.get("speaker") or "",
            "conversation": row.get("conversation") or "",
            "session": row.get("session") or "",
        }
    ]


def _pause(org: Organisation, paused: bool) -> None:
    org.ingestion_paused_at = datetime.now(UTC) if paused else None
    Organisation.objects.filter(pk=org.pk).update(ingestion_paused_at=org.ingestion_paused_at)


@dataclass
class Timing:
    ingest: float = 0.0  # saving, chunking, embedding and extracting
    extract: float = 0.0  # extracting alone (facts, entities, values)
    promises: float = 0.0  # the commitment register's scan
    search: float = 0.0  # the questions' searches


@contextmanager
def timed_extraction(timing: Timing) -> Iterator[None]:
    from memory.graph import learning as ingestion

    real = ingestion.extract_document

    def timed(**kw: Any) -> int:
        started = time.perf_counter()
        try:
            return real(**kw)
        finally:
            timing.extract += time.perf_counter() - started

    with mock.patch.object(ingestion, "extract_document", timed):
        yield


@dataclass
class Stored:
    """The documents one labelled document became, and what the checks read them against."""

    pks: list[int]
    created: bool
    text: str
    moment: date


def save(writer: Actor, row: dict[str, Any]) -> Stored:
    """Save and ingest one labelled document at its upload time."""
    moment = datetime.fromisoformat(row["saved_at"])
    pks, created, texts, written = [], False, [], None
    for kwargs in savings(row):
        with clock(moment):
            _pause(writer.org, True)
            saved = add_document(actor=writer, **kwargs)
            if saved.created:
                # Saved while ingestion is paused (nothing goes to a worker's queue), then ingested here; the
                # column's default was bound before the clock was set, so the upload time is written here.
                Document.objects.filter(pk=saved.document.pk).update(recorded_at=moment, status=Document.Status.QUEUED)
                _pause(writer.org, False)
                ingest_documents(document_ids=[saved.document.pk])
        pks.append(saved.document.pk)
        created = created or saved.created
        texts += [kwargs["title"], kwargs["content"]]
        written = written or kwargs.get("occurred_at")
    return Stored(pks, created, "\n".join(texts), (written or moment).date())


def derive(writer: Actor, rows: list[dict[str, Any]]) -> tuple[dict[str, Derived], Timing]:
    """Save and ingest each document at its upload time (by saved_at, then id), run the commitment
    scan, read back what was derived from each, and search each question; returns it with the time
    each step took."""
    stored: dict[str, Stored] = {}
    timing = Timing()
    for row in sorted(rows, key=lambda r: (r["saved_at"], r["id"])):
        started = time.perf_counter()
        with timed_extraction(timing):
            stored[row["id"]] = save(writer, row)
        timing.ingest += time.perf_counter() - started
    latest = max(datetime.fromisoformat(r["saved_at"]) for r in rows)
    # Promises are read by the commitment register's nightly scan; an evaluation reads them too.
    Features.objects.filter(org=writer.org).update(commitments=True)
    started = time.perf_counter()
    with clock(latest):
        run_nightly(writer.org, only="commitments")
    timing.promises = time.perf_counter() - started
    derived = {doc_id: read_back(writer.org, kept) for doc_id, kept in stored.items()}
    started = time.perf_counter()
    with clock(latest):
        for row in rows:
            derived[row["id"]].asked = [ask(writer, q) for q in row.get("questions", [])]
    timing.search = time.perf_counter() - started
    return derived, timing


def read_back(org: Organisation, kept: Stored) -> Derived:
    """What was derived from one labelled document's documents."""
    found = Derived(stored=kept.created, text=kept.text, moment=kept.moment)
    for c in Commitment.objects.filter(org=org, document_id__in=kept.pks).order_by("pk"):
        found.promises.append(DerivedPromise(c.owner_name, c.what, c.due_on, c.pk))
    sources = CommitmentSource.objects.filter(org=org, document_id__in=kept.pks).select_related("commitment")
    for s in sources.order_by("pk"):
        found.promises.append(DerivedPromise(s.commitment.owner_name, s.what, s.due_on, s.commitment_id))
    extracted = Fact.objects.filter(org=org, document_id__in=kept.pks, source=Fact.Source.EXTRACTED).order_by("pk")
    for f in extracted.select_related("subject").prefetch_related("values"):
        subject, dates = f.subject.name if f.subject else None, tuple(v.date for v in f.values.all() if v.date)
        found.facts.append(DerivedFact(f.statement, subject, f.kind, f.valid_from, f.valid_to, dates))
    names: dict[int, list[str]] = defaultdict(list)
    for m in Mention.objects.filter(document_id__in=kept.pks).select_related("entity").order_by("pk"):
        found.entities.setdefault(m.surface, m.type or m.entity.type)
        found.entities.setdefault(m.entity.name, m.type or m.entity.type)
        names[m.entity_id] += [m.entity.name, m.surface]
    found.names = [tuple(dict.fromkeys(written)) for written in names.values()]
    values = Value.objects.filter(org=org, fact__document_id__in=kept.pks).select_related("entity").order_by("pk")
    found.values = [DerivedValue(v.entity.name, v.key, _written(v)) for v in values]
    return found


def _written(value: Value) -> str:
    if value.text:
        return value.text
    if value.number is not None:
        return f"{value.number:g} {value.unit}".strip()
    return str(value.date or "")


def ask(reader: Actor, question: dict[str, Any]) -> Asked:
    """One question searched through the selector search_company_memory uses, with its defaults, and
    each hit's snippet as the tool shows it (cut for the question)."""
    result = search_chunks(actor=reader, query=question["question"], top_k=TOP_K, mode="auto", per_document=True)
    kept = card_search(actor=reader, question=question["question"], as_of=None)
    card = answer_card(question["question"], kept, [said_when(h) for h in kept])
    source = next((h.text for h in kept if card.answer and h.chunk_id == card.answer.chunk_id), "")
    return Asked(
        question=question["question"],
        answer=question["answer"],
        passages=[hit.text for hit in result.hits],
        snippets=[snippet(hit.text, question["question"]) for hit in result.hits],
        card_status=card.status,
        card_line=card.line,
        card_sentence=card.answer.sentence if card.answer else "",
        card_passage=source,
        kept=len(kept),
        listed=[hit.text for hit in kept],
    )
