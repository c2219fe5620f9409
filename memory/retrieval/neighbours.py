"""Turns next to each other in a conversation lend each other relevance.

A discussion spans several turns, and an answer often sits in the turn after the question
("when do you fly?" / "Thursday"). Among the fused candidates, a passage gains a share of the
best score of the passages right before and after it: the next or previous passage of the same
document, or, for documents that are one message each, the message before or after it in the
same conversation. Only candidates lend, so nothing the caller cannot see takes part.
"""

from __future__ import annotations

from django.db import connection

NEIGHBOUR_SHARE = 0.4  # measured: see docs/benchmarks.md


def with_neighbours(fused: dict[int, float], share: float | None = None) -> dict[int, float]:
    share = NEIGHBOUR_SHARE if share is None else share
    if share <= 0 or len(fused) < 2:
        return fused
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.id, c.document_id, c.ordinal, d.conversation, d.chunk_count FROM memory_chunk c "
            "JOIN memory_document d ON d.id = c.document_id WHERE c.id = ANY(%s)",
            [list(fused)],
        )
        rows = cursor.fetchall()
    at: dict[tuple[object, ...], int] = {}
    for cid, document, ordinal, conversation, count in rows:
        at[("doc", document, ordinal)] = cid
        if conversation and count == 1:
            at[("conv", conversation, document)] = cid
    boosted = dict(fused)
    for cid, document, ordinal, conversation, count in rows:
        near = [at.get(("doc", document, ordinal - 1)), at.get(("doc", document, ordinal + 1))]
        if conversation and count == 1:
            near += [at.get(("conv", conversation, document - 1)), at.get(("conv", conversation, document + 1))]
        lent = [fused[n] for n in near if n is not None and n != cid]
        if lent:
            boosted[cid] = fused[cid] + share * max(lent)
    return boosted
