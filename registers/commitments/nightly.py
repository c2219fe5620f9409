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
from datetime import datetime, time
from itertools import groupby
from zoneinfo import ZoneInfo

from django.contrib.postgres.search import SearchQuery
from django.db import IntegrityError, transaction
from django.db.models import Q, QuerySet
from django.db.models.functions import Coalesce

from brain.models import AuditRecord, Organisation
from memory.access import current, fact_in_use, readable_by_all, seen_by_every_reader_of
from memory.documents.source import SourceReading, read_source, read_text, thread_subject
from memory.documents.turns import previous_turn, spoken_text
from memory.extraction.lines import word_set
from memory.graph.entities import live_mentions
from memory.models import Chunk, Document, Entity, Fact
from registers.commitments.evidence import evidence_line, said_after, short
from registers.commitments.extraction import Utterance, extract_commitments
from registers.commitments.twins import add_source, find_twin
from registers.common import batches_after_mark, document_audience, local_day, local_today
from registers.models import Commitment, CommitmentSource, Verdict

# Documents whose passages are read for promises, besides any passage that is a speaker's turn.
CONVERSATION_SOURCES = ("slack", "mail", "email", "transcript", "meeting", "chat")
# Uploaded pages whose title says they record a meeting are read too ("Weekly sync notes", "Pipeline review").
MEETING_TITLE = (
    r"\m(minutes|meeting|notes|stand-?up|retro|retrospective|transcript|sync|call|action items|review|kick-?off"
    r"|workshop|planning|debrief|check-?in|huddle|1:1|one-on-one|catch-?up|offsite)\M"
)
# Or their text lists who attended ("Attendees: Priya Shah, Tom Becker"), or gives action items
# ("## Action items", "ACTION: Priya to send the deck", "- [ ] @sam book the room").
ATTENDEES_LINE = r"(?n)^\W*(attendees|participants|present|attendance)\W*:"
ACTION_LINES = r"(?n)^\W*(action items?|next steps|to-?dos?)\W*$|^\W*action( item)?\s*:|^\s*[-*]\s*\[ \]\s*@?\w"
# Minutes kept under the meeting's date as their title ("2019.01.04", "2026-01-07").
DATE_TITLE = r"^\W*\d{4}[-./]\d{1,2}[-./]\d{1,2}\W*$"
# An issue or pull request with its comments: as the GitHub connector saves one, or exported by gh2md
# ("#### [Matt Duck](...) commented at [2020-07-19 06:22](...):").
THREAD_KINDS = ("issue", "pull_request")
THREAD_TITLE = r"^(Issue|Pull request) [\w.-]+/[\w.-]+#[0-9]+:"
THREAD_HEADING = r"(?n)^#{1,6}\s*(<img[^>]*>\s*)?\[[^]]{1,80}\]\([^)]*\)\s+(opened|commented)\M"
# A mail pasted as text: it opens with its header lines ("From: ...", "Date: ...").
MAIL_OPENING = r"^\s*(from|to|cc|date|sent|subject)\s*:[^\n]*\n\s*(from|to|cc|bcc|date|sent|subject|reply-to)\s*:"
BATCH = 500
# Words that say nothing of what a promise is about: left out of what the search looks for.
STOP = word_set(
    """
    a an the to of for and or in on at by with will would shall should can could i we you he she
    they it this that their them his her our my be is are was were have has had do does did get
    send make next week month monday tuesday wednesday thursday friday saturday sunday tomorrow
    today end
    """
)


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
    """The current passages read for promises: a speaker's turn, a conversation, a mail (synced or
    pasted), a meeting's notes or minutes, an issue or pull request with its comments."""
    return (
        chunks.filter(current())
        .filter(
            Q(speaker__gt="")
            | Q(document__source_kind__in=CONVERSATION_SOURCES)
            | Q(document__title__iregex=MEETING_TITLE)
            | Q(document__title__regex=DATE_TITLE)
            | Q(document__content__iregex=ATTENDEES_LINE)
            | Q(document__content__iregex=ACTION_LINES)
            | Q(document__content__iregex=MAIL_OPENING)
            | Q(document__metadata__kind__in=THREAD_KINDS)
            | Q(document__title__regex=THREAD_TITLE)
            | Q(document__content__regex=THREAD_HEADING)
        )
        .select_related("document")
    )


