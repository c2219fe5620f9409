"""Which document a worker ingests next: two lanes, and organisations taking turns in each.

A document longer than ``BULK_CHARS`` is queued in the bulk lane (queue ``ingest_bulk``), served by
workers of its own, so a few long documents never hold the lane where short ones pass (queue
``ingest``). Within a lane, a message is a turn, not a promise about one document: the worker
takes the queued document of the organisation with the fewest documents being ingested now,
then the one served least recently, then the one waiting longest; and that organisation's
oldest queued document. So one organisation's two thousand queued messages delay another's
note by at most one document per worker. Every queued document has a message of its own in its
lane, so taking another one's turn loses nothing: the later message takes what is left.
"""

from __future__ import annotations

from django.db import connection

from memory.limits import BULK_CHARS

SHORT_QUEUE, BULK_QUEUE = "ingest", "ingest_bulk"


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
