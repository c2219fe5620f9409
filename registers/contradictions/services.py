"""The contradiction register as people and assistants use it: list, raise, answer.

A contradiction shows its two statements, so a reader sees it only if they may read each fact
behind it: one rule here (``visible_contradictions``) for the tools, the REST API, the admin's
answer page and the member page.
"""

from __future__ import annotations

from datetime import date
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Count, Q, QuerySet
from django.utils import timezone

from brain.core.actors import Actor
from brain.core.audit import record_audit
from brain.core.errors import InvalidArgument, NotFound
from brain.core.inputs import checked_text
from brain.core.personal import SHARED, require_may_write
from brain.models import Organisation
from memory.access import seen_by_every_reader_of
from memory.graph.memories import supersede_explicitly
from memory.graph.reads import parse_memory_id, visible_facts
from memory.models import Document, Fact
from registers.common import entry_id, one_of
from registers.contradictions.twins import side_key, twin_key_of_pair
from registers.models import Contradiction

STATES = ("open", "resolved", "dismissed", "all")
SEVERITIES = ("high", "medium", "low")
ANSWERS = ("a", "b", "c", "d", "e", "f", "both", "neither")  # c to f: the statements after a and b
LIMITS = {"question": 500, "about": 80, "claim": 1000, "source": 300, "subject": 200, "note": 500}
LIST_LIMIT = 100


def without_personal(contradictions: QuerySet[Contradiction]) -> QuerySet[Contradiction]:
    """For admins and their overview: a pair touching a personal memory stays its owner's."""
    return contradictions.exclude(fact_a__scope="personal").exclude(fact_b__scope="personal")


def visible_contradictions(*, actor: Actor) -> QuerySet[Contradiction]:
    facts = visible_facts(actor=actor).values("pk")
    return Contradiction.objects.filter(org=actor.org).filter(
        Q(fact_a__isnull=True) | Q(fact_a__in=facts), Q(fact_b__isnull=True) | Q(fact_b__in=facts)
    )


def open_about(*, actor: Actor, fact_ids: set[int]) -> dict[int, list[str]]:
    """The open contradictions the actor may see touching each of ``fact_ids``: fact id -> entry ids."""
    touching: dict[int, list[str]] = {}
    if not fact_ids:
        return touching
    entries = visible_contradictions(actor=actor).filter(state=Contradiction.State.OPEN)
    rows = entries.filter(Q(fact_a__in=fact_ids) | Q(fact_b__in=fact_ids) | ~Q(more=[])).order_by("pk")
    for entry in rows[:LIST_LIMIT]:
        for fact_id in {entry.fact_a_id, entry.fact_b_id, *(side["fact"] for side in entry.more)} & fact_ids:
            touching.setdefault(fact_id, []).append(entry.public_id)
    return touching


def list_contradictions(
    *, actor: Actor, state: str | None = None, severity: str | None = None, limit: int = 20
) -> list[Contradiction]:
    """Open ones by default, the most severe first."""
    chosen = one_of(state, "state", STATES, "open")
    # A twin is listed through the first entry of its disagreement (its readers are the same).
    rows: QuerySet[Contradiction] = visible_contradictions(actor=actor).filter(twin_of__isnull=True)
    rows = rows.select_related("fact_a", "fact_b").annotate(twin_count=Count("twins"))
    if chosen != "all":
        rows = rows.filter(state=chosen)
    if severity is not None:
        rows = rows.filter(severity=one_of(severity, "severity", SEVERITIES, "medium"))
    order = {"high": 0, "medium": 1, "low": 2}
    picked: list[Contradiction] = list(rows.order_by("-pk")[: max(1, min(limit, LIST_LIMIT)) * 3])
    picked.sort(key=lambda c: (order[c.severity], -c.pk))
    return picked[: max(1, min(limit, LIST_LIMIT))]


def _memory(actor: Actor, value: str | None, field: str) -> Fact | None:
    if not value:
        return None
    fact = visible_facts(actor=actor).filter(pk=parse_memory_id(value)).first()
    if fact is None:
        raise NotFound(f"{field}: no memory {value} that you can see.")
    return fact


def raise_contradiction(**kwargs: Any) -> Contradiction:
    """``raise_or_find_contradiction`` for callers that need only the entry."""
    return raise_or_find_contradiction(**kwargs)[0]


