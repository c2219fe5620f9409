"""The extraction step of ingestion: a ready document's passages become entities, facts and values.

Deterministic by default (spaCy with the organisation's known entities, dateparser, price-parser,
rapidfuzz); with an LLM configured (``BRAIN_LLM_URL``) the model is asked first and the
deterministic pipeline is the fallback. Re-running keeps the facts found again (ids and history)
and removes the rest.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Collection
from dataclasses import replace

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from memory.graph.entities import (
    clean_name,
    context_mentions,
    get_or_create_entity,
    known_for,
    lock_names,
    mention,
)
from memory.graph.extraction.shapes import MAX_FACTS, ExtractedEntity, ExtractedFact, Extraction
from memory.graph.linking import KnownEntity
from memory.graph.writes import FactDraft, embed_drafts, record_facts
from memory.models import Chunk, Document, Fact, Mention
from memory.retrieval.serving import Vectors

logger = logging.getLogger("brain.extract")
MAX_KNOWN = 500
EXTRACTION_WINDOW = 50_000  # characters parsed at once (``_extract_in_windows``)
# "Priya Shah became head of support", "Dana is CEO of Initech": a role that one person holds at a time.
ROLE = re.compile(
    r"\b(?:is|was|became|becomes|remains|remained|serves as|served as|appointed|named|as)\s+(?:the\s+)?(?:new\s+)?"
    r"(?P<role>head|ceo|cto|cfo|coo|cmo|director|manager|lead|president|chair)\s+of\s+(?:the\s+)?"
    r"(?P<target>[A-Za-z][\w&'\- ]{1,40}?)(?=\s+(?:at|from|since|until|till|on|in|for)\b|[.,;:]|$)",
    re.IGNORECASE,
)


def role_of(statement: str) -> tuple[str, str] | None:
    """(relation, the team or company) when the statement gives someone a role, else None."""
    match = ROLE.search(statement)
    if match is None:
        return None
    target = " ".join(w if w.isupper() else w.capitalize() for w in match.group("target").split())
    return f"{match.group('role').lower()}_of", target


def _known_entities(document: Document, text: str) -> list[KnownEntity]:
    """Entities named in ``text`` as far as every reader of the document can know them."""
    lowered = text.lower()
    known = []
    for entity in known_for(context_mentions(document)):
        if any(n.lower() in lowered for n in (entity.name, *entity.aliases) if len(n) > 2):
            known.append(entity)
            if len(known) >= MAX_KNOWN:
                break
    return known


def _extractor():  # type: ignore[no-untyped-def]
    # Loaded on first use: spaCy and dateparser stay out of processes that never extract (web).
    from memory.graph.extraction import pipeline as extraction

    if settings.BRAIN_LLM_URL:
        from memory.graph.llm import LLMError, LLMExtractor  # only with a model configured

        llm = LLMExtractor(
            base_url=settings.BRAIN_LLM_URL, model=settings.BRAIN_LLM_MODEL, api_key=settings.BRAIN_LLM_KEY
        )

        def refined(text, **kw):  # type: ignore[no-untyped-def]
            try:
                return llm.extract(text, **kw)
            except LLMError as exc:
                logger.warning("LLM extraction failed, using the deterministic pipeline: %s", exc)
                return extraction.extract(text, **kw)

        return refined
    return extraction.extract


def extract_document(*, document_id: int, keep: Collection[int] = ()) -> int:
    """(Re)build the extracted facts of one ready document; returns how many were recorded.

    ``keep``: facts a person decided something about elsewhere (an answered contradiction names
    them); one no longer found is retired rather than deleted, as a flagged one is."""
    document = Document.objects.filter(pk=document_id, status=Document.Status.READY).first()
    if document is None or document.source_kind == "remember":
        return 0  # remembered facts are recorded as stated, not extracted
    chunks = list(Chunk.objects.filter(document=document).order_by("ordinal").values_list("pk", "text"))
    text, starts = "", []
    for _, passage in chunks:
        starts.append(len(text))
        text += passage + "\n\n"
    if not text.strip():
        return 0
    day = (document.occurred_at or document.recorded_at).date()
    result = _extract_in_windows(text, starts, document_date=day, known=_known_entities(document, text))
    drafts, chunk_for = [], {}
    for fact in result.facts:
        # A bare "date" value only repeats the validity window; named dates (renewal_date...) stay.
        draft = FactDraft(
            statement=fact.statement, kind=fact.kind, subject=fact.subject, object=fact.object,
            relation=fact.relation or "", single_valued=fact.single_valued, valid_from=fact.valid_from,
            valid_to=fact.valid_to, values=[v for v in fact.values if v.key != "date"],
        )  # fmt: skip
        role = role_of(fact.statement) if fact.subject else None
        if role is not None:
            draft.relation, draft.object, draft.single_valued = role[0], role[1], True
        drafts.append(draft)
        owner = max((i for i, start in enumerate(starts) if start <= fact.char_start), default=0)
        if chunks:
            chunk_for[len(drafts) - 1] = chunks[owner][0]
    # Before the transaction, as the model may be remote; a fact found again keeps its vector.
    unseen = _not_stored(document, drafts)
    vectors = embed_drafts(document.org_id, [drafts[i] for i in unseen])
    with transaction.atomic():
        # Every name this document links, locked at once in one order (see ``lock_names``).
        names = [e.name for e in result.entities]
        names += [n for d in drafts for n in (d.subject, d.object) if n]
        lock_names(org_id=document.org_id, names=names)
        named, by_name = set(), {}
        for entity in result.entities:
            # The document's own mentions are still there: a name links to the entity it did before.
            linked = get_or_create_entity(document=document, name=entity.name, type=entity.type,
                                          aliases=list(entity.aliases))  # fmt: skip
            for surface in {entity.name, *entity.aliases}:
                mention(entity=linked, document=document, surface=surface, type=entity.type)
                named.add((linked.pk, clean_name(surface)))
                by_name[surface] = linked
        fresh = sorted(_keep_unchanged(document, drafts, chunk_for, keep))
        record_facts(document=document, drafts=[drafts[i] for i in fresh],
                     chunk_for={n: chunk_for[i] for n, i in enumerate(fresh) if i in chunk_for},
                     vectors=_vectors_of(document, drafts, fresh, unseen, vectors), linked=by_name)  # fmt: skip
        _forget_other_mentions(document, named)
    return len(drafts)


def windows(starts: list[int], length: int, most: int) -> list[tuple[int, int]]:
    """Spans of ``length`` characters cut at passage starts, each at most ``most`` long unless one
    passage alone is longer: what one parse holds."""
    spans: list[tuple[int, int]] = []
    begin = last = 0
    for start in [*starts[1:], length]:
        if start - begin > most and last > begin:
            spans.append((begin, last))
            begin = last
        last = start
    spans.append((begin, length))
    return spans


def _extract_in_windows(text: str, starts: list[int], **kw: object) -> Extraction:
    """Extract a long document a window of passages at a time: the parser's memory grows with the
    text it holds (about 1 GB for 100,000 characters), so a worker's memory is bounded by
    ``EXTRACTION_WINDOW`` whatever the document's length. A document within one window is parsed
    whole, as before."""
    spans = windows(starts, len(text), EXTRACTION_WINDOW)
    if len(spans) == 1:
        return _extractor()(text, **kw)
    entities: dict[str, ExtractedEntity] = {}
    facts: list[ExtractedFact] = []
    for begin, end in spans:
        if len(facts) >= MAX_FACTS:  # a document yields as many facts as one parse would, in order
            break
        part = _extractor()(text[begin:end], **kw)
        facts += [replace(fact, char_start=fact.char_start + begin) for fact in part.facts]
        for entity in part.entities:
            seen = entities.setdefault(entity.name, entity)
            if seen is not entity:
                seen.aliases = sorted({*seen.aliases, *entity.aliases})
                seen.known = seen.known or entity.known
    return Extraction(entities=list(entities.values()), facts=facts[:MAX_FACTS])


def _key(statement: str, relation: str, valid_from: object, kind: str) -> tuple[object, ...]:
    return (" ".join(statement.split()), relation, valid_from, kind)


def _keep_unchanged(
    document: Document, drafts: list[FactDraft], chunk_for: dict[int, int], keep: Collection[int] = ()
) -> set[int]:
    """Re-extraction keeps the facts it finds again, with their ids and history; returns the
    positions of the drafts that are new.

    A fact no longer found is deleted, unless it had superseded another: then it is retired
    (superseded now) so the history of what it replaced stays whole. A fact a person decided on
    is never deleted either: flagged (it stays flagged, for its review), retired on review, or in
    ``keep``; it is retired if it was current.
    """
    wanted = {_key(d.statement, d.relation, d.valid_from, d.kind): i for i, d in enumerate(drafts)}
    fresh = set(range(len(drafts)))
    gone = []
    for fact in Fact.objects.filter(document=document, source=Fact.Source.EXTRACTED).select_for_update():
        position = wanted.get(_key(fact.statement, fact.relation, fact.valid_from, fact.kind))
        if position is not None and position in fresh:
            fresh.discard(position)
            if chunk_for.get(position) != fact.chunk_id:
                Fact.objects.filter(pk=fact.pk).update(chunk_id=chunk_for.get(position))
        else:
            gone.append(fact.pk)
    replaced_something = set(Fact.objects.filter(superseded_by_id__in=gone).values_list("superseded_by_id", flat=True))
    replaced_something |= _decided(gone, keep)
    Fact.objects.filter(pk__in=replaced_something, superseded_at__isnull=True).update(superseded_at=timezone.now())
    Fact.objects.filter(pk__in=set(gone) - replaced_something).delete()
    return fresh


def _decided(ids: list[int], keep: Collection[int]) -> set[int]:
    """Those of ``ids`` a person decided on: flagged, retired on review (superseded by nothing), or kept."""
    held = Q(flagged_at__isnull=False) | Q(superseded_at__isnull=False, superseded_by__isnull=True) | Q(pk__in=keep)
    return set(Fact.objects.filter(pk__in=ids).filter(held).values_list("pk", flat=True))


def _forget_other_mentions(document: Document, named: set[tuple[int, str]]) -> None:
    """Delete the document's mentions this extraction did not make again, but for the entities
    its facts are about (a fact found again keeps the mentions it was recorded with)."""
    facts = Fact.objects.filter(document=document)
    about = {*facts.values_list("subject_id", flat=True), *facts.values_list("object_id", flat=True)}
    stale = [pk for pk, entity_id, surface in Mention.objects.filter(document=document).values_list(
        "pk", "entity_id", "surface") if (entity_id, surface) not in named and entity_id not in about]  # fmt: skip
    Mention.objects.filter(pk__in=stale).delete()


def _not_stored(document: Document, drafts: list[FactDraft]) -> list[int]:
    """Positions of the drafts no extracted fact of the document states yet: those to embed."""
    rows = Fact.objects.filter(document=document, source=Fact.Source.EXTRACTED)
    stored = {_key(*row) for row in rows.values_list("statement", "relation", "valid_from", "kind")}
    return [i for i, d in enumerate(drafts) if _key(d.statement, d.relation, d.valid_from, d.kind) not in stored]


def _vectors_of(document: Document, drafts: list[FactDraft], fresh: list[int], unseen: list[int],
                vectors: Vectors) -> Vectors:  # fmt: skip
    """The vectors of the ``fresh`` drafts, from those made for the ``unseen`` ones; a fact deleted
    meanwhile by another run is embedded here (rare: the model is then called inside the transaction)."""
    where = {position: n for n, position in enumerate(unseen)}
    if all(i in where for i in fresh):
        return vectors.pick(where[i] for i in fresh)
    return embed_drafts(document.org_id, [drafts[i] for i in fresh])