def _store(org: Organisation, chunks: list[Chunk]) -> int:
    rows = read_promises(org, chunks)
    prints = [r.fingerprint for r in rows]
    known = set(Commitment.objects.filter(org=org, fingerprint__in=prints).values_list("fingerprint", flat=True))
    known |= set(CommitmentSource.objects.filter(org=org, fingerprint__in=prints).values_list("fingerprint", flat=True))
    fresh: list[Commitment] = []
    for row in {r.fingerprint: r for r in rows if r.fingerprint not in known}.values():
        twin = find_twin(row, also=fresh)
        if twin is not None:
            add_source(twin, row)  # one promise said twice: the earlier entry gains this place
            continue
        try:
            with transaction.atomic():
                row.save()
        except IntegrityError:
            continue  # read meanwhile by another scan: that entry stays as it is
        fresh.append(row)
    return len(fresh)


def read_promises(org: Organisation, chunks: list[Chunk]) -> list[Commitment]:
    """The promises the passages of one document make, as unsaved register entries."""
    document = chunks[0].document
    source, utterances = _utterances(chunks, document)
    entities = _document_entities(document)
    teams = [name for name, kind in entities.items() if kind.type == "team"]
    before = previous_turn(document) if utterances else None
    if before is not None:  # a one-message reply is read after the message it answers, which promises nothing here
        utterances = [Utterance(speaker=before[0], text=before[1], said_on=utterances[0].said_on), *utterances]
    drafts = [d for d in extract_commitments(utterances, teams=teams) if d.ref is not None]
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
            dated_from_upload=source.moment.from_upload,
            **document_audience(document),
        )
        for d in drafts
    ]
    return rows


def _utterances(chunks: list[Chunk], document: Document) -> tuple[SourceReading, list[Utterance]]:
    """What the passages say, a line of the body at a time, each with who said it (a turn's speaker,
    a "Name: ..." line of pasted minutes, a mail's sender, a message's speaker) and said on the day
    the document speaks from. Headers, quoted replies, signatures and greetings promise nothing."""
    rows = [(c.pk, c.text, c.speaker, c.char_start, c.char_end) for c in chunks]
    read = read_text(document, rows, all_passages=False)
    source = read_source(document, read.text, passages=read.speakers)
    subject = thread_subject(document)  # what "it" is in a reply to an issue
    found = []
    for segment in source.segments:
        owner = read.pieces[read.piece_at(segment.start)].passage
        words = read.text[segment.start : segment.end].strip()
        if words:
            said_on = source.said_on(segment)  # a thread's comment on its own day
            found.append(Utterance(speaker=segment.speaker, text=words, said_on=said_on, ref=owner, topic=subject))
    return source, found


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
    A verdict names each passage or memory it rests on, with the line that matched.

    One a night: a commitment already judged since the organisation's midnight is skipped, so a
    second beat, a redelivered task or a scan run by hand the same day adds nothing."""
    done = 0
    midnight = datetime.combine(local_today(org), time.min, tzinfo=ZoneInfo(org.time_zone))
    open_ones = Commitment.objects.filter(org=org, state=Commitment.State.OPEN)
    judged = Verdict.objects.filter(commitment__org=org, checked_at__gte=midnight).values("commitment_id")
    for commitment in open_ones.exclude(pk__in=judged).select_related("document", "chunk", "org"):
        words = _object_words(commitment)
        looked_for = f"passages said after {commitment.promised_on} by or naming {commitment.owner_name} about " + (
            " ".join(words) or commitment.what
        )
        found = _evidence(commitment, words)
        Verdict.objects.create(
            commitment=commitment,
            looked_for=looked_for[:500],
            found=found,
            suggests_landed=bool(found),
            summary=_summary(found),
        )
        done += 1
        if progress:
            progress(1)
    return done


def _summary(found: list[dict[str, object]]) -> str:
    """What a verdict says, naming what it rests on: "Said after the promise: chunk_12 in Sales chat
    (2026-03-05): "the revised quote went out this morning". Check before saying it landed." """
    if not found:
        return "No evidence yet that it landed; it stays open."
    named = [f'{item["id"]} in {item["title"]} ({item["day"]}): "{short(str(item["line"]), 90)}"' for item in found]
    return f"Said after the promise: {'; '.join(named)}. Check before saying it landed."[:500]


def _object_words(commitment: Commitment) -> list[str]:
    owner = {w.lower() for w in re.findall(r"\w+", commitment.owner_name)}
    words = [w for w in re.findall(r"[A-Za-z][\w-]+", commitment.what) if w.lower() not in STOP | owner]
    return list(dict.fromkeys(words))[:8]


