"""Writes of entities: linking a name in a document to the organisation's entity for it.

An entity is linked only through what every reader of the document can see. Each name is a
``Mention`` of its document, carrying the type and summary that document gives it; readers are
shown an entity through the mentions they may see (``memory.graph.entity_views``). Linking through a
hidden name would betray it: if a board paper says "Helena Quorvane, known as HQ", a note open to
everyone that says "HQ" must not become the same entity as one that says "Helena Quorvane".
So a name that matches nothing the document's readers can see starts an entity of its own, even
when an entity of that name exists for another audience.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable

from django.db import connection
from django.db.models import Q, QuerySet
from django.db.models.functions import Lower

from memory.access import seen_by_every_reader_of
from memory.extraction import KnownEntity, link_name
from memory.extraction.vocabulary import ENTITY_TYPES, HONORIFICS
from memory.models import Document, Entity, Mention, Scope

MAX_KNOWN_MENTIONS = 20000


def clean_name(name: str) -> str:
    return " ".join(name.split())[:200]


def live_mentions() -> QuerySet[Mention]:
    """Mentions of entities in use. A merged entity is retired (``memory.graph.fixes``): the names
    its sources gave moved to the entity it was merged into, and what stayed behind (a name the
    kept entity already had in the same document) names it to nobody."""
    return Mention.objects.filter(entity__merged_into__isnull=True)


def context_mentions(document: Document) -> QuerySet[Mention]:
    """The mentions in documents that every reader of ``document`` may read (and in itself)."""
    context = Document.objects.filter(seen_by_every_reader_of(document))
    return live_mentions().filter(Q(document__in=context) | Q(document_id=document.pk))


def known_for(mentions: QuerySet[Mention], entity_ids: set[int] | None = None) -> list[KnownEntity]:
    """Known entities as those mentions show them: their surfaces and their type (an admin's; else the
    entity's own when a source gives it, set by the strongest evidence so far; else the most given)."""
    rows = mentions.filter(entity_id__in=entity_ids) if entity_ids is not None else mentions
    surfaces: dict[int, list[str]] = defaultdict(list)
    types: dict[int, Counter[str]] = defaultdict(Counter)
    fixed: dict[int, str] = {}
    settled: dict[int, str] = {}
    columns = ("entity_id", "surface", "type", "entity__type", "entity__type_fixed")
    for entity_id, surface, type_, chosen, is_fixed in rows.values_list(*columns).distinct()[:MAX_KNOWN_MENTIONS]:
        if surface not in surfaces[entity_id]:
            surfaces[entity_id].append(surface)
        if type_ and type_ != "other":
            types[entity_id][type_] += 1
        if is_fixed:
            fixed[entity_id] = chosen
        elif chosen == type_:  # the entity's own type, kept up to date by the strongest evidence so far
            settled[entity_id] = chosen
    known = []
    # In one order whatever order the rows came in (they have none): the name chosen among equally
    # full forms, and which entities a capped list keeps, never change between two readings.
    for entity_id, forms in sorted(surfaces.items()):
        forms.sort()
        name = display_name(forms)
        kind = fixed.get(entity_id) or settled.get(entity_id) or top_type(types[entity_id])
        aliases = tuple(f for f in forms if f != name)
        known.append(KnownEntity(name=name, type=kind, aliases=aliases, key=entity_id, fixed=entity_id in fixed))
    return known


def top_type(tally: Counter[str] | None) -> str:
    """The type most sources give; ties go to the first in alphabetical order, so the answer
    never depends on the order rows happen to come back in."""
    if not tally:
        return "other"
    return min(tally.items(), key=lambda kv: (-kv[1], kv[0]))[0]


def shown_type(tally: Counter[str] | None, fixed: str | None) -> str:
    """The type a reader is shown: the one an admin chose, else the one most sources give."""
    return fixed if fixed else top_type(tally)


def display_name(forms: list[str]) -> str:
    """The fullest of the names: a full name rather than a title and surname, more words first."""

    def fullness(form: str) -> tuple[bool, int, int]:
        words = form.split()
        titled = bool(words) and words[0].strip(".").casefold() in HONORIFICS
        return (not titled, len(words), len(form))

    return max(forms, key=fullness) if forms else ""


def lock_names(*, org_id: int, names: Iterable[str]) -> None:
    """Hold, until the transaction ends, the lock of each name, taken in one order everywhere.

    A transaction that links several names takes all their locks first: two documents naming the
    same people in a different order would otherwise each hold one lock and wait for the other's
    (a deadlock, and one of them losing its facts). The order is that of the lock numbers
    themselves, so two names that happen to share a number cannot reverse it. Taking a lock this
    transaction already holds returns at once.
    """
    keys = sorted({f"entity:{org_id}:{clean_name(n).casefold()}" for n in names if clean_name(n)})
    if not keys:
        return
    with connection.cursor() as cursor:
        cursor.execute("SELECT DISTINCT hashtext(k) AS n FROM unnest(%s::text[]) AS k ORDER BY n", [keys])
        for (number,) in cursor.fetchall():
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [number])


