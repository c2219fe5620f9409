"""Admins' fixes to the graph: merging two entities (and undoing it), retyping an entity, and
flagging a broken fact until it is reviewed. Admins of the organisation only; every fix leaves an
audit record in its own transaction.

Merging. The kept entity takes everything that points at the merged one: the facts about it (as
subject or object), the mentions that name it, its values and every other row of any app with a
foreign key to an entity (``entity_references`` finds them from the models, so a new one is
moved without editing this module). Its name and aliases become aliases of the kept entity. The
merged entity is retired, not deleted: nobody is shown it (``memory.graph.entities.live_mentions``),
and the ids of the rows moved are kept in an ``EntityMerge``, so that ``undo_merge`` puts exactly
those rows back. A mention the kept entity already has (the same name in the same document) stays
with the merged entity, named to nobody, and is there again after the undo. Rows changed since
the merge (a document extracted again, a fact pointed elsewhere in the admin) stay as they are.

Merging changes nobody's view of a source: readers are shown an entity through the mentions they
may read, so a full name only a board paper gives stays hidden from a member who reads "Ms
Quorvane", whichever of the two entities is kept. Facts are not superseded by a merge: two that
now disagree about the kept entity are found by the nightly contradiction scan.

Retyping. An admin's type is shown to every reader instead of the type the sources give, and
extraction no longer changes it.

Flagging. A fact flagged as broken, with a reason, is shown to nobody in any read, current or
history (``memory.access.readable_facts``), until an admin reviews it: restored as it was, or
retired as wrong (superseded now, so history still tells what Brain believed until then).
"""

from __future__ import annotations

from django.db import models, transaction
from django.db.models import Exists, ManyToOneRel, OuterRef, QuerySet
from django.utils import timezone

from brain.core.actors import Actor
from brain.core.audit import record_audit
from brain.core.errors import InvalidArgument, NotFound, PermissionDenied
from brain.core.inputs import checked_text
from brain.infra.ids import format_id
from memory.extraction.vocabulary import ENTITY_TYPES
from memory.graph.twins import release_twins
from memory.models import Entity, EntityMerge, Fact, Mention, Scope

FLAG_REASON_LIMIT = 500

Reference = tuple[type[models.Model], str]


def _require_admin(actor: Actor) -> None:
    if not actor.is_admin:
        raise PermissionDenied("Only an admin of the organisation may fix the graph.")


# --- which entities and facts an admin may fix ---------------------------------------------------


def admin_entities() -> QuerySet[Entity]:
    """Entities in use that a shared source names, in every organisation: what the admin lists.
    One only personal memories name belongs to their owner, and is hidden there."""
    shared = Mention.objects.filter(entity=OuterRef("pk"), document__scope=Scope.SHARED)
    return Entity.objects.filter(merged_into__isnull=True).filter(Exists(shared))


def fixable_entities(*, actor: Actor) -> QuerySet[Entity]:
    return admin_entities().filter(org=actor.org)


def _no_entity(entity_id: int) -> NotFound:
    return NotFound(f"No entity ent_{entity_id} in this organisation.")


def _locked_fact(actor: Actor, fact_id: int) -> Fact:
    # Personal memories belong to their owners, in the admin as everywhere.
    fact = Fact.objects.select_for_update().filter(org=actor.org, pk=fact_id, scope=Scope.SHARED).first()
    if fact is None:
        raise NotFound(f"No memory mem_{fact_id} in this organisation.")
    return fact


# --- merging ---------------------------------------------------------------------------------------


def entity_references() -> list[Reference]:
    """Every foreign key to an entity in every app, but a merge's own record and ``merged_into``."""
    found = []
    for relation in Entity._meta.get_fields(include_hidden=True):
        if not isinstance(relation, ManyToOneRel):
            continue
        model = relation.related_model
        if model in (Entity, EntityMerge) or not isinstance(model, type):
            continue
        found.append((model, relation.field.name))
    return sorted(found, key=lambda ref: reference_key(*ref))


def reference_key(model: type[models.Model], field: str) -> str:
    return f"{model._meta.label_lower}.{field}"


def _movable(model: type[models.Model], field: str, merged: Entity, kept: Entity) -> QuerySet[models.Model]:
    rows = model._default_manager.filter(**{field: merged})
    if model is Mention:
        # One name per entity and document: where the kept entity has it already, it stays behind.
        same = Mention.objects.filter(entity=kept, document=OuterRef("document"), surface=OuterRef("surface"))
        rows = rows.exclude(Exists(same))
    return rows


