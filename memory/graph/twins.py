"""One fact said in two documents is one fact: the later statement is kept as a twin of the first
(``Fact.same_as``), and reads show the first once, naming every document that says it.

A twin is only ever found among facts with the same audience (``memory.access.same_audience``), so
whoever reads the first reads each of its sources, and nobody learns of a restricted or personal
document through a shared fact. The first is the earlier fact; a twin never has twins of its own.
When the first stops being shown (flagged for review, or deleted with its document), its twins are
released and stand on their own again.
"""

from __future__ import annotations

import re

from django.db.models import Q
from rapidfuzz import fuzz

from brain.core.actors import Actor
from memory.access import current, fact_in_use, fact_not_flagged, readable, same_audience_as
from memory.models import Fact

# Two statements of the same values about the same subject, this alike in their words, say one thing
# ("Northwind renewed for EUR 48,000 a year" / "Northwind renewed at EUR 48,000 a year").
ALIKE = 92
CANDIDATES = 50
UNREAD = ("embedding", "next_embedding", "search")  # a fact's columns no comparison of facts reads
COMPARED = ("statement", "subject_id", "object_id", "relation", "value_key")  # what ``is_twin`` reads


def words_of(statement: str) -> str:
    return " ".join(re.findall(r"[^\W_]+", statement.casefold()))


def _values(fact: Fact) -> tuple[tuple[object, ...], ...]:
    return tuple(sorted((str(v.key), v.number, v.date, v.text) for v in fact.values.all()))


def is_twin(first: Fact, later: Fact) -> bool:
    """Whether ``later`` says what ``first`` says (same audience checked by the caller)."""
    if words_of(first.statement) == words_of(later.statement):
        return True
    if first.subject_id is None or first.subject_id != later.subject_id or first.relation != later.relation:
        return False
    if first.object_id != later.object_id or first.value_key != later.value_key:
        return False
    mine, theirs = _values(first), _values(later)
    if not mine or mine != theirs:
        return False
    if _names(first.statement) != _names(later.statement):
        return False  # "Northwind renewed ..." and "Contoso renewed ..." for the same amount are two facts
    return fuzz.token_set_ratio(words_of(first.statement), words_of(later.statement)) >= ALIKE


def _names(statement: str) -> set[str]:
    """The names and numbers a statement gives: capitalised words (any position) and figures."""
    return {w.casefold() for w in re.findall(r"\b[A-Z][\w'-]*|\d[\d.,]*", statement)} - {"the", "a", "an", "our"}


def join_twins(facts: list[Fact]) -> int:
    """Mark each of ``facts`` (just recorded, inside the caller's transaction) that repeats an earlier
    fact of another document as its twin; returns how many."""
    joined = 0
    for fact in facts:
        if fact.source != Fact.Source.EXTRACTED or fact.document_id is None:
            continue
        same = Q(statement__iexact=fact.statement)
        if fact.subject_id is not None:
            same |= Q(subject_id=fact.subject_id, relation=fact.relation, value_key=fact.value_key)
        candidates = (
            Fact.objects.filter(
                same, same_audience_as(fact), org_id=fact.org_id, pk__lt=fact.pk, source=Fact.Source.EXTRACTED
            )
            .filter(current(), fact_in_use())
            .exclude(document_id=fact.document_id)
        )
        document = fact.document
        if document is not None and document.external_id:  # another version of the same document says it again
            candidates = candidates.exclude(
                document__source_kind=document.source_kind, document__external_id=document.external_id
            )
        # Only the columns ``is_twin`` reads: fifty whole rows (vectors and all) per fact were most of the cost.
        candidates = candidates.only(*COMPARED).prefetch_related("values").order_by("pk")[:CANDIDATES]
        first = next((c for c in candidates if is_twin(c, fact)), None)
        if first is not None:
            Fact.objects.filter(pk=fact.pk).update(same_as=first)
            fact.same_as = first
            joined += 1
    return joined


def release_twins(fact_ids: list[int]) -> None:
    """The facts stop being shown (flagged, retired): their twins stand on their own again."""
    Fact.objects.filter(same_as_id__in=fact_ids).update(same_as=None)


def sources_of_twins(*, actor: Actor, fact_ids: list[int]) -> dict[int, list[tuple[int, str]]]:
    """For each of ``fact_ids``, the other documents the actor may read that say it: (id, title)."""
    if not fact_ids:
        return {}
    rows = (
        Fact.objects.filter(readable(actor) & fact_not_flagged(), same_as_id__in=fact_ids, document__isnull=False)
        .order_by("pk")
        .values_list("same_as_id", "document_id", "document__title")
    )
    found: dict[int, list[tuple[int, str]]] = {}
    for first, document_id, title in rows[: len(fact_ids) * 10]:
        if all(document_id != known for known, _ in found.get(first, [])):
            found.setdefault(first, []).append((document_id, title))
    return found
