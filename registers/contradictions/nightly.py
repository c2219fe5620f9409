"""The nightly contradiction scan: pairs of current facts that cannot both hold.

Two current facts contradict when they state the same single-valued thing (for a role one person
holds, the same role of the same object; else the same topic; else the same subject and relation
or value key: ``memory.graph.supersession.THING_SQL``, the SQL form of ``about_the_same_thing``)
and the time rules, read with the older one first, say so (``supersession.decide``): their
validity overlaps, they say something different, they come from different sources (the same
source correcting itself supersedes instead), and the newer one neither starts before the older
one nor says the world changed ("is now"), which would have closed or replaced one. The scan
is incremental: only groups with a fact added since the last run are read, in one statement, and
a pair is never raised twice, answered or not.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from datetime import date
from itertools import combinations

from django.db import IntegrityError, connection, transaction
from django.db.models import Q
from django.utils import timezone

from brain.models import Organisation
from memory.access import audience_key, current_sql, fact_in_use_sql
from memory.extraction.vocabulary import HELD_BY_ONE
from memory.graph.entity_views import names_given_by
from memory.graph.supersession import STATES_A_THING_SQL, THING_SQL, Action, Claim, decide
from memory.models import Fact
from registers.contradictions.services import fold_twins
from registers.contradictions.twins import twin_key
from registers.models import Contradiction, Scan

# Value keys and relations where acting on the wrong one costs money or a customer today.
HIGH = ("price", "cost", "fee", "rate", "discount", "budget", "salary", "contract", "renewal", "sla", "term", "deal")
MEDIUM = ("owner", "head", "lead", "manager", "account", "office", "date", "deadline")

READ_BATCH = 5000
MORE = 4  # statements beyond a and b on one entry: c to f
# What the rules and an entry need of a fact: never its vectors or its document's text.
FACT_FIELDS = (
    "statement", "subject_id", "object_id", "relation", "value_key", "valid_from", "valid_to", "source", "topic",
    "recorded_at", "created_by_id", "document_id", "document__title", "document__external_id",
    "document__source_kind", "document__occurred_at", "document__recorded_at", "created_by__username",
    "created_by__first_name", "created_by__last_name", "category_id", "scope", "owner_id",
)  # fmt: skip

# Current facts in use, as every read takes them (memory.access): one flagged for review, or a twin
# shown through the first document that said it, is in no contradiction.
_GROUPS = (
    """
