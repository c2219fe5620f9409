"""Passages as they are indexed: for a turn of a conversation, who spoke and when, and the turn
before it.

A turn is returned and cited as it is, but embedded with a header ("Priya Shah (May 2026)")
and the turn before it: "yes, Friday" means little alone. Measured on the chat dev set
(docs/benchmarks-log.md): context for every turn beat context for short turns only, and context
before the turn beat context after it. The turn before comes from the same document or, for a
document that is one message, from the message before it in the same conversation, and only
when that message has the same audience (category and scope, and owner when personal): a vector
must not depend on what some of its readers cannot see. Passages of pages (no speaker) are
embedded with their title and heading, as before."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, time

from django.db.models import Q, QuerySet

from memory.access import (
    current,
    current_sql,
    outside_trash,
    outside_trash_sql,
    same_audience_as,
    same_audience_sql,
    table_alias,
)
from memory.documents.chunking import TURN, ChunkDraft
from memory.models import Chunk, Document

CONTEXT_CHARS = 300  # of the turn before: with a turn of up to 900, inside the model's window
_CLOCK = re.compile(r"^(\d{1,2}):(\d{2})(?::\d{2})?$")


@dataclass(frozen=True)
class Turn:
    """What a passage is indexed with besides its text."""

    speaker: str
    said_at: datetime | None
    body: str  # the text without the speaker's name in front


def indexed_turn(document: Document, draft: ChunkDraft) -> Turn:
    speaker = (draft.speaker or document.speaker)[:200]
    body = TURN.sub("", draft.text, count=1) if draft.speaker else draft.text
    return Turn(speaker, _said_at(document, draft.said), body.strip() or draft.text)


def _said_at(document: Document, said: str) -> datetime | None:
    """The turn's own time on the document's day when one is written beside the name, else the
    document's time."""
    moment = document.occurred_at
    clock = _CLOCK.match(said)
    if moment is None or clock is None or int(clock[1]) > 23 or int(clock[2]) > 59:
        return moment
    day = moment.astimezone(UTC).date()
    return datetime.combine(day, time(int(clock[1]), int(clock[2])), tzinfo=UTC)


def header(turn: Turn) -> str:
    """Who and when, short: a full date in every vector pulls them together and costs recall."""
    when = f"({turn.said_at:%B %Y})" if turn.said_at else ""
    return " ".join(part for part in (turn.speaker, when) if part)


def embedded_texts(document: Document, drafts: list[ChunkDraft]) -> list[str]:
    """The text each passage's vector is computed from."""
    return _texts(document, [(draft.heading, indexed_turn(document, draft)) for draft in drafts])


def stored_texts(document: Document, chunks: list[Chunk]) -> list[str]:
    """The same texts for stored passages (in order), for re-embedding them."""
    turns = [(chunk.heading, Turn(chunk.speaker, chunk.said_at, spoken_text(chunk))) for chunk in chunks]
    return _texts(document, turns)


def spoken_text(chunk: Chunk) -> str:
    """What a stored passage says without its "Name (time):" opening when it is a turn."""
    opening = TURN.match(chunk.text) if chunk.speaker else None
    body = chunk.text[opening.end() :].strip() if opening else chunk.text
    return body or chunk.text


def _texts(document: Document, turns: list[tuple[str, Turn]]) -> list[str]:
    before = previous_message(document) if turns and turns[0][1].speaker else ""
    texts = []
    for index, (heading, turn) in enumerate(turns):
        if index > 0:
            earlier = turns[index - 1][1]
            before = f"{earlier.speaker}: {earlier.body}" if earlier.speaker else earlier.body
        if turn.speaker:  # a turn of a conversation
            context = f"(after: {before[-CONTEXT_CHARS:]})" if before else ""
            lines = [document.title, heading, context, header(turn), turn.body]
        else:  # a passage of a page: its title and heading say enough
            lines = [document.title, heading, turn.body]
        texts.append("\n".join(line for line in lines if line))
    return texts


