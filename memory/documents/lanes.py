"""Which document a worker ingests next: two lanes, and organisations taking turns in each.

A document longer than ``BULK_CHARS`` is queued in the bulk lane (queue ``ingest_bulk``), served by
workers of its own, so a few long documents never hold the lane where short ones pass (queue
``ingest``). Within a lane, a message is a turn, not a promise about one document: the worker
takes the queued document of the organisation with the fewest documents being ingested now,
then the one served least recently, then the one waiting longest; and that organisation's
oldest queued document. So one organisation's two thousand queued messages delay another's
note by at most one document per worker.

A message never promises its own document, so none is left without one: every queued document
had a message queued in its lane, and every message ingests one queued document of its lane while
any is left (``take_turn``), whichever document it was sent for. A message that finds its own
document taken, done or gone takes the lane's next one; one that keeps losing the race for the
next one passes its turn on (queues itself again) instead of ending with nothing done. So there
are never fewer messages in a lane than documents queued in it.
"""

from __future__ import annotations

from collections.abc import Callable

from django.db import connection

from memory.limits import BULK_CHARS

SHORT_QUEUE, BULK_QUEUE = "ingest", "ingest_bulk"
LANES = (SHORT_QUEUE, BULK_QUEUE)
SKIPPED, PASSED_ON = "skipped", "passed on"
TURNS = 20  # items one message tries, each taken by another worker first, before it passes its turn on


def take_turn(
    *,
    recover: Callable[[], str] | None,
    pick: Callable[[], int | None],
    run: Callable[[int], str],
    pass_on: Callable[[], None],
) -> str:
    """What one lane message does; returns what happened (``SKIPPED`` when the lane was empty).

    ``recover`` is its own item when only this message may take it (redelivered to this task, or its
    worker died past the lease), ``pick`` the lane's next queued item by turns, ``run`` processes one
    (``SKIPPED`` when another worker took it first or it must wait), ``pass_on`` queues this message
    again. Each ``SKIPPED`` from ``run`` means the item left the queue, so the loop ends when the
    lane is empty or an item is won; after ``TURNS`` lost races the turn goes back to the lane.
    """
    if recover is not None and (outcome := recover()) != SKIPPED:
        return outcome
    for _ in range(TURNS):
        chosen = pick()
        if chosen is None:
            return SKIPPED
        if (outcome := run(chosen)) != SKIPPED:
            return outcome
    pass_on()
    return PASSED_ON


def lane_of(length: int) -> str:
    return BULK_QUEUE if length > BULK_CHARS else SHORT_QUEUE


def _in_lane(lane: str, alias: str = "d") -> str:
    return f"{alias}.length > %s" if lane == BULK_QUEUE else f"{alias}.length <= %s"


def next_document(*, lane: str) -> int | None:
    """The id of the queued document the lane's next free worker should take, or None."""
    org_id = _next_organisation(lane)
    if org_id is None:
        return None
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT d.id FROM memory_document d WHERE d.org_id = %s AND d.status = 'queued' AND {_in_lane(lane)} "  # noqa: S608 -- one of two fixed texts
            "ORDER BY d.id LIMIT 1",
            [org_id, BULK_CHARS],
        )
        row = cursor.fetchone()
    return int(row[0]) if row else None


def _next_organisation(lane: str) -> int | None:
    # The organisations with work queued in the lane (the partial index document_queued), each
    # ranked by what it has in flight and when it was last served (document_org_claimed).
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            WITH waiting AS (
                SELECT d.org_id, min(d.id) AS oldest FROM memory_document d
                WHERE d.status = 'queued' AND {_in_lane(lane)} GROUP BY d.org_id
            )
            SELECT w.org_id FROM waiting w
            ORDER BY
                (SELECT count(*) FROM memory_document p
                 WHERE p.org_id = w.org_id AND p.status = 'processing' AND {_in_lane(lane, "p")}),
                (SELECT max(s.claimed_at) FROM memory_document s WHERE s.org_id = w.org_id) NULLS FIRST,
                w.oldest
            LIMIT 1
            """,  # noqa: S608 -- the lane rule is one of two fixed texts
            [BULK_CHARS, BULK_CHARS],
        )
        row = cursor.fetchone()
    return int(row[0]) if row else None
