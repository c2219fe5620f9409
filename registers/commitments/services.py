"""The commitment register as people and assistants use it: list, record, update."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from django.db import transaction
from django.db.models import Prefetch, QuerySet
from django.utils import timezone

from brain.core.actors import Actor
from brain.core.audit import record_audit
from brain.core.errors import InvalidArgument, NotFound
from brain.core.inputs import checked_text
from brain.core.personal import SHARED, require_may_write
from memory.access import readable
from memory.graph.reads import find_entities
from memory.models import Document, Entity
from registers.common import entry_id, local_today, one_of, readable_entries, shared_audience
from registers.models import Commitment, CommitmentSource, Verdict

STATES = ("open", "overdue", "landed", "cancelled", "all")
# What update_commitment accepts, and the state each word means.
SETTLE = {"landed": "landed", "done": "landed", "cancelled": "cancelled", "dropped": "cancelled", "open": "open"}
OWNER_LIMIT, WHAT_LIMIT, NOTE_LIMIT, MADE_IN_LIMIT = 200, 300, 500, 300
LIST_LIMIT = 100


@dataclass(frozen=True)
class Listed:
    commitment: Commitment
    overdue: bool
    verdict: Verdict | None  # the latest nightly verdict


def visible_commitments(*, actor: Actor) -> QuerySet[Commitment]:
    return Commitment.objects.filter(readable_entries(actor))


def list_commitments(
    *, actor: Actor, owner: str | None = None, state: str | None = None, limit: int = 20
) -> list[Listed]:
    """Open ones by default (overdue included), soonest due first; each with its latest verdict."""
    chosen = one_of(state, "state", STATES, "open")
    today = local_today(actor.org)
    rows = visible_commitments(actor=actor)
    if chosen in ("open", "overdue"):
        rows = rows.filter(state=Commitment.State.OPEN)
        if chosen == "overdue":
            rows = rows.filter(due_on__lt=today)
    elif chosen != "all":
        rows = rows.filter(state=chosen)
    who = checked_text(owner, "owner", OWNER_LIMIT)
    if who:
        rows = rows.filter(owner_name__icontains=who)
    latest = Prefetch("verdicts", queryset=Verdict.objects.order_by("-checked_at", "-pk"), to_attr="latest")
    picked = rows.order_by("due_on", "promised_on", "pk").select_related("document")
    picked = picked.prefetch_related(latest, said_also(actor))
    picked = picked[: max(1, min(limit, LIST_LIMIT))]
    return [Listed(c, c.is_overdue(today), next(iter(getattr(c, "latest", [])), None)) for c in picked]


def said_also(actor: Actor) -> Prefetch:
    """The further places each commitment was said (``commitment.said_also``), those the actor may
    read only: a twin is kept only within one audience, and this keeps it so if that ever changes."""
    seen = CommitmentSource.objects.filter(document__in=Document.objects.filter(readable(actor)))
    return Prefetch(
        "sources", queryset=seen.select_related("document").order_by("promised_on", "pk"), to_attr="said_also"
    )


def owner_entity(actor: Actor, name: str) -> Entity | None:
    """The entity the owner's name matches, among those the actor may see."""
    found = find_entities(actor=actor, name=name, limit=1)
    return Entity.objects.filter(pk=found[0]).first() if found else None


def concerns(actor: Actor, commitment: Commitment) -> bool:
    """Whether the commitment is the actor's to settle on the members' page: they owe it (the owner
    named is their name or username), they recorded it, it is in their personal memory, or they
    are an admin. The tools let any reader settle what they can see, with a note."""
    user = actor.user
    names = {user.get_username(), user.get_full_name(), user.first_name}
    owes = commitment.owner_name.strip().casefold() in {n.strip().casefold() for n in names if n.strip()}
    return actor.is_admin or owes or user.pk in (commitment.created_by_id, commitment.owner_id)


@transaction.atomic
def record_commitment(
    *,
    actor: Actor,
    owner: str,
    what: str,
    due_on: date | None = None,
    promised_on: date | None = None,
    made_in: str = "",
) -> Commitment:
    """A promise a person tells about; shared with the organisation."""
    require_may_write(actor, scope=SHARED, what="Recording a commitment (the register is shared)")
    name = checked_text(owner, "owner", OWNER_LIMIT, required=True)
    text = checked_text(what, "what", WHAT_LIMIT, required=True)
    where = checked_text(made_in, "from", MADE_IN_LIMIT)
    promised = promised_on or local_today(actor.org)
    if due_on is not None and due_on < promised:
        raise InvalidArgument(f"due_on {due_on} is before the day it was promised ({promised}).")
    commitment = Commitment.objects.create(
        org=actor.org,
        owner_name=name,
        owner_entity=owner_entity(actor, name),
        what=text,
        due_on=due_on,
        promised_on=promised,
        made_in=where,
        origin=Commitment.Origin.RECORDED,
        created_by=actor.user,
        **shared_audience(actor.org),
    )
    record_audit(actor=actor, action="commitment.recorded", target=commitment.public_id, details={"what": text})
    return commitment


@transaction.atomic
def update_commitment(
    *,
    actor: Actor,
    commitment_id: str,
    status: str | None = None,
    note: str | None = None,
    due_on: date | None = None,
    what: str | None = None,
) -> Commitment:
    """Settle, reopen or correct a commitment the actor may see; settling needs a note."""
    require_may_write(actor, scope=SHARED, what="Changing a commitment (the register is shared)")
    number = entry_id(commitment_id, "cmt", "commitment")
    commitment = visible_commitments(actor=actor).select_for_update().filter(pk=number).first()
    if commitment is None:
        raise NotFound(f"No commitment {commitment_id} that you can see.")
    if status is None and note is None and due_on is None and what is None:
        raise InvalidArgument("Pass what to change: status, due_on or what (and a note to settle it).")
    text = checked_text(note, "note", NOTE_LIMIT)
    changes: dict[str, object] = {}
    if status is not None:
        if status not in SETTLE:
            raise InvalidArgument(f"status must be one of {', '.join(SETTLE)}; got {status!r}.")
        state = SETTLE[status]
        if state != "open" and not text:
            raise InvalidArgument(
                f"Marking it {status} needs a note: what it rests on (the system checked and what it showed, "
                "or who confirmed it and when)."
            )
        commitment.state = state
        commitment.note = text if state != "open" else ""
        commitment.settled_by = actor.user if state != "open" else None
        commitment.settled_at = timezone.now() if state != "open" else None
        changes["state"] = state
    elif text:
        commitment.note = text
    if due_on is not None:
        if due_on < commitment.promised_on:
            raise InvalidArgument(f"due_on {due_on} is before the day it was promised ({commitment.promised_on}).")
        commitment.due_on, changes["due_on"] = due_on, due_on.isoformat()
    if what is not None:
        commitment.what = changes["what"] = checked_text(what, "what", WHAT_LIMIT, required=True)
    commitment.save()
    record_audit(
        actor=actor, action="commitment.updated", target=commitment.public_id, details={**changes, "note": text}
    )
    return commitment
