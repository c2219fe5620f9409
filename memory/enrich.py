"""The extraction step of ingestion: a ready document's passages become entities, facts and values.

Deterministic by default (spaCy with the organisation's known entities, dateparser, price-parser,
rapidfuzz); with an LLM configured (``BRAIN_LLM_URL``) the model is asked first and the
deterministic pipeline is the fallback. Re-running rebuilds the document's extracted facts.
"""

from __future__ import annotations

import logging
import re
from dataclasses import asdict
from typing import Any

from django.conf import settings
from django.db import transaction

from memory.facts import FactDraft, get_or_create_entity, record_facts
from memory.models import Chunk, Document, Entity, Fact, Mention

logger = logging.getLogger("brain.extract")
MAX_KNOWN = 500
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


def _known_entities(org_id: int, text: str) -> list[Any]:
    from memory.linking import KnownEntity

    lowered = text.lower()
    known = []
    for name, type_, aliases in Entity.objects.filter(org_id=org_id).values_list("name", "type", "aliases")[:20000]:
        if any(n.lower() in lowered for n in (name, *aliases) if len(n) > 2):
            known.append(KnownEntity(name=name, type=type_, aliases=tuple(aliases)))
            if len(known) >= MAX_KNOWN:
                break
    return known


def _extractor():  # type: ignore[no-untyped-def]
    from memory import extraction

    if settings.BRAIN_LLM_URL:
        from memory.llm import LLMError, LLMExtractor

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


def extract_document(*, document_id: int) -> int:
    """(Re)build the extracted facts of one ready document; returns how many were recorded."""
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
    result = _extractor()(text, document_date=day, known=_known_entities(document.org_id, text))
    drafts, chunk_for = [], {}
    for fact in result.facts:
        # A bare "date" value only repeats the validity window; named dates (renewal_date...) stay.
        draft = FactDraft(
            statement=fact.statement, kind=fact.kind, subject=fact.subject, object=fact.object,
            relation=fact.relation or "", single_valued=fact.single_valued, valid_from=fact.valid_from,
            valid_to=fact.valid_to, values=[asdict(v) for v in fact.values if v.key != "date"],
        )  # fmt: skip
        role = role_of(fact.statement) if fact.subject else None
        if role is not None:
            draft.relation, draft.object, draft.single_valued = role[0], role[1], True
        drafts.append(draft)
        owner = max((i for i, start in enumerate(starts) if start <= fact.char_start), default=0)
        if chunks:
            chunk_for[len(drafts) - 1] = chunks[owner][0]
    with transaction.atomic():
        Fact.objects.filter(document=document, source=Fact.Source.EXTRACTED).delete()
        Mention.objects.filter(document=document).delete()
        for entity in result.entities:
            linked = get_or_create_entity(
                org_id=document.org_id, name=entity.name, type=entity.type, aliases=list(entity.aliases)
            )
            for surface in {entity.name, *entity.aliases}:
                Mention.objects.get_or_create(entity=linked, document=document, surface=surface[:200])
        record_facts(document=document, drafts=drafts, chunk_for=chunk_for)
    return len(drafts)
