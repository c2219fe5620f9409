"""When a new statement supersedes an older one: the time rules as a pure decision, and their
application to stored facts.

A new fact supersedes an older one only when both are about the same thing (for a role held by
one, the same role of the same object; else the same topic, the words naming what a value is of,
"lisbon office|open", when both have one; else the same subject and single-valued relation or
value key), have the same audience, say something different, and their validity overlaps. A date
that is the value itself ("opens on 1 May") is no window of validity:

- the new one starts later: the old one is closed at that date and superseded by it;
- the new one starts earlier (it arrived late, about an earlier time): the new one is closed
  where the old one begins, and the old one stands;
- same start, or no dates: from the same source (the same document or a version of it, or the
  same person remembering), a correction: the old one is superseded and keeps its window; from
  two sources, a contradiction unless the new one says the world changed ("is now", "took over",
  ``CHANGE_WORDS``): both stay current and the pair is for the contradictions register. Brain
  never picks a winner between two sources for the same period; a person's answer does.

Unrelated facts are never touched, and nothing is deleted. ``decide`` holds the rules and needs
no database; ``rivals`` is the one query for "statements about the same thing", used here and by
``ask_company_memory`` for its conflicts.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date
from enum import Enum

from django.db.models import Q, QuerySet

from memory.access import current, same_audience_as
from memory.extraction.vocabulary import CHANGE_WORDS, HELD_BY_ONE
from memory.graph.twins import UNREAD
from memory.models import Fact


@dataclass(frozen=True)
class Claim:
    """What the rules look at in a statement."""

    subject_id: int | None
    object_id: int | None
    relation: str
    value_key: str
    values: tuple[tuple[object, ...], ...]  # (number, date, text) of each value, sorted
    valid_from: date | None
    valid_to: date | None
    source: tuple[object, ...] = ()  # who or what says it (``source_of``); () when unknown
    says_change: bool = False  # its words say the world changed

    @classmethod
    def of(cls, fact: Fact) -> Claim:
        # The values of what it states (its value key): a row's other cells are other things.
        of_key = [v for v in fact.values.all() if v.key == fact.value_key] if fact.value_key else []
        stated = [stated_value(v.number, v.date, v.text, v.unit) for v in of_key]
        days = {day for _, day, _ in stated if day is not None}
        start, end = (
            (None if fact.valid_from in days else fact.valid_from),
            (None if fact.valid_to in days else fact.valid_to),
        )
        return cls(
            fact.subject_id,
            fact.object_id,
            fact.relation,
            fact.value_key,
            value_order(stated),
            start,
            end,
            source_of(fact),
            bool(CHANGE_WORDS.search(fact.statement)),
        )

    @property
    def is_role(self) -> bool:
        return self.relation in HELD_BY_ONE and self.object_id is not None


def stated_value(number: float | None, day: date | None, text: str, unit: str) -> tuple[float | None, date | None, str]:
    """What a value says, to tell two values apart: an amount with its unit, or a date, whatever the
    words ("29 EUR" and "EUR 29", "12 May" and "May 12th" say the same); words only when that is all
    it has."""
    if number is not None:
        return number, None, unit.strip().casefold()
    if day is not None:
        return None, day, ""
    return None, None, " ".join(text.casefold().split())


def value_order(values: Iterable[tuple[float | None, date | None, str]]) -> tuple[tuple[object, ...], ...]:
    """A fact's values in one order, comparable whatever each holds: a price and a renewal date
    side by side have a number without a date and a date without a number."""

    def key(value: tuple[float | None, date | None, str]) -> tuple[object, ...]:
        number, day, text = value
        return (number is None, number or 0.0, day is None, day or date.min, text)

    return tuple(sorted(values, key=key))


def source_of(fact: Fact) -> tuple[object, ...]:
    """Who says a fact: the person for what they remembered, else its document with all its versions."""
    if fact.source == Fact.Source.REMEMBERED:
        return ("person", fact.created_by_id)
    document = fact.document
    if document is None:
        return ("fact", fact.pk)
    if document.external_id:
        return ("document", document.source_kind, document.external_id)
    return ("document", document.pk)


class Action(Enum):
    NONE = "none"  # unrelated in time, or the same claim again
    CONTRADICT = "contradict"  # two sources disagree about the same period: both stand, for the register
    CLOSE_NEW = "close_new"  # the new one arrived late: it ends where the old one begins
    SUPERSEDE = "supersede"  # the old one is replaced, its window kept
    CLOSE_AND_SUPERSEDE = "close_and_supersede"  # the old one ends where the new one starts, and is replaced


@dataclass(frozen=True)
class Decision:
    action: Action
    end: date | None = None  # the valid_to the closed statement takes


def decide(old: Claim, new: Claim) -> Decision:
    """What a new statement does to an older one about the same thing (see the module's rules)."""
    if not overlaps(old, new) or same_claim(old, new):
        return Decision(Action.NONE)
    if old.valid_from and new.valid_from and new.valid_from < old.valid_from:
        return Decision(Action.CLOSE_NEW, end=old.valid_from)
    if old.valid_from and new.valid_from and new.valid_from > old.valid_from and old.valid_to is None:
        return Decision(Action.CLOSE_AND_SUPERSEDE, end=new.valid_from)
    if old.source and new.source and old.source != new.source and not new.says_change:
        return Decision(Action.CONTRADICT)
    return Decision(Action.SUPERSEDE)


def overlaps(a: Claim, b: Claim) -> bool:
    starts_before_end = a.valid_from is None or b.valid_to is None or a.valid_from <= b.valid_to
    ends_after_start = a.valid_to is None or b.valid_from is None or a.valid_to >= b.valid_from
    return starts_before_end and ends_after_start


def same_claim(old: Claim, new: Claim) -> bool:
    if new.is_role:
        return old.subject_id == new.subject_id
    if old.values and new.values:  # two statements of a value (the same topic): the values decide
        return old.values == new.values
    if new.relation and old.object_id != new.object_id:
        return False
    if new.value_key:
        return old.values == new.values
    return old.object_id == new.object_id


# ``about_the_same_thing`` for many facts at once, in SQL over rows of memory_fact: the key of the
# single-valued thing a row states (rows with equal keys are about the same thing), and the rows
# that state one. ``%(roles)s`` is ``sorted(HELD_BY_ONE)``. The nightly contradiction scan groups by it.
THING_SQL = """CASE WHEN relation = ANY(%(roles)s) AND object_id IS NOT NULL
                THEN 'role:' || relation || ':' || object_id
                WHEN topic <> '' THEN 'topic:' || topic
                ELSE 'thing:' || subject_id || ':' || relation || ':' || value_key END"""
STATES_A_THING_SQL = (
    "single_valued AND (topic <> '' OR (subject_id IS NOT NULL AND (relation <> '' OR value_key <> '')))"
)


def about_the_same_thing(fact: Fact) -> Q | None:
    """Facts stating the same single-valued thing as ``fact`` (None when it states none); the same
    rule as ``THING_SQL``, which the nightly contradiction scan groups by."""
    if not fact.single_valued:
        return None
    if fact.relation in HELD_BY_ONE and fact.object_id is not None:
        # A role is single-valued on its object: support has one head at a time, whoever it is.
        return Q(single_valued=True, relation=fact.relation, object_id=fact.object_id)
    if fact.topic:
        return Q(single_valued=True, topic=fact.topic)
    if fact.subject_id is None or not (fact.relation or fact.value_key):
        return None
    return Q(single_valued=True, subject_id=fact.subject_id, relation=fact.relation, value_key=fact.value_key)


def rivals(new: Fact) -> QuerySet[Fact]:
    """The current facts ``new`` may supersede: about the same thing, of the same audience (a reader
    must never see a fact replaced by one they cannot see, nor lose one for a reason they cannot know)."""
    same = about_the_same_thing(new)
    if same is None:
        return Fact.objects.none()
    # Only those recorded before it: facts recorded together are applied in their order, so the
    # later of two statements in one document replaces the earlier, never the other way round too.
    found = Fact.objects.filter(current(), same, same_audience_as(new), org_id=new.org_id, pk__lt=new.pk)
    if new.relation in HELD_BY_ONE and new.object_id is not None:
        found = found.exclude(subject_id=new.subject_id)
    return found


def apply_supersession(new: Fact) -> None:
    """Apply the rules between ``new`` and each of its rivals, inside the caller's transaction."""
    found = rivals(new)
    if found.query.is_empty():
        return  # it states no single-valued thing: compiling the query that finds nothing cost more than the rest
    claim = Claim.of(new)
    # Who says each rival is read from its document's row, never its text.
    rows = found.defer(*UNREAD).select_related("document").defer("document__content", "document__metadata")
    rows = rows.prefetch_related("values")
    for old in rows.select_for_update(of=("self",)):
        decision = decide(Claim.of(old), claim)
        if decision.action is Action.CLOSE_NEW:
            new.valid_to = decision.end
            new.save(update_fields=["valid_to"])
            claim = Claim.of(new)
        elif decision.action not in (Action.NONE, Action.CONTRADICT):
            if decision.action is Action.CLOSE_AND_SUPERSEDE:
                old.valid_to = decision.end
            old.superseded_at, old.superseded_by = new.recorded_at, new  # the old belief ends when the new was recorded
            old.save(update_fields=["valid_to", "superseded_at", "superseded_by"])
