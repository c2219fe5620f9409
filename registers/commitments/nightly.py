"""The commitment register's nightly work: read new meeting notes and chat for promises, then
look in memory for evidence that each open one landed.

Both are safe to run twice: a promise read again finds its fingerprint and is not stored twice,
and the scan resumes after the last passage it read. A verdict only ever reports; nothing is
marked missed, and a promise with no evidence stays open with a verdict saying what was searched.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from datetime import date, datetime, time
from itertools import groupby
from zoneinfo import ZoneInfo

from django.contrib.postgres.search import SearchQuery
from django.db.models import Q, QuerySet

from brain.models import AuditRecord, Organisation
from memory.access import fact_in_use, seen_by_every_reader_of
from memory.documents.chunking import TURN, opening_turn
from memory.documents.turns import spoken_text
from memory.graph.entities import live_mentions
from memory.models import Chunk, Document, Entity, Fact, Scope
from registers.commitments.extraction import Utterance, extract_commitments
from registers.common import batches_after_mark, document_audience, local_day, local_today
from registers.models import Commitment, Verdict

# Documents whose passages are read for promises, besides any passage that is a speaker's turn.
CONVERSATION_SOURCES = ("slack", "mail", "email", "transcript", "meeting", "chat")
# Uploaded pages whose title says they record a meeting are read too ("Weekly sync notes").
MEETING_TITLE = r"\m(minutes|meeting|notes|stand-?up|retro|retrospective|transcript|sync|call|action items)\M"
BATCH = 500
# Words that say something was carried out.
COMPLETION = re.compile(
    r"\b(?:done|finished|completed|complete|shipped|sent|delivered|landed|merged|released|launched|migrated|"
    r"published|signed|closed|resolved|fixed|submitted|deployed|handed over|went out|is out|are out|live now)\b",
    re.IGNORECASE,
)
STOP = frozenset({
    "a", "an", "the", "to", "of", "for", "and", "or", "in", "on", "at", "by", "with", "will", "would", "shall",
    "should", "can", "could", "i", "we", "you", "he", "she", "they", "it", "this", "that", "their", "them", "his",
    "her", "our", "my", "be", "is", "are", "was", "were", "have", "has", "had", "do", "does", "did", "get", "send",
    "make", "next", "week", "month", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday",
    "tomorrow", "today", "end",
})  # fmt: skip


def scan_commitments(org: Organisation, progress: Callable[[int], None] | None = None) -> int:
    """Read the passages added since the last scan; returns how many promises were stored."""

    def rows(after: int) -> QuerySet[Chunk]:
        return promise_passages(Chunk.objects.filter(org=org, pk__gt=after)).order_by("pk")

    stored = 0
    for batch in batches_after_mark(org, "commitments", rows, BATCH, progress):
        for _, chunks in groupby(sorted(batch, key=lambda c: (c.document_id, c.ordinal)), key=lambda c: c.document_id):
            stored += _store(org, list(chunks))
    return stored


def promise_passages(chunks: QuerySet[Chunk]) -> QuerySet[Chunk]:
    """The current passages read for promises: a speaker's turn, a conversation, a meeting's notes."""
    return (
        chunks.filter(superseded_at__isnull=True)
        .filter(
            Q(speaker__gt="")
            | Q(document__source_kind__in=CONVERSATION_SOURCES)
            | Q(document__title__iregex=MEETING_TITLE)
        )
        .select_related("document")
    )


def _store(org: Organisation, chunks: list[Chunk]) -> int:
    rows = read_promises(org, chunks)
    known = set(
        Commitment.objects.filter(org=org, fingerprint__in=[r.fingerprint for r in rows]).values_list(
            "fingerprint", flat=True
        )
    )
    fresh = list({r.fingerprint: r for r in rows if r.fingerprint not in known}.values())
    Commitment.objects.bulk_create(fresh, ignore_conflicts=True)  # one read meanwhile elsewhere stays as it is
    return len(fresh)


def read_promises(org: Organisation, chunks: list[Chunk]) -> list[Commitment]:
    """The promises the passages of one document make, as unsaved register entries."""
    document = chunks[0].document
    said_on = local_day(org, document.occurred_at or document.recorded_at)
    utterances = [u for c in chunks for u in _utterances(c, document, said_on)]
    entities = _document_entities(document)
    teams = [name for name, kind in entities.items() if kind.type == "team"]
    drafts = extract_commitments(utterances, teams=teams)
    rows = [
        Commitment(
            org=org,
            owner_name=d.owner[:200],
            owner_entity=entities.get(d.owner.lower()),
            what=d.what[:300],
            due_on=d.due_on,
            promised_on=d.promised_on,
            document=document,
            chunk_id=d.ref,
            quote=d.quote[:2000],
            origin=Commitment.Origin.EXTRACTED,
            fingerprint=_fingerprint(document, d.what),
            **document_audience(document),
        )  # fmt: skip
        for d in drafts
    ]
    return rows


def _utterances(chunk: Chunk, document: Document, said_on: date) -> list[Utterance]:
    """A turn is one utterance; in a passage of notes, a line that is a "Name: ..." turn is one
    (pasted minutes), and other lines speak for the document's speaker, if any."""
    if chunk.speaker:
        return [Utterance(speaker=chunk.speaker, text=spoken_text(chunk), said_on=said_on, ref=chunk.pk)]
    found = []
    for line in chunk.text.splitlines():
        turn = opening_turn(line)
        speaker, text = (turn[0], TURN.sub("", line, count=1)) if turn else (document.speaker, line)
        if text.strip():
            found.append(Utterance(speaker=speaker, text=text.strip(), said_on=said_on, ref=chunk.pk))
    return found


