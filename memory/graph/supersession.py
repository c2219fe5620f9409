"""When a new statement supersedes an older one (the time rules), applied to stored facts."""

from __future__ import annotations

from memory.graph.vocabulary import HELD_BY_ONE
from memory.models import Fact, Scope


def _overlaps(a: Fact, b: Fact) -> bool:
    starts_before_end = a.valid_from is None or b.valid_to is None or a.valid_from <= b.valid_to
    ends_after_start = a.valid_to is None or b.valid_from is None or a.valid_to >= b.valid_from
    return starts_before_end and ends_after_start


def apply_supersession(new: Fact) -> None:
    """A new fact supersedes an older one only when both are about the same subject, state the same
    single-valued relation or value key, say something different, and their validity overlaps.

    - the new one starts later: the old one is closed at that date and superseded by it;
    - the new one starts earlier (it arrived late, about an earlier time): the new one is closed
      where the old one begins, and the old one stands;
    - same start (a correction): the old one is superseded and keeps its window.
    Unrelated facts are never touched, and nothing is deleted.
    """
    if not new.single_valued or new.subject_id is None or not (new.relation or new.value_key):
        return
    # Only statements of the same audience replace each other: across it, a reader would see a
    # fact marked replaced by one they cannot see (or lose one for a reason they cannot know).
    current = Fact.objects.select_for_update().filter(
        org_id=new.org_id, single_valued=True, superseded_at__isnull=True, scope=new.scope,
        category_id=new.category_id,
    )  # fmt: skip
    if new.relation in HELD_BY_ONE and new.object_id is not None:
        # A role is single-valued on its object: support has one head at a time, whoever it is.
        rivals = current.filter(relation=new.relation, object_id=new.object_id).exclude(subject_id=new.subject_id)
    else:
        rivals = current.filter(subject_id=new.subject_id, relation=new.relation, value_key=new.value_key)
    rivals = rivals.exclude(pk=new.pk)
    if new.scope == Scope.PERSONAL:
        rivals = rivals.filter(owner_id=new.owner_id)
    now = new.recorded_at  # the old belief ends when the new one was recorded
    for old in rivals:
        if not _overlaps(old, new) or _same_claim(old, new):
            continue
        if old.valid_from and new.valid_from and new.valid_from < old.valid_from:
            new.valid_to = old.valid_from
            new.save(update_fields=["valid_to"])
            continue
        if old.valid_from and new.valid_from and new.valid_from > old.valid_from and old.valid_to is None:
            old.valid_to = new.valid_from
        old.superseded_at, old.superseded_by = now, new
        old.save(update_fields=["valid_to", "superseded_at", "superseded_by"])


def _same_claim(old: Fact, new: Fact) -> bool:
    if new.relation in HELD_BY_ONE and new.object_id is not None:
        return old.subject_id == new.subject_id
    if new.relation and old.object_id != new.object_id:
        return False
    if new.value_key:
        old_values = sorted((v.number, v.date, v.text) for v in old.values.all())
        new_values = sorted((v.number, v.date, v.text) for v in new.values.all())
        return old_values == new_values
    return old.object_id == new.object_id
