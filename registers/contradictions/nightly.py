"""The nightly contradiction scan: pairs of current facts that cannot both hold.

Two current facts contradict when they state the same single-valued thing (the same subject
and relation or value key; for a role one person holds, the same role of the same object),
their validity overlaps, they say something different, and they come from different sources
(``memory.graph.supersession``: the same source correcting itself supersedes instead). The scan
is incremental: only groups with a fact added since the last run are read, in one statement, and
a pair is never raised twice, answered or not.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from datetime import date
from itertools import combinations

from django.db import connection
from django.db.models import Q
from django.utils import timezone

from brain.models import Organisation
from memory.graph.entity_views import names_given_by
from memory.graph.supersession import Claim, overlaps, same_claim
from memory.graph.vocabulary import HELD_BY_ONE
from memory.models import Fact
from registers.models import Contradiction, Scan

# Value keys and relations where acting on the wrong one costs money or a customer today.
HIGH = ("price", "cost", "fee", "rate", "discount", "budget", "salary", "contract", "renewal", "sla", "term", "deal")
MEDIUM = ("owner", "head", "lead", "manager", "account", "office", "date", "deadline")

READ_BATCH = 5000
# What the rules and an entry need of a fact: never its vectors or its document's text.
FACT_FIELDS = (
    "statement", "subject_id", "object_id", "relation", "value_key", "valid_from", "valid_to", "source",
    "recorded_at", "created_by_id", "document_id", "document__title", "document__external_id",
    "document__source_kind", "document__occurred_at", "document__recorded_at", "created_by__username",
    "created_by__first_name", "created_by__last_name",
)  # fmt: skip

_GROUPS = """
WITH current AS (
    SELECT id, document_id, subject_id, object_id, relation, value_key,
           CASE WHEN relation = ANY(%(roles)s) AND object_id IS NOT NULL
                THEN 'role:' || relation || ':' || object_id
                ELSE 'thing:' || subject_id || ':' || relation || ':' || value_key END AS thing
    FROM memory_fact
    WHERE org_id = %(org)s AND superseded_at IS NULL AND single_valued AND subject_id IS NOT NULL
      AND (relation <> '' OR value_key <> '')
), touched AS (
    SELECT thing FROM current GROUP BY thing HAVING count(*) > 1 AND {touched}
)
SELECT current.id, current.thing FROM current JOIN touched USING (thing)
"""


# Which groups a scan reads: those with a fact added since the last scan, or with one of a document's.
_SINCE = "max(id) > %(after)s"
_OF_DOCUMENT = "bool_or(document_id = %(document)s)"
Pick = Callable[[Fact, Fact], bool]


def scan_contradictions(org: Organisation, progress: Callable[[int], None] | None = None) -> int:
    """Raise every new pair; returns how many were raised."""
    scan, _ = Scan.objects.get_or_create(org=org, register="contradictions")
    raised = _raise(org, _GROUPS.format(touched=_SINCE), {"after": scan.last_id},
                    lambda a, b: max(a.pk, b.pk) > scan.last_id, progress)  # fmt: skip
    newest = Fact.objects.filter(org=org).order_by("-pk").values_list("pk", flat=True).first()
    scan.last_id, scan.finished_at = max(scan.last_id, newest or 0), timezone.now()
    scan.save(update_fields=["last_id", "finished_at"])
    return raised


def rescan_document(org: Organisation, document_id: int) -> dict[str, int]:
    """Check again, with the current rules, every pair one of a document's current facts is in
    (``manage.py reextract``): raise the new ones, and take back the open ones the scan raised
    that no longer hold. One a person raised or answered stays as it is."""
    mine: Pick = lambda a, b: document_id in (a.document_id, b.document_id)  # noqa: E731
    added = _raise(org, _GROUPS.format(touched=_OF_DOCUMENT), {"document": document_id}, mine, None)
    stale = []
    open_ones = Contradiction.objects.filter(org=org, state=Contradiction.State.OPEN, raised_by__isnull=True)
    of_document = Q(fact_a__document_id=document_id) | Q(fact_b__document_id=document_id)
    for entry in open_ones.exclude(pair="").filter(of_document).select_related("fact_a", "fact_b"):
        a, b = entry.fact_a, entry.fact_b
        if a and b and a.superseded_at is None and b.superseded_at is None and not _contradict(a, b):
            stale.append(entry.pk)
    Contradiction.objects.filter(pk__in=stale).delete()
    return {"added": added, "removed": len(stale)}


def _raise(org: Organisation, sql: str, params: dict[str, int], wanted: Pick,
           progress: Callable[[int], None] | None) -> int:  # fmt: skip
    """Raise the contradicting pairs ``wanted`` of the groups ``sql`` reads; returns how many."""
    with connection.cursor() as cursor:
        cursor.execute(sql, {"roles": sorted(HELD_BY_ONE), "org": org.pk, **params})
        rows = cursor.fetchall()
    groups: dict[str, list[int]] = defaultdict(list)
    for fact_id, thing in rows:
        groups[thing].append(fact_id)
    facts: dict[int, Fact] = {}
    ids = [fid for fid, _ in rows]
    for start in range(0, len(ids), READ_BATCH):
        facts.update(
            Fact.objects.filter(pk__in=ids[start : start + READ_BATCH])
            .select_related("document", "created_by")
            .only(*FACT_FIELDS)
            .prefetch_related("values")
            .in_bulk()
        )
    raised = 0
    for ids in groups.values():
        pairs = {
            f"{a}:{b}": (facts[a], facts[b])
            for a, b in combinations(sorted(ids), 2)
            if wanted(facts[a], facts[b]) and _contradict(facts[a], facts[b])
        }
        known = set(Contradiction.objects.filter(org=org, pair__in=list(pairs)).values_list("pair", flat=True))
        names = names_given_by(
            {(a.subject_id, a.document_id) for a, _ in pairs.values() if a.subject_id and a.document_id}
        )
        fresh = [_entry(org, a, b, names) for key, (a, b) in pairs.items() if key not in known]
        # A pair raised meanwhile by a person or another run is left as it is (the unique pair).
        Contradiction.objects.bulk_create(fresh, ignore_conflicts=True)
        raised += len(fresh)
        if progress:
            progress(len(ids))
    return raised


def _contradict(a: Fact, b: Fact) -> bool:
    first, second = Claim.of(a), Claim.of(b)
    return overlaps(first, second) and not same_claim(first, second) and first.source != second.source


def _entry(org: Organisation, a: Fact, b: Fact, names: dict[tuple[int, int], str]) -> Contradiction:
    thing = (a.value_key or a.relation).replace("_", " ")
    # Named as a's own source names it: the entity's record may hold a name its readers cannot see.
    subject = names.get((a.subject_id, a.document_id), "") if a.subject_id and a.document_id else ""
    about = " ".join(f"{subject} {thing}".split()[:6])[:80]
    return Contradiction(
        org=org, about=about, subject=subject[:200],
        question=f"Which is right: {a.statement!r} or {b.statement!r}?"[:500],
        claim_a=a.statement[:1000], source_a=_source(a), date_a=_day(a), fact_a=a,
        claim_b=b.statement[:1000], source_b=_source(b), date_b=_day(b), fact_b=b,
        severity=_severity(thing), pair=f"{a.pk}:{b.pk}",
    )  # fmt: skip


def _source(fact: Fact) -> str:
    if fact.source == Fact.Source.REMEMBERED and fact.created_by is not None:
        return f"remembered by {fact.created_by.get_full_name() or fact.created_by.get_username()}"[:300]
    if fact.document is not None:
        return f"{fact.document.title} ({fact.document.public_id})"[:300]
    return "memory"


def _day(fact: Fact) -> date:
    if fact.valid_from:
        return fact.valid_from
    document = fact.document
    moment = (document.occurred_at or document.recorded_at) if document is not None else fact.recorded_at
    return moment.date()


def _severity(thing: str) -> str:
    words = thing.lower()
    if any(word in words for word in HIGH):
        return Contradiction.Severity.HIGH
    if any(word in words for word in MEDIUM):
        return Contradiction.Severity.MEDIUM
    return Contradiction.Severity.LOW