def _locked_pair(actor: Actor, first: int, second: int) -> dict[int, Entity]:
    """Both entities of the organisation, locked in id order: two merges of one entity wait for each
    other, never deadlock."""
    rows = Entity.objects.select_for_update().filter(org=actor.org, pk__in=[first, second]).order_by("pk")
    return {entity.pk: entity for entity in rows}


def _mergeable(actor: Actor, entities: dict[int, Entity], entity_id: int, *, kept: bool) -> Entity:
    entity = entities.get(entity_id)
    if entity is None:
        raise _no_entity(entity_id)
    if entity.merged_into_id is not None:
        into = format_id("ent", entity.merged_into_id)
        if kept:
            raise InvalidArgument(f"{entity.public_id} was merged into {into}: merge into {into} instead.")
        raise InvalidArgument(f"{entity.public_id} was already merged into {into}; undo that merge first.")
    if not fixable_entities(actor=actor).filter(pk=entity_id).exists():
        raise _no_entity(entity_id)
    return entity


def _new_aliases(kept: Entity, merged: Entity) -> list[str]:
    known = {name.casefold() for name in (kept.name, *kept.aliases)}
    added = []
    for name in (merged.name, *merged.aliases):
        if name and name.casefold() not in known:
            known.add(name.casefold())
            added.append(name)
    return added


@transaction.atomic
def merge_entities(*, actor: Actor, kept_id: int, merged_id: int) -> EntityMerge:
    """Merge ``merged_id`` into ``kept_id`` (see the module docstring); returns the merge's record."""
    _require_admin(actor)
    if kept_id == merged_id:
        raise InvalidArgument("An entity cannot be merged with itself: choose two entities.")
    pair = _locked_pair(actor, kept_id, merged_id)
    kept = _mergeable(actor, pair, kept_id, kept=True)
    merged = _mergeable(actor, pair, merged_id, kept=False)
    moved: dict[str, list[int]] = {}
    for model, field in entity_references():
        ids = sorted(_movable(model, field, merged, kept).values_list("pk", flat=True))
        if ids:
            model._default_manager.filter(pk__in=ids).update(**{field: kept})
            moved[reference_key(model, field)] = ids
    added = _new_aliases(kept, merged)
    kept.aliases = [*kept.aliases, *added]
    kept.save(update_fields=["aliases"])
    merged.merged_into = kept
    merged.save(update_fields=["merged_into"])
    merge = EntityMerge.objects.create(
        org=actor.org, kept=kept, merged=merged, moved=moved, added_aliases=added, merged_by=actor.user
    )
    record_audit(
        actor=actor,
        action="entity.merged",
        target=kept.public_id,
        details={"merged": merged.public_id, "merge": merge.pk, "moved": shared_counts(moved), "aliases": added},
    )
    return merge


@transaction.atomic
def undo_merge(*, actor: Actor, merge_id: int) -> EntityMerge:
    """Put back exactly what a merge moved, and bring the merged entity back into use."""
    _require_admin(actor)
    merge = EntityMerge.objects.select_for_update().filter(org=actor.org, pk=merge_id).first()
    if merge is None:
        raise NotFound(f"No merge {merge_id} in this organisation.")
    if merge.undone_at is not None:
        raise InvalidArgument(f"Merge {merge_id} was already undone.")
    pair = _locked_pair(actor, merge.kept_id, merge.merged_id)
    kept, merged = pair[merge.kept_id], pair[merge.merged_id]
    if kept.merged_into_id is not None:
        raise InvalidArgument(
            f"{kept.public_id} has been merged into ent_{kept.merged_into_id} since; undo that merge first."
        )
    references = {reference_key(model, field): (model, field) for model, field in entity_references()}
    for key, ids in merge.moved.items():
        model, field = references[key]
        # Only rows still where the merge put them: one changed since stays as it is now.
        model._default_manager.filter(pk__in=ids, **{field: kept}).update(**{field: merged})
    taken = set(merge.added_aliases)
    kept.aliases = [name for name in kept.aliases if name not in taken]
    kept.save(update_fields=["aliases"])
    merged.merged_into = None
    merged.save(update_fields=["merged_into"])
    merge.undone_at, merge.undone_by = timezone.now(), actor.user
    merge.save(update_fields=["undone_at", "undone_by"])
    record_audit(
        actor=actor,
        action="entity.merge_undone",
        target=merged.public_id,
        details={"kept": kept.public_id, "merge": merge.pk, "moved_back": shared_counts(merge.moved)},
    )
    return merge


