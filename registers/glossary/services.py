"""The glossary as people and assistants use it: look up, define, correct, dismiss, reopen.

A definition is a memory (``remember``), shared with the organisation, so search and ask find it;
a corrected one replaces that memory, and withdrawing one takes it out of what is current, since a
meaning nobody stands behind must not be retrieved as one: deleted when its author withdraws it,
ended (kept as history, as its author's) when someone else does, since only its author may forget
a memory.
"""

from __future__ import annotations

from django.db import transaction
from django.db.models import Q, QuerySet
from django.utils import timezone

from brain.core.actors import Actor
from brain.core.audit import record_audit
from brain.core.errors import InvalidArgument, NotFound
from brain.core.inputs import checked_text
from brain.core.personal import SHARED, require_may_write
from memory.graph.memories import remember, withdraw
from memory.models import Fact, Scope
from registers.common import entry_id, one_of
from registers.models import Term

STATES = ("defined", "open", "all")
UPDATE_STATES = ("defined", "dismissed", "open")
TERM_LIMIT, DEFINITION_LIMIT, NOTE_LIMIT, LIST_LIMIT = 120, 500, 500, 200


def glossary(*, actor: Actor, term: str | None = None, state: str | None = None, limit: int = 50) -> list[Term]:
    """Defined terms by default; ``term`` looks one word or phrase up (exact first, then containing)."""
    chosen = one_of(state, "state", STATES, "defined")
    rows: QuerySet[Term] = Term.objects.filter(org=actor.org).exclude(state=Term.State.DISMISSED)
    if chosen != "all":
        rows = rows.filter(state=chosen)
    wanted = checked_text(term, "term", TERM_LIMIT).lower()
    if wanted:
        exact = list(rows.filter(key=wanted))
        rows = rows.filter(Q(key__contains=wanted) | Q(definition__icontains=wanted)).exclude(key=wanted)
        return (exact + list(rows.order_by("-uses", "key")[:limit]))[: max(1, min(limit, LIST_LIMIT))]
    order = ("key",) if chosen == "defined" else ("-uses", "key")
    return list(rows.order_by(*order)[: max(1, min(limit, LIST_LIMIT))])


def locked_term(actor: Actor, term_id: str) -> Term:
    number = entry_id(term_id, "term", "glossary entry")
    entry = Term.objects.select_for_update().filter(org=actor.org, pk=number).first()
    if entry is None:
        raise NotFound(f"No glossary entry {term_id}.")
    return entry


def _remember(actor: Actor, entry: Term, definition: str) -> Fact:
    """The definition as a shared memory, replacing the entry's earlier one."""
    current = entry.memory if entry.memory is not None and entry.memory.superseded_at is None else None
    return remember(
        actor=actor,
        content=f"{entry.term}: {definition}",
        subject=entry.term,
        scope=Scope.SHARED,
        entities=[{"type": "term", "name": entry.term}],
        title=f"Glossary: {entry.term}",
        description="defined in the glossary",
        replaces_memory_id=current.pk if current else None,
    )


def _withdraw(actor: Actor, entry: Term) -> None:
    """The definition's memory stops being found; it is deleted only when the caller defined it."""
    if entry.memory is not None:
        withdraw(actor=actor, fact=entry.memory)
    entry.memory = None


def _settle_proposal(entry: Term) -> None:
    """A defined word waits for nothing more: a member's proposal on it is settled by the definition."""
    entry.proposal, entry.proposal_passage, entry.proposed_by, entry.proposed_at = "", None, None, None


@transaction.atomic
def define_term(*, actor: Actor, term: str, definition: str, term_id: str | None = None) -> Term:
    """Record what a word points at; answers the open entry ``term_id`` when given."""
    require_may_write(actor, scope=SHARED, what="Defining a term (the glossary is shared)")
    text = checked_text(definition, "definition", DEFINITION_LIMIT, required=True)
    word = checked_text(term, "term", TERM_LIMIT, required=True)
    if term_id:
        entry = locked_term(actor, term_id)
        if entry.key != word.lower():
            raise InvalidArgument(f"{entry.public_id} is the entry for {entry.term!r}, not {word!r}.")
    else:
        entry = Term.objects.select_for_update().filter(org=actor.org, key=word.lower()).first() or Term(
            org=actor.org, term=word, key=word.lower()
        )
    entry.definition, entry.state = text, Term.State.DEFINED
    entry.defined_by, entry.defined_at = actor.user, timezone.now()
    _settle_proposal(entry)
    entry.save()
    entry.memory = _remember(actor, entry, text)
    entry.save(update_fields=["memory"])
    record_audit(actor=actor, action="term.defined", target=entry.public_id, details={"definition": text})
    return entry


@transaction.atomic
def update_term(
    *, actor: Actor, term_id: str, definition: str | None = None, state: str | None = None, note: str | None = None
) -> Term:
    """Correct or widen a definition (it replaces the old memory), dismiss the word for good, or
    reopen it (the definition and its memory are withdrawn)."""
    require_may_write(actor, scope=SHARED, what="Changing a term (the glossary is shared)")
    entry = locked_term(actor, term_id)
    reason = checked_text(note, "note", NOTE_LIMIT)
    chosen = one_of(state, "state", UPDATE_STATES, "defined") if state is not None else None
    if definition is None and chosen is None:
        raise InvalidArgument("Pass a definition, or a state: dismissed or open.")
    if definition is not None and chosen in ("dismissed", "open"):
        raise InvalidArgument(f"A definition and state {chosen} contradict each other; pass one of them.")
    if definition is not None or chosen == "defined":
        text = checked_text(
            definition if definition is not None else entry.definition, "definition", DEFINITION_LIMIT, required=True
        )
        entry.definition, entry.state = text, Term.State.DEFINED
        entry.defined_by, entry.defined_at = actor.user, timezone.now()
        _settle_proposal(entry)
        entry.memory = _remember(actor, entry, text)
    else:
        _withdraw(actor, entry)
        entry.state, entry.definition = chosen or Term.State.OPEN, ""
        entry.defined_by = entry.defined_at = None
    if reason:
        entry.note = reason
    entry.save()
    record_audit(
        actor=actor,
        action="term.updated",
        target=entry.public_id,
        details={"state": entry.state, "definition": entry.definition, "note": reason},
    )
    return entry


def definitions_in(*, actor: Actor, text: str, limit: int = 5) -> list[Term]:
    """Defined terms a question uses, for ask_company_memory's evidence (whole words only)."""
    words = " " + " ".join(text.lower().replace("?", " ").replace(",", " ").split()) + " "
    found = [t for t in Term.objects.filter(org=actor.org, state=Term.State.DEFINED) if f" {t.key} " in words]
    return sorted(found, key=lambda t: -len(t.key))[:limit]
