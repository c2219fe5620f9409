"""Deriving again what stored documents say, with the current rules (``manage.py reextract``).

One document at a time, through the same code as ingestion and the nightly scans: its facts,
entities and values (``memory.graph.document_facts.extract_document``), its promises
(``registers.commitments.nightly.reread_commitments``) and the contradictions its facts are in
(``registers.contradictions.nightly.rescan_document``). What people decided by hand stays:

- a fact flagged or retired on review, or named by an answered contradiction, is never deleted
  (retired instead, if the rules no longer find it), so the answer keeps both its sides;
- a commitment a person settled, noted or edited stays as they left it, found again or not
  (one nobody touched takes the owner, dates and quote read now);
- a contradiction a person raised or answered stays; an open one the scan raised goes only
  when the current rules no longer see a conflict;
- merges and an admin's entity types hold: extraction links names to the kept entity and never
  retypes one an admin typed.

Running it twice changes nothing the second time: facts and promises found again keep their
rows, and a pair already raised is never raised again.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, fields

from django.db import transaction
from django.db.models import Q

from brain.infra.ids import format_id
from brain.models import AuditRecord, Organisation
from memory.access import current
from memory.documents.source import reread_blocks
from memory.graph.document_facts import extract_document
from memory.graph.fixes import entity_references
from memory.models import Document, Entity, EntityMerge, Fact, Mention
from registers.commitments.nightly import reread_commitments
from registers.common import switched_on
from registers.contradictions.nightly import rescan_document
from registers.models import Contradiction


@dataclass
class Changes:
    """What deriving one document (or several) again changed."""

    facts_added: int = 0
    facts_removed: int = 0
    facts_retired: int = 0  # kept for a person's decision, no longer current
    facts_kept: int = 0
    entities_added: int = 0
    entities_removed: int = 0  # no longer named anywhere, and nobody decided anything about them
    mentions_added: int = 0
    mentions_removed: int = 0
    commitments_added: int = 0
    commitments_updated: int = 0  # found again with another owner, date or quote
    commitments_removed: int = 0
    commitments_kept: int = 0
    contradictions_added: int = 0
    contradictions_removed: int = 0
    documents: int = field(default=0, compare=False)

    def add(self, other: Changes) -> None:
        for f in fields(self):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))

    @property
    def changed(self) -> bool:
        kept = ("facts_kept", "commitments_kept", "documents")
        return any(getattr(self, f.name) for f in fields(self) if f.name not in kept)

    def line(self) -> str:
        return (
            f"facts +{self.facts_added} -{self.facts_removed} retired {self.facts_retired} kept {self.facts_kept}; "
            f"entities +{self.entities_added} -{self.entities_removed}, "
            f"mentions +{self.mentions_added} -{self.mentions_removed}; "
            f"commitments +{self.commitments_added} -{self.commitments_removed} updated {self.commitments_updated} "
            f"kept {self.commitments_kept}; "
            f"contradictions +{self.contradictions_added} -{self.contradictions_removed}"
        )


class _DryRun(Exception):
    """Raised to roll a dry run's work back."""


def documents_to_rederive(org: Organisation, *, after: int = 0) -> Iterator[int]:
    """Ids of the organisation's current, ready documents that extraction reads, in order."""
    rows = Document.objects.filter(current(), org=org, status=Document.Status.READY, pk__gt=after)
    yield from rows.exclude(source_kind="remember").order_by("pk").values_list("pk", flat=True).iterator()


def rederive_document(org: Organisation, document_id: int, *, dry_run: bool = False) -> Changes:
    """Derive one document's facts, entities and register entries again; with ``dry_run`` the
    work is done in a transaction that is rolled back, so it reports what a run would change."""
    changes = Changes(documents=1)
    with _rolled_back() if dry_run else _as_is():
        _rederive(org, document_id, changes)
    return changes


@contextmanager
def _rolled_back() -> Iterator[None]:
    try:
        with transaction.atomic():
            yield
            raise _DryRun
    except _DryRun:
        pass


@contextmanager
def _as_is() -> Iterator[None]:
    yield


