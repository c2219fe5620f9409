"""Learning-free reranking of the fused candidates, from what a passage is and where it sits.

- Neighbours: a discussion spans several turns, and an answer often sits in the turn after the
  question ("when do you fly?" / "Thursday"). A passage gains a share of the best score of the
  passages right before and after it: the next or previous passage of the same document, or,
  for documents that are one message each, the message before or after it in the same
  conversation (in time order, among messages of the same audience).
- Dates for "when": a question asking when favours turns of a conversation that say a time (a
  date, a weekday, "tomorrow", "next week", a clock time).
- A mixed pool: when written passages (pages, policies, mail, notes: passages without a speaker)
  are among the best candidates, the "when" bonus goes to any passage that says a time, a
  page's as well as a turn's, and neighbours lend less (``MIXED_NEIGHBOUR_SHARE``): in a pool of
  turns, the answer sits beside the question; beside a page, the turns around a turn that only
  shares the question's words mostly share them too. A pool of turns only is ranked as before.
  Copies of one text that all say the date are kept apart by MMR's copy rule
  (``passages.COPY``), not here.

Only candidates take part, and all of them are passages the caller may read.
"""

from __future__ import annotations

import re

from django.db import connections

from brain.infra.replicas import read_alias
from memory.documents.turns import message_beside_sql

# Each candidate's document is read through its key. "OFFSET 0" keeps the planner from turning
# this into a join that hashes every document of the database: for a hundred candidates that
# took 4 ms at 5,000 documents, and grows with the table (measured: docs/benchmarks-log.md). A
# message's neighbours are the messages before and after it in its conversation's order, among
# those of its own audience: never the next id, which another conversation's message, or one
# the caller may not read, can hold.
DOCUMENT_OF_PASSAGE = (
    "SELECT d.chunk_count, "  # noqa: S608 (fixed text)
    f"CASE WHEN d.chunk_count = 1 THEN {message_beside_sql('d', before=True)} END AS before_id, "
    f"CASE WHEN d.chunk_count = 1 THEN {message_beside_sql('d', before=False)} END AS after_id "
    "FROM memory_document d WHERE d.id = c.document_id OFFSET 0"
)
NEIGHBOUR_SHARE = 0.4  # measured: see docs/benchmarks-log.md
MIXED_NEIGHBOUR_SHARE = 0.2  # measured on the mixed set: see docs/benchmarks-log.md
MIXED_TOP = 20  # a pool is mixed when a written passage is among its best twenty candidates
WHEN_BONUS = 0.5  # measured on the chat dev set: see docs/benchmarks-log.md
WHEN_QUESTION = re.compile(
    r"^\s*((roughly|around|about|until|since|by|on|in|at) )?"
    r"(when|(what|which) (dates?|days?|time|month|year|week|weekend|night|evening|morning)|how long ago)\b",
    re.I,
)
SAYS_A_TIME = re.compile(
    r"\b(monday|tuesday|wednesday|thursday|friday|saturday|sunday|today|tonight|tomorrow|yesterday|"
    r"weekend|last (night|week|month|year)|next (week|month|year)|this (week|month|morning|afternoon|evening)|"
    r"(last|this|next) (summer|winter|spring|autumn|fall)|the other day|"
    r"january|february|march|april|may|june|july|august|september|october|november|december|"
    r"\d{1,2}(:\d{2})?\s*(am|pm)|\d{1,2}:\d{2}|\d{4}-\d{2}-\d{2}|\d{1,2}(st|nd|rd|th)|"
    r"in (a|\w+) (days?|weeks?|months?)|(\w+ )?(minutes?|hours?|days?|weeks?|months?|years?|while) ago|ages ago)\b",
    re.I,
)


def rerank(question: str, fused: dict[int, float]) -> dict[int, float]:
    when = WHEN_BONUS > 0 and bool(WHEN_QUESTION.search(question))
    if len(fused) < 2:
        return fused
    text = "c.text" if when else "''"  # the passages' text is only read for a "when" question
    with connections[read_alias()].cursor() as cursor:
        cursor.execute(
            f"SELECT c.id, c.document_id, c.ordinal, d.before_id, d.after_id, d.chunk_count, c.speaker, {text} "  # noqa: S608 (one of two fixed strings)
            f"FROM memory_chunk c CROSS JOIN LATERAL ({DOCUMENT_OF_PASSAGE}) d WHERE c.id = ANY(%s)",
            [list(fused)],
        )
        rows = cursor.fetchall()
    mixed = _mixed(fused, rows)
    share = MIXED_NEIGHBOUR_SHARE if mixed else NEIGHBOUR_SHARE
    scores = _with_neighbours(fused, rows, share) if share > 0 else dict(fused)
    if when:
        for cid, *_, speaker, text in rows:
            if (speaker or mixed) and SAYS_A_TIME.search(text):
                scores[cid] *= 1 + WHEN_BONUS
    return scores


def _mixed(fused: dict[int, float], rows: list[tuple]) -> bool:
    """Whether a written passage (not a turn of a conversation) is among the best candidates."""
    best = set(sorted(fused, key=lambda cid: -fused[cid])[:MIXED_TOP])
    return any(cid in best and not speaker for cid, *_, speaker, _text in rows)


def _with_neighbours(fused: dict[int, float], rows: list[tuple], share: float) -> dict[int, float]:
    at: dict[tuple[int, int], int] = {}
    message: dict[int, int] = {}  # a one-message document's passage
    for cid, document, ordinal, _before, _after, count, *_ in rows:
        at[(document, ordinal)] = cid
        if count == 1:
            message[document] = cid
    boosted = dict(fused)
    for cid, document, ordinal, before, after, count, *_ in rows:
        near = [at.get((document, ordinal - 1)), at.get((document, ordinal + 1))]
        if count == 1:
            near += [message.get(before or 0), message.get(after or 0)]
        lent = [fused[n] for n in near if n is not None and n != cid]
        if lent:
            boosted[cid] = fused[cid] + share * max(lent)
    return boosted