def _document_entities(document: Document) -> dict[str, Entity]:
    """Entities named in the document itself, by lower-case name (an owner is linked only to an
    entity its own text names, so no reader learns of one from elsewhere)."""
    mentions = live_mentions().filter(document=document).select_related("entity")
    return {m.surface.lower(): m.entity for m in mentions}


def _fingerprint(document: Document, what: str) -> str:
    """The same promise read from any version of a document has one key."""
    source = f"{document.source_kind}:{document.external_id}" if document.external_id else f"doc:{document.pk}"
    return hashlib.sha256(f"{source}|{' '.join(what.lower().split())}".encode()).hexdigest()


def check_commitments(org: Organisation, progress: Callable[[int], None] | None = None) -> int:
    """A verdict for every open commitment: passages said after it was promised, readable by
    everyone who may read the commitment, naming its owner or its object with a word of completion.

    One a night: a commitment already judged since the organisation's midnight is skipped, so a
    second beat, a redelivered task or a scan run by hand the same day adds nothing."""
    done = 0
    midnight = datetime.combine(local_today(org), time.min, tzinfo=ZoneInfo(org.time_zone))
    open_ones = Commitment.objects.filter(org=org, state=Commitment.State.OPEN)
    judged = Verdict.objects.filter(commitment__org=org, checked_at__gte=midnight).values("commitment_id")
    for commitment in open_ones.exclude(pk__in=judged).select_related("document"):
        words = _object_words(commitment)
        looked_for = f"passages since {commitment.promised_on} by or naming {commitment.owner_name} about " + (
            " ".join(words) or commitment.what
        )
        found = _evidence(commitment, words)
        Verdict.objects.create(
            commitment=commitment, looked_for=looked_for[:500], found=found, suggests_landed=bool(found),
            summary=(f"{len(found)} passage(s) suggest it landed; check them before saying so." if found
                     else "No evidence yet that it landed; it stays open."),
        )  # fmt: skip
        done += 1
        if progress:
            progress(1)
    return done


def _object_words(commitment: Commitment) -> list[str]:
    owner = {w.lower() for w in re.findall(r"\w+", commitment.owner_name)}
    words = [w for w in re.findall(r"[A-Za-z][\w-]+", commitment.what) if w.lower() not in STOP | owner]
    return list(dict.fromkeys(words))[:8]