@transaction.atomic
def raise_or_find_contradiction(
    *,
    actor: Actor,
    question: str,
    about: str,
    claim_a: str,
    source_a: str,
    claim_b: str,
    source_b: str,
    memory_id_a: str | None = None,
    memory_id_b: str | None = None,
    severity: str | None = None,
    subject: str | None = None,
) -> tuple[Contradiction, bool]:
    """Put a contradiction on the register; returns it and whether it is new. A pair of memories
    is on the register once: raising a pair already there (by the nightly scan or by someone)
    answers with that entry, whatever its state, and changes nothing."""
    require_may_write(actor, scope=SHARED, what="Raising a contradiction (the register is shared)")
    fact_a, fact_b = _memory(actor, memory_id_a, "memory_id_a"), _memory(actor, memory_id_b, "memory_id_b")
    if fact_a is not None and fact_a == fact_b:
        raise InvalidArgument("memory_id_a and memory_id_b are the same memory; a contradiction needs two.")
    words = len(checked_text(about, "about", LIMITS["about"], required=True).split())
    if not 1 <= words <= 8:
        raise InvalidArgument(f"about is {words} words; say what it is about in three to six words.")
    pair = _pair(fact_a, fact_b)
    existing = Contradiction.objects.filter(org=actor.org, pair=pair).first() if pair else None
    if existing is not None:
        return existing, False
    try:
        with transaction.atomic():  # a savepoint: someone may raise the same pair at the same moment
            entry = _create(
                actor, question, about, claim_a, source_a, claim_b, source_b, fact_a, fact_b, severity, subject, pair
            )
    except IntegrityError:
        return Contradiction.objects.get(org=actor.org, pair=pair), False
    record_audit(actor=actor, action="contradiction.raised", target=entry.public_id, details={"about": entry.about})
    fold_twins(actor.org, {entry.twin_key})
    entry.refresh_from_db()
    if entry.twin_of is not None:
        return entry.twin_of, False  # the same disagreement is on the register already: that entry answers
    return entry, True


def _create(
    actor: Actor,
    question: str,
    about: str,
    claim_a: str,
    source_a: str,
    claim_b: str,
    source_b: str,
    fact_a: Fact | None,
    fact_b: Fact | None,
    severity: str | None,
    subject: str | None,
    pair: str,
) -> Contradiction:
    return Contradiction.objects.create(
        org=actor.org,
        question=checked_text(question, "question", LIMITS["question"], required=True),
        about=checked_text(about, "about", LIMITS["about"], required=True),
        claim_a=checked_text(claim_a, "claim_a", LIMITS["claim"], required=True),
        source_a=checked_text(source_a, "source_a", LIMITS["source"], required=True),
        claim_b=checked_text(claim_b, "claim_b", LIMITS["claim"], required=True),
        source_b=checked_text(source_b, "source_b", LIMITS["source"], required=True),
        fact_a=fact_a,
        fact_b=fact_b,
        date_a=_day(fact_a),
        date_b=_day(fact_b),
        severity=one_of(severity, "severity", SEVERITIES, "medium"),
        subject=checked_text(subject, "subject", LIMITS["subject"]),
        raised_by=actor.user,
        pair=pair,
        twin_key=twin_key_of_pair(fact_a, fact_b) if fact_a is not None and fact_b is not None else "",
    )


def _seen_by_readers_of(loses: Fact, stands: Fact) -> bool:
    """Whether everyone who may read ``loses`` may read ``stands``: nobody loses a statement to one
    they cannot see (the rule supersession keeps, ``memory.graph.supersession.rivals``)."""
    if loses.document is None or stands.document_id is None:
        return loses.category_id == stands.category_id and loses.scope == stands.scope
    return Document.objects.filter(seen_by_every_reader_of(loses.document), pk=stands.document_id).exists()


def _day(fact: Fact | None) -> date | None:
    if fact is None:
        return None
    return fact.valid_from or fact.recorded_at.date()


def _pair(a: Fact | None, b: Fact | None) -> str:
    """The key of a pair of memories, so the nightly scan never raises it again; '' without both."""
    if a is None or b is None:
        return ""
    first, second = sorted((a.pk, b.pk))
    return f"{first}:{second}"


