"""One promise said twice is one commitment: the same owner undertaking the same thing by the same
(or a compatible) day, read from a mail and again from a chat or a call, is kept once with each
place it was said as a source.

Only a commitment with the same audience as the new reading takes it as a source (same category,
scope and owner as the document it was read from), so a reader of the commitment may read every
source of it, and nobody learns of a restricted or personal promise through a shared twin: a
promise said in places read by different people stays one entry per audience.
"""

from __future__ import annotations

import re
from datetime import date, timedelta

from rapidfuzz import fuzz

from memory.access import same_audience
from memory.extraction.lines import word_set
from registers.models import Commitment, CommitmentSource

# Words that say nothing about what was undertaken: the owner's name aside, these are dropped before
# two undertakings are compared ("will send you the revised quote on Monday").
FILLER = word_set(
    """
    a an the to of for and or in on at by with will would shall should can could i we you he she
    they it this that their them his her our my your be is are was were have has had do does did
    next week month monday tuesday wednesday thursday friday saturday sunday tomorrow today
    tonight end before after then also both up out over back again once soon later first thing
    morning afternoon evening eod cob asap all about from into as so just still
    """
)
# Tuned on the labelled promises of eval/extraction: the same promise said in a mail, a chat and a call
# scores 80 to 100 on content words ("share depot address lists" / "send depot address lists" 90), two
# different undertakings of one owner 45 at most ("send board pack directors" / "confirm details auditors").
ALIKE = 60
# Deadlines of one promise said in different places differ by a few days ("by Monday" in the call,
# "by Friday" in the mail); a weekly chore promised again is a week apart, and stays two.
DUE_SLACK = timedelta(days=5)
# Without deadlines, a promise said again within this time is the same one.
SAID_WITHIN = timedelta(days=21)
DAYS = re.compile(r"\b\d{1,2}(?:st|nd|rd|th)?\b|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b")


def content_words(what: str, owner: str) -> str:
    """The words of an undertaking that say what it is: its owner's name, filler and dates left out."""
    own = {w.lower() for w in re.findall(r"\w+", owner)}
    text = DAYS.sub(" ", what.lower())
    return " ".join(w for w in re.findall(r"[^\W\d_][\w'-]*", text) if w not in FILLER and w not in own)


def alike(first: str, second: str, owner: str) -> float:
    """How alike two undertakings of one owner are, 0 to 100."""
    a, b = content_words(first, owner), content_words(second, owner)
    if not a or not b or (min(len(a.split()), len(b.split())) < 2 and a != b):
        return 0.0  # one word ("send") is in too many undertakings to say two are one
    return float(fuzz.token_set_ratio(a, b))


def compatible_due(first: date | None, second: date | None) -> bool:
    return first is None or second is None or abs(first - second) <= DUE_SLACK


def is_twin(known: Commitment, reading: Commitment) -> bool:
    """Whether ``reading`` (not stored yet) repeats the stored promise ``known``."""
    if " ".join(known.owner_name.casefold().split()) != " ".join(reading.owner_name.casefold().split()):
        return False
    if (known.category_id, known.scope, known.owner_id) != (reading.category_id, reading.scope, reading.owner_id):
        return False
    if not compatible_due(known.due_on, reading.due_on):
        return False
    if known.due_on is None and reading.due_on is None and abs(known.promised_on - reading.promised_on) > SAID_WITHIN:
        return False
    return alike(known.what, reading.what, reading.owner_name) >= ALIKE


def find_twin(reading: Commitment, *, also: list[Commitment]) -> Commitment | None:
    """The commitment ``reading`` repeats: among those read from other documents (``also``: the ones
    stored in this pass), the most alike."""
    near = Commitment.objects.filter(
        same_audience(reading.scope, reading.owner_id, reading.category_id),
        org_id=reading.org_id,
        owner_name__iexact=reading.owner_name.strip(),
    ).exclude(document_id=reading.document_id or 0)
    if reading.due_on is not None:
        near = near.exclude(due_on__lt=reading.due_on - DUE_SLACK).exclude(due_on__gt=reading.due_on + DUE_SLACK)
    candidates = [c for c in [*near.order_by("pk")[:200], *also] if c.document_id != reading.document_id]
    twins = [c for c in candidates if is_twin(c, reading)]
    return max(twins, key=lambda c: alike(c.what, reading.what, reading.owner_name), default=None)


def add_source(commitment: Commitment, reading: Commitment) -> None:
    """Keep ``reading`` as a further source of ``commitment``; a deadline it gives fills one the
    commitment lacks, and an earlier day it was said on becomes the day it was promised."""
    CommitmentSource.objects.bulk_create(
        [
            CommitmentSource(
                org_id=commitment.org_id,
                commitment=commitment,
                document_id=reading.document_id or 0,
                chunk_id=reading.chunk_id,
                what=reading.what,
                due_on=reading.due_on,
                promised_on=reading.promised_on,
                quote=reading.quote,
                fingerprint=reading.fingerprint,
            )
        ],
        ignore_conflicts=True,
    )
    if commitment.due_on is None and reading.due_on is not None:
        Commitment.objects.filter(pk=commitment.pk, due_on__isnull=True).update(due_on=reading.due_on)
        commitment.due_on = reading.due_on
    if reading.promised_on < commitment.promised_on:
        # Read later but said earlier (a mail loaded after the chat): it was promised from then on.
        Commitment.objects.filter(pk=commitment.pk).update(promised_on=reading.promised_on)
        commitment.promised_on = reading.promised_on
