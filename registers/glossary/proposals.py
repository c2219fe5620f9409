"""The glossary's waiting room, as people use it on the registers page: the candidate terms a
member may read, a member's proposed definition (with the passage it rests on, if they cite one),
and an admin's accepting or rejecting it.

A candidate is shown to a member only with the uses they may read now (``memory.access.readable``):
candidates are read from text every member may read, but a passage may since have moved to a
restricted category, become personal or been deleted, and a candidate none of whose uses the
member may read is not shown to them, unless a member proposed it. A proposal is the proposer's
words for the shared glossary; the passage it cites is shown only to those who may read it.
Accepting goes through ``define_term``, so the definition becomes the same shared memory a tool's
definition does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone

from brain.core.actors import Actor
from brain.core.audit import record_audit
from brain.core.errors import InvalidArgument, NotFound, PermissionDenied
from brain.core.inputs import checked_text
from brain.core.personal import SHARED, require_may_write
from memory.access import current, readable
from memory.models import Chunk
from registers.citations import Cited, Reach, document_titles, passage_url, term_examples
from registers.glossary.services import DEFINITION_LIMIT, NOTE_LIMIT, TERM_LIMIT, define_term, locked_term, update_term
from registers.models import Term

BATCH = 200
# A passage as people cite it: its link ("/memory/documents/12/#passage-345"), its id or its number.
PASSAGE_LINK = re.compile(r"(?:#passage-|\bchunk_)(\d{1,18})\b|^\s*(\d{1,18})\s*$")


@dataclass(frozen=True)
class Candidate:
    """An open glossary entry as one reader sees it."""

    term: Term
    uses: list[Cited]
    proposal: Cited | None  # the proposed definition, with the passage it cites when the reader may read it
    proposed_by: str


def list_candidates(*, actor: Actor, limit: int = 100) -> list[Candidate]:
    """Open entries the actor may see, most used first: those with a use they may read, and those a
    member proposed."""
    found: list[Candidate] = []
    rows = Term.objects.filter(org=actor.org, state=Term.State.OPEN).select_related("proposed_by")
    rows = rows.order_by("-uses", "key")
    start = 0
    while len(found) < limit and (batch := list(rows[start : start + BATCH])):
        start += BATCH
        cited = [e.get("passage") for entry in batch for e in entry.examples]
        reach = Reach.of(actor, passages=[*cited, *(entry.proposal_passage_id for entry in batch)], documents=[])
        titles = document_titles(reach)
        for entry in batch:
            candidate = _candidate(reach, titles, entry)
            if candidate is not None:
                found.append(candidate)
    return found[:limit]


def _candidate(reach: Reach, titles: dict[int, str], entry: Term) -> Candidate | None:
    uses = term_examples(reach, list(entry.examples), titles)
    if not uses and not entry.proposal:
        return None  # derived only from text this reader may not read (now)
    proposal = None
    if entry.proposal:
        passage = entry.proposal_passage_id
        url = passage_url(reach.actor, reach.passages[passage], passage) if passage in reach.passages else ""
        proposal = Cited(entry.proposal, "", entry.proposed_at.date().isoformat() if entry.proposed_at else "", url)
    who = entry.proposed_by.get_full_name() or entry.proposed_by.get_username() if entry.proposed_by else ""
    return Candidate(term=entry, uses=uses, proposal=proposal, proposed_by=who)


def cited_passage(actor: Actor, cited: str | None) -> Chunk | None:
    """The passage a person cites, by its link or number, if they may read it; NotFound otherwise."""
    text = (cited or "").strip()
    if not text:
        return None
    match = PASSAGE_LINK.search(text)
    if match is None:
        raise InvalidArgument("Cite a passage by its link, as a document page or the search page gives it.")
    number = int(match.group(1) or match.group(2))
    passage = Chunk.objects.filter(readable(actor), current(), pk=number).first()
    if passage is None:
        raise NotFound("No passage that you can read at that link.")
    return passage


@transaction.atomic
def propose_term(*, actor: Actor, term: str, definition: str, passage: str | None = None) -> Term:
    """A member's definition of a word, waiting for an admin: on the open entry for the word, or on
    a new one. A later proposal replaces an earlier one; a defined or dismissed word is refused."""
    require_may_write(actor, scope=SHARED, what="Proposing a term (the glossary is shared)")
    word = checked_text(term, "term", TERM_LIMIT, required=True)
    text = checked_text(definition, "definition", DEFINITION_LIMIT, required=True)
    cited = cited_passage(actor, passage)
    entry = Term.objects.select_for_update().filter(org=actor.org, key=word.lower()).first()
    if entry is not None and entry.state == Term.State.DEFINED:
        raise InvalidArgument(f"{entry.term} is already defined: {entry.definition}")
    if entry is not None and entry.state == Term.State.DISMISSED:
        raise InvalidArgument(f"{entry.term} was taken out of the glossary by an admin; ask them about it.")
    entry = entry or Term(org=actor.org, term=word, key=word.lower())
    entry.proposal, entry.proposal_passage = text, cited
    entry.proposed_by, entry.proposed_at = actor.user, timezone.now()
    entry.save()
    record_audit(
        actor=actor,
        action="term.proposed",
        target=entry.public_id,
        details={"definition": text, "passage": cited.public_id if cited else None},
    )
    return entry


def _require_admin(actor: Actor, what: str) -> None:
    if not actor.is_admin:
        raise PermissionDenied(f"Only an admin may {what}; propose a definition instead.")


@transaction.atomic
def accept_term(*, actor: Actor, term_id: str, definition: str | None = None) -> Term:
    """An admin defines an open entry: with the definition they give, else the member's proposal,
    else the suggestion found in the text."""
    _require_admin(actor, "accept a term")
    entry = locked_term(actor, term_id)
    if entry.state != Term.State.OPEN:
        raise InvalidArgument(f"{entry.term} is {entry.state}, not waiting for a definition.")
    chosen = (definition or "").strip() or entry.proposal or entry.suggestion
    if not chosen:
        raise InvalidArgument(f"Write what {entry.term} means here: nobody proposed a definition yet.")
    proposer = entry.proposed_by_id
    defined = define_term(actor=actor, term=entry.term, definition=chosen, term_id=entry.public_id)
    record_audit(actor=actor, action="term.accepted", target=defined.public_id, details={"proposed_by": proposer})
    return defined


@transaction.atomic
def reject_term(*, actor: Actor, term_id: str, note: str | None = None) -> Term | None:
    """An admin turns down what waits on an open entry: a member's proposal is withdrawn (the word
    stays a candidate when the text uses it, and goes when only the proposal brought it); a
    candidate without a proposal is dismissed for good. Returns the entry, or None when it went."""
    _require_admin(actor, "reject a term")
    entry = locked_term(actor, term_id)
    reason = checked_text(note, "note", NOTE_LIMIT)
    if entry.state != Term.State.OPEN:
        raise InvalidArgument(f"{entry.term} is {entry.state}, not waiting for a definition.")
    if not entry.proposal:
        return update_term(actor=actor, term_id=entry.public_id, state="dismissed", note=reason or None)
    details = {"proposal": entry.proposal, "proposed_by": entry.proposed_by_id, "note": reason}
    record_audit(actor=actor, action="term.proposal_rejected", target=entry.public_id, details=details)
    if not entry.uses and not entry.examples:
        entry.delete()
        return None
    entry.proposal, entry.proposal_passage, entry.proposed_by, entry.proposed_at = "", None, None, None
    if reason:
        entry.note = reason
    entry.save()
    return entry