def shared_counts(moved: dict[str, list[int]]) -> dict[str, int]:
    """How many rows of each reference a merge moved, counting rows of shared sources only: what
    the audit trail and the admin show, so that nobody is told personal memories name an entity."""
    references = {reference_key(model, field): model for model, field in entity_references()}
    counts = {}
    for key, ids in moved.items():
        model = references.get(key)
        if model is None:
            continue
        rows = model._default_manager.filter(pk__in=ids)
        path = _scope_path(model)
        counts[key] = (rows.filter(**{path: Scope.SHARED}) if path else rows).count()
    return {key: n for key, n in counts.items() if n}


def _scope_path(model: type[models.Model]) -> str | None:
    names = {field.name for field in model._meta.get_fields()}
    for path, field in (("scope", "scope"), ("document__scope", "document"), ("fact__scope", "fact")):
        if field in names:
            return path
    return None


# --- retyping --------------------------------------------------------------------------------------


@transaction.atomic
def change_entity_type(*, actor: Actor, entity_id: int, type: str) -> Entity:
    """Give an entity the type an admin chose; every reader is shown it from now on."""
    _require_admin(actor)
    if type not in ENTITY_TYPES:
        raise InvalidArgument(f"{type!r} is not an entity type; choose one of: {', '.join(ENTITY_TYPES)}.")
    entity = fixable_entities(actor=actor).select_for_update().filter(pk=entity_id).first()
    if entity is None:
        raise _no_entity(entity_id)
    if entity.type == type and entity.type_fixed:
        return entity
    before = entity.type
    entity.type, entity.type_fixed = type, True
    entity.save(update_fields=["type", "type_fixed"])
    record_audit(
        actor=actor, action="entity.type_changed", target=entity.public_id, details={"from": before, "to": type}
    )
    return entity


# --- flagging broken facts -------------------------------------------------------------------------


@transaction.atomic
def flag_fact(*, actor: Actor, fact_id: int, reason: str) -> Fact:
    """Hold a fact back from every read until an admin reviews it; ``reason`` says what is wrong."""
    _require_admin(actor)
    why = checked_text(reason, "reason", FLAG_REASON_LIMIT, required=True)
    fact = _locked_fact(actor, fact_id)
    if fact.flagged_at is not None:
        raise InvalidArgument(f"{fact.public_id} is flagged already ({fact.flag_reason}); review it instead.")
    fact.flagged_at, fact.flag_reason, fact.flagged_by = timezone.now(), why, actor.user
    fact.save(update_fields=["flagged_at", "flag_reason", "flagged_by"])
    release_twins([fact.pk])  # another document saying the same is shown on its own meanwhile
    record_audit(actor=actor, action="memory.flagged", target=fact.public_id, details={"reason": why})
    return fact


def _flagged(actor: Actor, fact_id: int) -> tuple[Fact, str]:
    fact = _locked_fact(actor, fact_id)
    if fact.flagged_at is None:
        raise InvalidArgument(f"{fact.public_id} is not flagged; there is nothing to review.")
    reason = fact.flag_reason
    fact.flagged_at, fact.flag_reason, fact.flagged_by = None, "", None
    return fact, reason


@transaction.atomic
def restore_fact(*, actor: Actor, fact_id: int) -> Fact:
    """The review found the fact right: it is shown again, as it was."""
    _require_admin(actor)
    fact, reason = _flagged(actor, fact_id)
    fact.save(update_fields=["flagged_at", "flag_reason", "flagged_by"])
    record_audit(actor=actor, action="memory.restored", target=fact.public_id, details={"flagged_for": reason})
    return fact


@transaction.atomic
def retire_fact(*, actor: Actor, fact_id: int) -> Fact:
    """The review found the fact wrong: it is superseded now (history keeps what was believed)."""
    _require_admin(actor)
    fact, reason = _flagged(actor, fact_id)
    fact.superseded_at = fact.superseded_at or timezone.now()
    fact.save(update_fields=["flagged_at", "flag_reason", "flagged_by", "superseded_at"])
    record_audit(actor=actor, action="memory.retired", target=fact.public_id, details={"flagged_for": reason})
    return fact