@transaction.atomic
def answer_contradiction(*, actor: Actor, contradiction_id: str, answer: str, note: str) -> Contradiction:
    """a or b (or c, d... on an entry naming more statements): that statement stands and the others
    are superseded in memory; both or neither close it and leave memory as it is. A note is required."""
    require_may_write(actor, scope=SHARED, what="Answering a contradiction (the register is shared)")
    number = entry_id(contradiction_id, "ctr", "contradiction")
    entry = visible_contradictions(actor=actor).select_for_update(of=("self",)).filter(pk=number).first()
    if entry is None:
        raise NotFound(f"No contradiction {contradiction_id} that you can see.")
    chosen = one_of(answer, "answer", ANSWERS, "")
    reason = checked_text(note, "note", LIMITS["note"], required=True)
    if entry.state != Contradiction.State.OPEN:
        raise InvalidArgument(f"{entry.public_id} was already answered ({entry.answer}); it is {entry.state}.")
    sides = statements(entry)
    if chosen not in ("both", "neither") and chosen not in sides:
        labels = ", ".join([*sides, "both", "neither"])
        raise InvalidArgument(f"answer must be one of {labels}: {entry.public_id} names {len(sides)} statements.")
    superseded = []
    stands = sides.get(chosen)
    if stands is not None:
        losing = [f for label, f in sides.items() if label != chosen and f is not None and f.superseded_at is None]
        if any(not _seen_by_readers_of(loses, stands) for loses in losing):
            raise InvalidArgument(
                f"The statement that would stand ({chosen}) is hidden from some people who read another one, "
                "so it cannot replace it for them. Answer both or neither, or correct the other statement at "
                "its source."
            )
        for loses in losing:
            supersede_explicitly(old=loses, new=stands, at=timezone.now())
            superseded.append(loses.public_id)
    entry.answer, entry.note, entry.answered_by, entry.answered_at = chosen, reason, actor.user, timezone.now()
    entry.state = Contradiction.State.DISMISSED if chosen == "neither" else Contradiction.State.RESOLVED
    entry.save()
    twins = _settle_twins(entry)
    details = {"answer": chosen, "note": reason, "superseded": ", ".join(superseded), "twins": twins}
    record_audit(actor=actor, action="contradiction.answered", target=entry.public_id, details=details)
    return entry


@transaction.atomic  # the nightly scan calls it outside any transaction; twins are settled under lock
def fold_twins(org: Organisation, keys: set[str]) -> None:
    """Entries with one of ``keys`` become twins of the first entry of their disagreement; a twin
    found after that one was answered is settled the same way at once."""
    for key in sorted(k for k in keys if k):
        family = list(Contradiction.objects.filter(org=org, twin_key=key).order_by("pk"))
        if not family:  # its statements joined another entry about the same thing instead
            continue
        first, *others = family
        for other in others:
            if other.twin_of_id != first.pk:
                Contradiction.objects.filter(pk=other.pk).update(twin_of=first)
        if first.state != Contradiction.State.OPEN:
            _settle_twins(first)


def _settle_twins(answered: Contradiction) -> list[str]:
    """Settle the open twins of ``answered`` as it was settled; returns their ids. For an answer a
    or b, the side of each twin that claims what the standing side claims stands, and the other is
    superseded when everyone who reads it may read the one that stands (as an answer does)."""
    root = answered.twin_of_id or answered.pk
    family = Contradiction.objects.filter(Q(pk=root) | Q(twin_of_id=root), org_id=answered.org_id)
    open_ones = family.filter(state=Contradiction.State.OPEN).exclude(pk=answered.pk)
    stands_key = ""
    if answered.answer in ("a", "b"):
        stands = answered.fact_a if answered.answer == "a" else answered.fact_b
        stands_key = side_key(stands) if stands is not None else ""
    settled = []
    for twin in open_ones.select_for_update(of=("self",)).select_related("fact_a", "fact_b"):
        twin.answer = answered.answer
        if stands_key:
            twin.answer = _supersede_like(twin, stands_key) or Contradiction.Answer.BOTH
        twin.note = f"As {answered.public_id}: {answered.note}"[: LIMITS["note"]]
        twin.answered_by_id, twin.answered_at, twin.state = answered.answered_by_id, timezone.now(), answered.state
        twin.save()
        settled.append(twin.public_id)
    return settled


def _supersede_like(twin: Contradiction, stands_key: str) -> str:
    """In ``twin``, the side claiming what stands stands: its other side is superseded (when that
    is allowed); returns the answer that says so ("a" or "b"), or "" when neither side claims it."""
    for answer, stands, loses in (("a", twin.fact_a, twin.fact_b), ("b", twin.fact_b, twin.fact_a)):
        if stands is None or loses is None or side_key(stands) != stands_key:
            continue
        if loses.superseded_at is None and _seen_by_readers_of(loses, stands):
            supersede_explicitly(old=loses, new=stands, at=timezone.now())
        return answer
    return ""


def statements(entry: Contradiction) -> dict[str, Fact | None]:
    """An entry's statements by label: a, b, then c, d... for one thing stated more ways."""
    more = Fact.objects.in_bulk([side["fact"] for side in entry.more])
    sides = {"a": entry.fact_a, "b": entry.fact_b}
    sides.update({label: more.get(side["fact"]) for label, side in zip("cdef", entry.more, strict=False)})
    return sides