def _evidence(commitment: Commitment, words: list[str]) -> list[dict[str, object]]:
    if not words:
        return []
    if commitment.document is not None:
        readers = seen_by_every_reader_of(commitment.document)
    else:
        readers = Q(org_id=commitment.org_id, scope=Scope.SHARED, category__restricted=False)
    query = SearchQuery(" OR ".join(words), search_type="websearch", config="english")
    candidates = (
        Chunk.objects.filter(org_id=commitment.org_id, superseded_at__isnull=True, search=query)
        .filter(document__in=Document.objects.filter(readers))
        .filter(
            Q(said_at__date__gte=commitment.promised_on)
            | Q(said_at__isnull=True, recorded_at__date__gte=commitment.promised_on)
        )
        .exclude(pk=commitment.chunk_id or 0)
        .select_related("document")
        .order_by("pk")[:50]
    )
    owner = commitment.owner_name.split()[0].lower() if commitment.owner_name else ""
    found = []
    for chunk in candidates:
        text = spoken_text(chunk)
        about_owner = owner and (owner in chunk.speaker.lower() or owner in text.lower())
        if COMPLETION.search(text) and about_owner:
            found.append({"document": chunk.document.public_id, "passage": chunk.pk, "title": chunk.title,
                          "said_at": (chunk.said_at or chunk.recorded_at).isoformat(), "text": text[:300]})  # fmt: skip
        if len(found) >= 3:
            break
    facts = (
        Fact.objects.filter(org_id=commitment.org_id, superseded_at__isnull=True, search=query,
                            recorded_at__date__gte=commitment.promised_on)
        .filter(fact_in_use(), document__in=Document.objects.filter(readers))
        .only("pk", "statement", "recorded_at")
        .order_by("pk")[:50]
    )  # fmt: skip
    for fact in facts:
        if len(found) >= 3:
            break
        if COMPLETION.search(fact.statement) and owner and owner in fact.statement.lower():
            found.append({"memory": fact.public_id, "statement": fact.statement[:300],
                          "recorded_at": fact.recorded_at.isoformat()})  # fmt: skip
    return found


# What reading a promise again may correct on an entry nobody has touched.
REREAD_FIELDS = ("owner_name", "owner_entity_id", "due_on", "promised_on", "chunk_id", "quote")


def reread_commitments(org: Organisation, document: Document) -> dict[str, int]:
    """Read one document's promises again with the current rules (``manage.py reextract``).

    A promise found again keeps its entry (state, verdicts); if nobody has settled, noted or
    edited it, its owner, dates and quote are those read now. A new one is added; one no longer
    found is removed, unless a person settled, noted or edited it. Returns how many were added,
    updated, removed and kept."""
    chunks = list(promise_passages(Chunk.objects.filter(document=document)).order_by("ordinal"))
    wanted = {r.fingerprint: r for r in (read_promises(org, chunks) if chunks else [])}
    stored = Commitment.objects.filter(org=org, document=document, origin=Commitment.Origin.EXTRACTED)
    taken = set(Commitment.objects.filter(org=org, fingerprint__in=list(wanted)).values_list("fingerprint", flat=True))
    fresh = [row for key, row in wanted.items() if key not in taken]
    Commitment.objects.bulk_create(fresh, ignore_conflicts=True)
    decided = ~Q(state=Commitment.State.OPEN) | Q(settled_by__isnull=False) | ~Q(note="")
    untouched = {c.public_id: c for c in stored.exclude(decided)}
    edited = set(
        AuditRecord.objects.filter(org=org, action="commitment.updated", target__in=list(untouched)).values_list(
            "target", flat=True
        )
    )
    untouched = {key: c for key, c in untouched.items() if key not in edited}
    removable = [c.pk for c in untouched.values() if c.fingerprint not in wanted]
    Commitment.objects.filter(pk__in=removable).delete()
    updated = 0
    for entry in untouched.values():
        now = wanted.get(entry.fingerprint)
        changed = [f for f in REREAD_FIELDS if now is not None and getattr(entry, f) != getattr(now, f)]
        if now is not None and changed:
            Commitment.objects.filter(pk=entry.pk).update(**{f: getattr(now, f) for f in changed})
            updated += 1
    kept = stored.count() - len(fresh)
    return {"added": len(fresh), "updated": updated, "removed": len(removable), "kept": kept}
