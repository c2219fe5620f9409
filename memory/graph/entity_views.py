"""Reads of entities as one caller may see them.

An entity's name, aliases, type and summary are taken only from the mentions in documents the
caller may read, so nothing shown of it depends on a source they cannot see: a full name known
only from a board paper stays hidden from a member who has only read "Ms Quorvane". That holds
after an admin merges the two entities too: the board paper's mention moves to the kept entity,
and still shows only to the paper's readers. The one thing not taken from sources is a type an
admin chose (``memory.graph.fixes``): it is shown instead of the sources' type to everyone.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from django.db.models import Exists, OuterRef, Q, QuerySet
from django.db.models.functions import Lower

from brain.core.actors import Actor
from brain.infra.ids import format_id
from memory.access import readable
from memory.graph.entities import display_name, live_mentions, shown_type
from memory.models import Document, Entity, Mention

MAX_NGRAM = 5


@dataclass(frozen=True)
class EntityView:
    pk: int
    name: str
    type: str = "other"
    aliases: list[str] = field(default_factory=list)
    summary: str = ""

    @property
    def public_id(self) -> str:
        return format_id("ent", self.pk)


def visible_mentions(*, actor: Actor) -> QuerySet[Mention]:
    return live_mentions().filter(document__in=Document.objects.filter(readable(actor)))


def entity_views(*, actor: Actor, entity_ids: list[int] | set[int]) -> dict[int, EntityView]:
    """Each entity as the caller's readable mentions show it (oldest mention first)."""
    ids = {i for i in entity_ids if i}
    if not ids:
        return {}
    rows = (
        visible_mentions(actor=actor)
        .filter(entity_id__in=ids)
        .order_by("document__recorded_at", "pk")
        .values_list("entity_id", "surface", "type", "summary", "entity__type", "entity__type_fixed")
    )
    forms: dict[int, list[str]] = {}
    types: dict[int, Counter[str]] = {}
    summaries: dict[int, str] = {}
    fixed: dict[int, str] = {}
    for entity_id, surface, type_, summary, chosen, is_fixed in rows:
        if is_fixed:
            fixed[entity_id] = chosen
        seen = forms.setdefault(entity_id, [])
        if surface.casefold() not in (f.casefold() for f in seen):
            seen.append(surface)
        if type_ and type_ != "other":
            types.setdefault(entity_id, Counter())[type_] += 1
        if summary:
            summaries[entity_id] = summary  # the newest source's word
    views = {}
    for entity_id, names in forms.items():
        name = display_name(names)
        kinds = types.get(entity_id)
        views[entity_id] = EntityView(
            pk=entity_id,
            name=name,
            type=shown_type(kinds, fixed.get(entity_id)),
            aliases=[n for n in names if n != name],
            summary=summaries.get(entity_id, ""),
        )
    return views


def entities_named(*, actor: Actor, text: str, limit: int = 20) -> list[int]:
    """Entities a readable mention names word for word in ``text`` (up to five-word names)."""
    words = [w.strip(".,;:!?()[]\"'") for w in text.split()]
    words = [re.sub(r"['’]s$", "", w) for w in words if w]
    grams = {" ".join(words[i : i + n]).casefold() for n in range(1, MAX_NGRAM + 1) for i in range(len(words) - n + 1)}
    grams = {g for g in grams if len(g) > 2}
    if not grams:
        return []
    found = (
        visible_mentions(actor=actor)
        .annotate(lowered=Lower("surface"))
        .filter(lowered__in=grams)
        .values_list("entity_id", "surface")
        .distinct()[: limit * 4]
    )
    longest: dict[int, int] = {}
    for entity_id, surface in found:
        longest[entity_id] = max(longest.get(entity_id, 0), len(surface))
    return sorted(longest, key=lambda e: -longest[e])[:limit]


def entities_of_type(*, actor: Actor, type: str) -> QuerySet[Entity]:
    """Entities that a readable source calls ``type``, or an admin typed so (and a readable source names)."""
    mentioned = visible_mentions(actor=actor).filter(entity=OuterRef("pk"))
    by_sources = Q(type_fixed=False) & Exists(mentioned.filter(type=type))
    by_admin = Q(type_fixed=True, type=type) & Exists(mentioned)
    return Entity.objects.filter(org=actor.org).filter(by_sources | by_admin)


def names_given_by(pairs: set[tuple[int, int]]) -> dict[tuple[int, int], str]:
    """For (entity id, document id) pairs: the name that document itself gives the entity (the
    fullest of its names there). For text written from one document, such as a register entry's
    subject: the entity's own record may carry a name from a source its readers cannot see."""
    if not pairs:
        return {}
    documents = {document_id for _, document_id in pairs}
    entities = {entity_id for entity_id, _ in pairs}
    rows = Mention.objects.filter(document_id__in=documents, entity_id__in=entities).order_by("pk")
    forms: dict[tuple[int, int], list[str]] = {}
    for entity_id, document_id, surface in rows.values_list("entity_id", "document_id", "surface"):
        if (entity_id, document_id) in pairs:
            forms.setdefault((entity_id, document_id), []).append(surface)
    return {key: display_name(names) for key, names in forms.items()}