WITH current AS (
    SELECT id, document_id, subject_id, object_id, relation, value_key, {thing} AS thing
    FROM memory_fact f
    WHERE f.org_id = %(org)s AND {current} AND {in_use} AND {states_a_thing}
), touched AS (
    SELECT thing FROM current GROUP BY thing HAVING count(*) > 1 AND {touched}
)
SELECT current.id, current.thing FROM current JOIN touched USING (thing)
""".replace("{thing}", THING_SQL)
    .replace("{current}", current_sql("f"))
    .replace("{in_use}", fact_in_use_sql("f"))
    .replace("{states_a_thing}", STATES_A_THING_SQL)
)


# Which groups a scan reads: those with a fact added since the last scan, or with one of a document's.
_SINCE = "max(id) > %(after)s"
_OF_DOCUMENT = "bool_or(document_id = %(document)s)"
Pick = Callable[[Fact, Fact], bool]


def scan_contradictions(org: Organisation, progress: Callable[[int], None] | None = None) -> int:
    """Raise every new pair; returns how many were raised."""
    scan, _ = Scan.objects.get_or_create(org=org, register="contradictions")
    raised = _raise(
        org,
        _GROUPS.format(touched=_SINCE),
        {"after": scan.last_id},
        lambda a, b: max(a.pk, b.pk) > scan.last_id,
        progress,
    )
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


def _raise(
    org: Organisation, sql: str, params: dict[str, int], wanted: Pick, progress: Callable[[int], None] | None
) -> int:
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
    for thing, ids in groups.items():
        pairs = {
            f"{a}:{b}": (facts[a], facts[b])
            for a, b in combinations(sorted(ids), 2)
            if wanted(facts[a], facts[b]) and _contradict(facts[a], facts[b])
        }
        known = set(Contradiction.objects.filter(org=org, pair__in=list(pairs)).values_list("pair", flat=True))
        fresh = {key: pair for key, pair in pairs.items() if key not in known}
        if fresh:
            raised += _raise_grouped(org, thing, ids, fresh)
        if progress:
            progress(len(ids))
    return raised


def _raise_grouped(org: Organisation, thing: str, group: list[int], pairs: dict[str, tuple[Fact, Fact]]) -> int:
    """One thing stated three ways is one entry naming all three, not three pairs: a reader
    answers once, choosing the one that stands. A statement joins an open entry about the same
    thing, when it has the entry's audience; otherwise it is raised as its own pair. Returns how
    many entries were raised."""
    entry = (
        Contradiction.objects.filter(org=org, state=Contradiction.State.OPEN)
        .filter(Q(fact_a_id__in=group) | Q(fact_b_id__in=group))
        .select_related("fact_a")
        .order_by("pk")
        .first()
    )
    names = names_given_by({(a.subject_id, a.document_id) for a, _ in pairs.values() if a.subject_id and a.document_id})
    raised, rest = 0, dict(pairs)
    if entry is None:
        key, (a, b) = next(iter(rest.items()))
        entry = _entry(org, a, b, names, thing)
        try:
            with transaction.atomic():  # a savepoint: a pair raised meanwhile elsewhere is left as it is
                entry.save()
        except IntegrityError:
            return 0
        raised = 1
    on_it = {entry.fact_a_id, entry.fact_b_id, *(side["fact"] for side in entry.more)}
    for _key, (a, b) in rest.items():
        joining = [f for f in (a, b) if f.pk not in on_it]
        if not joining:
            continue
        if (
            entry.fact_a is not None
            and all(_audience(f) == _audience(entry.fact_a) for f in joining)
            and (len(entry.more) + len(joining) <= MORE)
        ):
            entry.more += [_side(f) for f in joining]
            on_it.update(f.pk for f in joining)
        else:
            Contradiction.objects.bulk_create([_entry(org, a, b, names, thing)], ignore_conflicts=True)
            raised += 1
    if entry.more:
        claims = [entry.claim_a, entry.claim_b, *(side["claim"] for side in entry.more)]
        entry.question = ("Which is right: " + ", ".join(repr(c) for c in claims[:-1]) + f" or {claims[-1]!r}?")[:500]
        entry.save(update_fields=["more", "question"])
    fold_twins(org, {twin_key(thing, a, b) for a, b in pairs.values()})
    return raised


def _audience(fact: Fact) -> tuple[object, ...]:
    return audience_key(fact.scope, fact.owner_id, fact.category_id)


def _side(fact: Fact) -> dict[str, object]:
    return {"fact": fact.pk, "claim": fact.statement[:1000], "source": _source(fact), "date": _day(fact).isoformat()}


def _contradict(a: Fact, b: Fact) -> bool:
    """Whether the two current facts contradict by the time rules (``supersession.decide``, the
    older one first): what would have closed or replaced one of them is no contradiction."""
    older, newer = sorted((a, b), key=lambda f: (f.recorded_at, f.pk))
    return decide(Claim.of(older), Claim.of(newer)).action is Action.CONTRADICT


def _entry(org: Organisation, a: Fact, b: Fact, names: dict[tuple[int, int], str], group: str) -> Contradiction:
    thing = (a.value_key or a.relation or a.topic.partition("|")[2]).replace("_", " ")
    # Named as a's own source names it: the entity's record may hold a name its readers cannot see.
    subject = names.get((a.subject_id, a.document_id), "") if a.subject_id and a.document_id else ""
    subject = subject or a.topic.partition("|")[0]
    about = " ".join(f"{subject} {thing}".split()[:6])[:80]
    return Contradiction(
        org=org,
        about=about,
        subject=subject[:200],
        question=f"Which is right: {a.statement!r} or {b.statement!r}?"[:500],
        claim_a=a.statement[:1000],
        source_a=_source(a),
        date_a=_day(a),
        fact_a=a,
        claim_b=b.statement[:1000],
        source_b=_source(b),
        date_b=_day(b),
        fact_b=b,
        severity=_severity(thing),
        pair=f"{a.pk}:{b.pk}",
        twin_key=twin_key(group, a, b),
    )


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