# The kinds a model guesses most (its PERSON, ORG and PRODUCT labels); a surer kind may replace them.
GUESSED = ("person", "organisation", "product")


def get_or_create_entity(
    *,
    document: Document,
    name: str,
    type: str = "other",
    aliases: list[str] | None = None,
    confident: bool = False,
    locked: bool = False,
) -> Entity:
    """The entity ``name`` (or one of ``aliases``) refers to in ``document``, created when new.

    Exact names first, then the linker's rules (suffixes, accents, "Ms Shah" for the one known
    Shah, fuzzy), all over the names the document's readers can see. Runs inside the caller's
    transaction; an advisory lock per name keeps two workers from creating the same entity twice.
    ``confident``: the type comes from role words or a person, not a model's guess, so it replaces
    a guessed type (never one an admin chose). ``locked``: the caller's transaction already holds
    the name's lock (``lock_names``), as a writer of many names takes them all first.
    """
    name = clean_name(name)
    wanted = [a for a in dict.fromkeys([name, *(clean_name(a) for a in aliases or [])]) if a]
    if not locked:
        lock_names(org_id=document.org_id, names=[name])
    mentions = context_mentions(document).filter(entity__org_id=document.org_id)
    exact = (
        mentions.annotate(lowered=Lower("surface"))
        .filter(lowered__in=[w.casefold() for w in wanted])
        .order_by("entity_id")
        .values_list("entity_id", flat=True)
        .first()
    )
    entity_id = exact or _linked(mentions, name)
    kind = type if type in ENTITY_TYPES else "other"
    if entity_id is not None:
        entity = Entity.objects.get(pk=entity_id)
        while entity.merged_into_id is not None:  # merged since the mentions were read
            entity = Entity.objects.get(pk=entity.merged_into_id)
        # A sure kind replaces only a model's usual guess (a person, an organisation), from a source
        # everyone may read: the entity's own type is what every reader sees, and a kind some source
        # gave surely ("our customer", a type someone remembered) stays for its readers.
        everyone = document.scope == Scope.SHARED and not document.category.restricted
        # A person is surer still (one who speaks, sends or is led by name): the model's place goes too.
        guesses = (*GUESSED, "place") if kind == "person" else GUESSED
        guessed = entity.type == "other" or (confident and everyone and entity.type in guesses and entity.type != kind)
        if guessed and kind != "other" and not entity.type_fixed:
            Entity.objects.filter(pk=entity.pk).update(type=kind)  # the operators' view in the admin
        return entity
    return Entity.objects.create(org_id=document.org_id, name=name, type=kind, aliases=wanted[1:50])


def _linked(mentions: QuerySet[Mention], name: str) -> int | None:
    # Candidates that look alike, or share the last or first word ("Ms Shah", "Priya"), for the linker to judge.
    words = name.split()
    if not words:
        return None
    alike = Q(surface__trigram_similar=name) | Q(surface__iendswith=f" {words[-1]}")
    alike |= Q(surface__istartswith=f"{words[0]} ")
    candidates = set(mentions.filter(alike).values_list("entity_id", flat=True).distinct()[:20])
    if not candidates:
        return None
    match = link_name(name, known_for(mentions, candidates))
    return match.key if match is not None else None


def mention(*, entity: Entity, document: Document, surface: str, type: str = "", summary: str = "") -> None:
    """Record that ``document`` names ``entity`` as ``surface`` (and what it says the entity is)."""
    surface = clean_name(surface)
    if not surface:
        return
    found, created = Mention.objects.get_or_create(
        entity=entity, document=document, surface=surface, defaults={"type": type[:40], "summary": summary}
    )
    changed = {k: v for k, v in (("type", type[:40]), ("summary", summary)) if v and getattr(found, k) != v}
    if not created and changed:
        Mention.objects.filter(pk=found.pk).update(**changed)
