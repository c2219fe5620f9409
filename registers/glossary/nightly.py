"""The glossary's nightly scan: candidate terms from the text every member may read.

Only passages in shared scope and open categories are read, so no entry, count or example
depends on text some member may not see. New passages since the last run are read in windows;
a word already in the glossary gains uses and examples, a dismissed word never comes back, and a
definition found in the text stays a suggestion until a person confirms it.
"""

from __future__ import annotations

from collections.abc import Callable

from django.db import transaction
from django.db.models import QuerySet

from brain.models import Organisation
from memory.access import current, readable_by_all
from memory.documents.turns import spoken_text
from memory.models import Chunk
from registers.common import batches_after_mark
from registers.glossary.candidates import Passage, TermCandidate, find_terms
from registers.models import Term

WINDOW = 5000  # passages read together: terms of art are judged by their frequency in the window
EXAMPLES = 3


def scan_glossary(org: Organisation, progress: Callable[[int], None] | None = None) -> int:
    """Read the new passages; returns how many terms were added or gained uses."""

    def rows(after: int) -> QuerySet[Chunk]:
        return Chunk.objects.filter(current(), readable_by_all(), org=org, pk__gt=after).order_by("pk")

    touched = 0
    for chunks in batches_after_mark(org, "glossary", rows, WINDOW, progress):
        touched += _merge(org, find_terms([Passage(text=spoken_text(c), ref=c.pk) for c in chunks]))
    return touched


@transaction.atomic
def _merge(org: Organisation, found: list[TermCandidate]) -> int:
    keys = {c.term.lower()[:120]: c for c in found}
    existing = {t.key: t for t in Term.objects.select_for_update().filter(org=org, key__in=list(keys))}
    touched = 0
    for key, candidate in keys.items():
        examples = [{"sentence": e.sentence[:300], "passage": e.ref} for e in candidate.examples]
        entry = existing.get(key)
        if entry is None:
            Term.objects.create(
                org=org,
                term=candidate.term[:120],
                key=key,
                kind=candidate.kind[:16],
                uses=candidate.count,
                examples=examples[:EXAMPLES],
                suggestion=candidate.suggestion[:500],
                senses=candidate.senses,
            )
        elif entry.state == Term.State.DISMISSED:
            continue
        else:
            entry.uses += candidate.count
            entry.examples = (entry.examples + examples)[:EXAMPLES]
            entry.suggestion = entry.suggestion or candidate.suggestion[:500]
            entry.senses = max(entry.senses, candidate.senses)
            entry.kind = entry.kind or candidate.kind[:16]
            entry.save(update_fields=["uses", "examples", "suggestion", "senses", "kind", "updated_at"])
        touched += 1
    return touched