def previous_message(document: Document) -> str:
    """The message before a one-message document in its conversation, if it has the same audience."""
    found = _around(document, same_audience=True, before=True).values_list("speaker", "content").first()
    if found is None:
        return ""
    speaker, content = found
    return f"{speaker}: {content}" if speaker else content


def previous_turn(document: Document) -> tuple[str, str] | None:
    """(speaker, text) of the message before a one-message document in its conversation, if it has
    the same audience: what a reply ("Sure, I'll have them done by Friday") answers."""
    found = _around(document, same_audience=True, before=True).values_list("speaker", "content").first()
    return (found[0], found[1]) if found is not None else None


def next_message_id(document: Document) -> int | None:
    """The message after a one-message document in its conversation, whoever may read it: the one
    whose vector may have been computed after this one."""
    return _around(document, same_audience=False, before=False).values_list("pk", flat=True).first()


def _around(document: Document, *, same_audience: bool, before: bool) -> QuerySet[Document]:
    # The order of a conversation; ``message_beside_sql`` is the same order for many at once.
    if not document.conversation or not document.speaker:
        return Document.objects.none()
    same = Document.objects.filter(
        current(), outside_trash(), org_id=document.org_id, conversation=document.conversation
    ).exclude(pk__in=[document.pk, document.previous_id or 0])  # not its own earlier version
    if same_audience:  # whoever may read the one may read the other: a shared message's writer does not matter
        same = same.filter(same_audience_as(document))
    # Messages of one session may share a time: then the order they were saved in decides.
    at, pk = document.occurred_at, document.pk
    if before:
        if at is None:
            return same.filter(occurred_at__isnull=True, pk__lt=pk).order_by("-pk")
        return same.filter(Q(occurred_at__lt=at) | Q(occurred_at=at, pk__lt=pk)).order_by("-occurred_at", "-pk")
    if at is None:
        return same.filter(occurred_at__isnull=True, pk__gt=pk).order_by("pk")
    return same.filter(Q(occurred_at__gt=at) | Q(occurred_at=at, pk__gt=pk)).order_by("occurred_at", "pk")


def chunk_fields(document: Document, draft: ChunkDraft) -> dict[str, object]:
    """The passage's own columns for speaker and time."""
    turn = indexed_turn(document, draft)
    return {"speaker": turn.speaker, "said_at": turn.said_at}


def message_beside_sql(document: str, *, before: bool) -> str:
    """A subquery: the id of the message right before (or after) the one-message document
    aliased ``document`` in its conversation, among the messages of the same audience, in the
    order ``_around`` walks: by time, then by the order saved in, current versions only. One
    index probe (``document_conversation``) whichever way the time is set."""
    d, op, order = table_alias(document), "<" if before else ">", "DESC" if before else "ASC"
    same = (
        # "p.conversation <> ''" lets the planner use the partial index, which a correlated value alone does not.
        f"SELECT p.id FROM memory_document p WHERE p.org_id = {d}.org_id AND p.conversation <> '' "  # noqa: S608 (an alias)
        f"AND p.conversation = {d}.conversation "
        f"AND {current_sql('p')} AND {outside_trash_sql('p')} AND p.id <> coalesce({d}.previous_id, 0) "
        f"AND {same_audience_sql(d, 'p')}"
    )
    untimed = f"{same} AND p.occurred_at IS NULL AND p.id {op} {d}.id ORDER BY p.id {order} LIMIT 1"
    timed = (
        f"{same} AND (p.occurred_at, p.id) {op} ({d}.occurred_at, {d}.id) "
        f"ORDER BY p.occurred_at {order}, p.id {order} LIMIT 1"
    )
    return (
        f"CASE WHEN {d}.conversation = '' OR {d}.speaker = '' THEN NULL "
        f"WHEN {d}.occurred_at IS NULL THEN ({untimed}) ELSE ({timed}) END"
    )