def _rederive(org: Organisation, document_id: int, changes: Changes) -> None:
    document = Document.objects.get(pk=document_id, org=org)
    facts = Fact.objects.filter(document=document, source=Fact.Source.EXTRACTED)
    before = dict(facts.values_list("pk", "superseded_at"))
    mentions = Mention.objects.filter(document=document)
    named_before = set(mentions.values_list("entity_id", "surface"))
    newest_entity = Entity.objects.filter(org=org).order_by("-pk").values_list("pk", flat=True).first() or 0
    contradictions = Contradiction.objects.filter(org=org).filter(
        Q(fact_a__document=document) | Q(fact_b__document=document)
    )
    raised_before = set(contradictions.values_list("pk", flat=True))

    reread_blocks(document)
    keep, confirmed = _answered_facts(org, document), _confirmed_facts(org, document)
    extract_document(document_id=document.pk, keep=keep, confirmed=confirmed)

    after = dict(facts.values_list("pk", "superseded_at"))
    changes.facts_added = len(after.keys() - before.keys())
    changes.facts_removed = len(before.keys() - after.keys())
    retired = {pk for pk in before.keys() & after.keys() if before[pk] is None and after[pk] is not None}
    changes.facts_retired = len(retired)
    changes.facts_kept = len(before.keys() & after.keys()) - len(retired)
    named_after = set(mentions.values_list("entity_id", "surface"))
    changes.mentions_added = len(named_after - named_before)
    changes.mentions_removed = len(named_before - named_after)
    changes.entities_added = len({e for e, _ in named_after if e > newest_entity})
    changes.entities_removed = _forget_unnamed({e for e, _ in named_before} - {e for e, _ in named_after})
    on = switched_on(org)
    if "commitments" in on:
        read = reread_commitments(org, document)
        changes.commitments_added, changes.commitments_removed = read["added"], read["removed"]
        changes.commitments_kept, changes.commitments_updated = read["kept"], read["updated"]
    if "contradictions" in on:
        rescan_document(org, document.pk)
    raised_after = set(contradictions.values_list("pk", flat=True))
    changes.contradictions_added = len(raised_after - raised_before)
    # Those whose fact was deleted went with it, as well as those taken back by the scan.
    changes.contradictions_removed = len(
        raised_before - set(Contradiction.objects.filter(pk__in=raised_before).values_list("pk", flat=True))
    )


def _confirmed_facts(org: Organisation, document: Document) -> set[int]:
    """The document's facts a review found right (flagged, then restored): kept, and current,
    whatever the rules read now."""
    facts = Fact.objects.filter(document=document, source=Fact.Source.EXTRACTED).values_list("pk", flat=True)
    ids = [format_id("mem", pk) for pk in facts]
    restored = AuditRecord.objects.filter(org=org, action="memory.restored", target__in=ids)
    return {int(target.removeprefix("mem_")) for target in restored.values_list("target", flat=True)}


def _forget_unnamed(entity_ids: set[int]) -> int:
    """Delete the entities of ``entity_ids`` nothing refers to any more (no mention, fact, value or
    register entry names them) and nobody decided anything about: an admin's type, a merge either
    way. These are the names an older reading made ("Contributes") that the current one does not."""
    if not entity_ids:
        return 0
    free = Entity.objects.filter(pk__in=entity_ids, type_fixed=False, merged_into__isnull=True).exclude(
        Q(pk__in=Entity.objects.filter(merged_into__isnull=False).values("merged_into"))
        | Q(pk__in=EntityMerge.objects.values("kept"))
        | Q(pk__in=EntityMerge.objects.values("merged"))
    )
    for model, name in entity_references():
        free = free.exclude(pk__in=model._default_manager.filter(**{f"{name}__in": entity_ids}).values(name))
    unnamed = list(free.values_list("pk", flat=True))
    Entity.objects.filter(pk__in=unnamed).delete()
    return len(unnamed)


def _answered_facts(org: Organisation, document: Document) -> set[int]:
    """The document's facts an answered contradiction (or one a person raised) names."""
    decided = Contradiction.objects.filter(org=org).filter(
        ~Q(state=Contradiction.State.OPEN) | Q(raised_by__isnull=False)
    )
    ids = set()
    for a, b in decided.filter(Q(fact_a__document=document) | Q(fact_b__document=document)).values_list(
        "fact_a_id", "fact_b_id"
    ):
        ids |= {a, b} - {None}
    return ids