def _promised_at(commitment: Commitment) -> tuple[datetime, bool]:
    """When the promise was said, and whether that is a moment (a passage's own time) rather than
    the start of the day it was promised on."""
    chunk, document = commitment.chunk, commitment.document
    if chunk is not None and document is not None and (chunk.said_at or document.occurred_at):
        return chunk.said_at or document.occurred_at, True  # type: ignore[return-value]
    tz = ZoneInfo(commitment.org.time_zone)
    return datetime.combine(commitment.promised_on, time.min, tzinfo=tz), False


def own_moment(document: Document) -> datetime:
    """When a document without ``occurred_at`` was said: its own time where its text gives one (a
    mail's Date: header, a date in a meeting's title), else when it was saved."""
    opening = Chunk.objects.filter(document=document).order_by("ordinal").values_list("text", flat=True).first()
    moment = read_source(document, opening or "").moment
    return document.recorded_at if moment.from_upload else moment.at


def _evidence(commitment: Commitment, words: list[str]) -> list[dict[str, object]]:
    """Up to three passages or memories said after the promise (each by its own moment: when the
    passage was said, else its document's date, and the upload time only when it has neither),
    each cited by the sentence that says it was done and mentions the promise's subject
    (``registers.commitments.evidence``); a passage without such a sentence is not cited."""
    if not words:
        return []
    if commitment.document is not None:
        readers = seen_by_every_reader_of(commitment.document)
    else:
        readers = Q(org_id=commitment.org_id) & readable_by_all()
    since, exact = _promised_at(commitment)
    after = Q(moment__gt=since) if exact else Q(moment__gte=since)
    query = SearchQuery(" OR ".join(words), search_type="websearch", config="english")
    candidates = (
        Chunk.objects.filter(current(), org_id=commitment.org_id, search=query)
        .filter(document__in=Document.objects.filter(readers))
        .annotate(moment=Coalesce("said_at", "document__occurred_at", "recorded_at"))
        .filter(after | Q(said_at__isnull=True, document__occurred_at__isnull=True))  # undated: read below
        .exclude(pk=commitment.chunk_id or 0)
        .select_related("document")
        .order_by("moment", "pk")[:50]
    )
    found: list[dict[str, object]] = []
    for chunk in candidates:
        if chunk.said_at is None and chunk.document.occurred_at is None:
            chunk.moment = own_moment(chunk.document)
            if not said_after(chunk.moment, since, exact=exact):
                continue
        text = spoken_text(chunk)
        line = evidence_line(text, speaker=chunk.speaker, what=commitment.what, owner=commitment.owner_name)
        if line is not None:
            found.append(
                {
                    "id": chunk.public_id,
                    "passage": chunk.public_id,
                    "passage_pk": chunk.pk,
                    "document": chunk.document.public_id,
                    "document_pk": chunk.document_id,
                    "title": chunk.title or chunk.document.title,
                    "said_at": chunk.moment.isoformat(),
                    "day": local_day(commitment.org, chunk.moment).isoformat(),
                    "line": line,
                    "text": text[:300],
                }
            )
        if len(found) >= 3:
            break
    facts = (
        Fact.objects.filter(current(), org_id=commitment.org_id, search=query)
        .filter(fact_in_use(), document__in=Document.objects.filter(readers))
        .annotate(moment=Coalesce("document__occurred_at", "recorded_at"))
        .filter(after | (Q(document__occurred_at__isnull=True) & ~Q(document__source_kind="remember")))
        .select_related("document")
        .only(
            "pk",
            "statement",
            "recorded_at",
            "chunk_id",
            "document",
            "document__title",
            "document__occurred_at",
            "document__source_kind",
        )
        .order_by("moment", "pk")[:50]
    )
    for fact in facts:
        if len(found) >= 3:
            break
        if fact.document is not None and fact.document.occurred_at is None and fact.document.source_kind != "remember":
            fact.moment = own_moment(fact.document)
            if not said_after(fact.moment, since, exact=exact):
                continue
        line = evidence_line(fact.statement, what=commitment.what, owner=commitment.owner_name)
        if line is not None:
            source = fact.document if fact.document is not None and fact.document.source_kind != "remember" else None
            found.append(
                {
                    "id": fact.public_id,
                    "memory": fact.public_id,
                    "statement": fact.statement[:300],
                    "line": line,
                    "said_at": fact.moment.isoformat(),
                    "day": local_day(commitment.org, fact.moment).isoformat(),
                    "title": source.title if source else "remembered",
                    "document": source.public_id if source else "",
                    "document_pk": source.pk if source else None,
                    "passage_pk": fact.chunk_id if source else None,
                    "recorded_at": fact.recorded_at.isoformat(),
                }
            )
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
    taken |= set(
        CommitmentSource.objects.filter(org=org, fingerprint__in=list(wanted)).values_list("fingerprint", flat=True)
    )
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
