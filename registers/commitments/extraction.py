"""Deterministic commitment extraction: who undertook what, by when, from speaker turns and notes.

Pure: no database, no network. Sentences with a promise cue are parsed with the spaCy model the
memory extraction loads; a sentence yields a draft only when a named owner undertakes an action
(first person resolves to the speaker, "we" to a team only when the sentence names it), and nothing
in it hedges, asks, sets a condition, reports a decision or negates. Deadlines are read only from
the promise itself, against the utterance's date.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from memory.extraction import LATER_EVENT, nlp, plain_kind
from registers.commitments.extraction_dates import due_date, earlier_date
from registers.commitments.extraction_phrasing import Promise, find_promises
from registers.commitments.extraction_rules import CUE_RE, SENTENCE_END_RE, clean, rejection

if TYPE_CHECKING:
    from spacy.tokens import Doc

MAX_WHAT = 300
EARLIER = 6  # sentences said before a promise that may name its deadline
BATCH = 64


@dataclass(frozen=True)
class Utterance:
    speaker: str  # who said it, '' when unknown (a page of meeting notes)
    text: str  # one turn or one passage
    said_on: datetime.date  # the date relative dates resolve against (the document's date)
    ref: int | None = None  # opaque id passed through


@dataclass(frozen=True)
class CommitmentDraft:
    owner: str  # the person or team who undertook it, as the text names them
    what: str  # one line, third person: "Priya will send the revised quote to BigCo"
    due_on: datetime.date | None  # only when the text gives a deadline
    promised_on: datetime.date  # the utterance's said_on
    quote: str  # the sentence it came from, verbatim
    ref: int | None


@dataclass(frozen=True)
class _Candidate:
    utterance: Utterance
    quote: str
    cleaned: str


# An action item in notes: "- Samuel Osei: renew the staging certificates by Friday."
_NAMED_ACTION = re.compile(r"^\s*(?:[-*•]\s*)?(?P<owner>[A-Z][\w'-]+(?: [A-Z][\w'-]+){1,2}):\s+(?P<rest>[a-z]+\b.*)$")


def _candidates(utterances: Sequence[Utterance]) -> Iterator[_Candidate]:
    for utterance in utterances:
        for sentence in SENTENCE_END_RE.split(utterance.text):
            quote = sentence.strip()
            action = _NAMED_ACTION.match(quote) if not utterance.speaker.strip() else None
            if action is not None:  # read as "Samuel Osei will renew ..."; a line that is no action gives nothing
                cleaned = clean(f"{action['owner']} will {action['rest']}")
                if cleaned and rejection(cleaned) is None:
                    yield _Candidate(utterance, quote, cleaned)
                continue
            if not quote or not CUE_RE.search(quote):
                continue
            cleaned = clean(quote)
            if cleaned and CUE_RE.search(cleaned) and rejection(cleaned) is None:
                yield _Candidate(utterance, quote, cleaned)


def _draft(candidate: _Candidate, doc: Doc, promise: Promise) -> CommitmentDraft:
    utterance = candidate.utterance
    sent = doc[:]
    due = due_date(sent, list(doc.ents), utterance.said_on, promise.start_char, promise.end_char)
    what = " ".join(f"{promise.owner} will {promise.predicate}".split())
    return CommitmentDraft(
        owner=promise.owner,
        what=what if len(what) <= MAX_WHAT else what[: MAX_WHAT - 1].rsplit(" ", 1)[0] + "…",
        due_on=due,
        promised_on=utterance.said_on,
        quote=candidate.quote,
        ref=utterance.ref,
    )


# Owners whose undertaking is no person's promise.
NOT_PEOPLE = ("organisation", "product", "system", "place")


def extract_commitments(utterances: Sequence[Utterance], *, teams: Collection[str] = ()) -> list[CommitmentDraft]:
    """The promises made in ``utterances``, in order; ``teams`` are the team names "we" may resolve to."""
    team_names = tuple(t.strip() for t in teams if t.strip())
    candidates = list(_candidates(utterances))
    drafts: list[CommitmentDraft] = []
    seen: set[tuple[int | None, str, str]] = set()
    docs = nlp().pipe((c.cleaned for c in candidates), batch_size=BATCH)
    for candidate, doc in zip(candidates, docs, strict=True):
        for promise in find_promises(doc, speaker=candidate.utterance.speaker.strip(), teams=team_names):
            if rejection(candidate.cleaned, upto=promise.end_char) is not None:
                continue
            draft = _draft(candidate, doc, promise)
            if _BACK_REFERENCE.search(promise.predicate) or _POSSESSIVE.search(promise.predicate):
                draft = _as_asked(draft, candidate, utterances, promise.predicate)
            if draft.due_on is None:
                draft = _due_by_what_was_said_before(draft, candidate, utterances)
            if plain_kind(draft.owner) in NOT_PEOPLE:
                continue  # "Okapi Print will print the invoices": a company's plan, no person's promise
            key = (draft.ref, draft.owner.casefold(), draft.what.casefold())
            if key not in seen:  # a turn that repeats itself promises once
                seen.add(key)
                drafts.append(draft)
    return drafts


# "I'll send it", "I'll have them done": the undertaking names what was asked only by a pronoun. A word
# after it that reads as a noun ("this morning", "those reports") makes it a determiner, not the thing.
_BACK_REFERENCE = re.compile(r"\b(?i:it|that|this|them|those|these)\b(?!\s+[a-z]+(?:s|ing|ion)\b)")
# "I'll collect their feedback" after "can you get us feedback...?": the thing asked for, by a pronoun.
_POSSESSIVE = re.compile(r"\b(?i:their|its)\s+(?P<thing>[\w-]+)")
# "Omar, can you get us feedback from the Lyon team?", "could you send me the deck, Priya?"
_REQUEST = re.compile(
    r"(?:^|[.!?]\s+)(?:@?(?P<name>[A-Z][\w'-]+)\s*,\s*)?(?i:can|could|would|will)\s+you\s+(?:please\s+)?"
    r"(?P<asked>[^?.!]+?)(?:\s*,\s*@?(?P<after>[A-Z][\w'-]+))?\s*\?"
)


def _as_asked(
    draft: CommitmentDraft, candidate: _Candidate, utterances: Sequence[Utterance], predicate: str
) -> CommitmentDraft:
    """A yes to a request made of the owner in the turn before ("Omar, can you get us feedback from the
    Lyon team?" - "Yes, I'll collect their feedback by next Wednesday") promises what was asked."""
    at = next((i for i, u in enumerate(utterances) if u is candidate.utterance), 0)
    if at == 0 or not utterances[at - 1].speaker.strip() or utterances[at - 1].speaker == candidate.utterance.speaker:
        return draft
    asker = utterances[at - 1].speaker.strip()
    first = draft.owner.split()[0].casefold()
    for request in reversed(list(_REQUEST.finditer(utterances[at - 1].text))):
        called = (request["name"] or request["after"] or "").casefold()
        if not (called == first or (len(called) >= 3 and first.startswith(called))):  # "Sam" for Samuel
            continue
        thing = _POSSESSIVE.search(predicate)
        other = thing is not None and thing["thing"].casefold() not in request["asked"].casefold()
        if not _BACK_REFERENCE.search(predicate) and other:
            return draft  # "I'll call their account manager" answers "can you push back?" with more than asked
        asked = re.sub(r"^(\S+)\s+us\s+", r"\1 ", request["asked"].strip())  # "get us feedback": get feedback
        asked = re.sub(r"\bme\b", asker, re.sub(r"\bmy\b", f"{asker}'s", asked))
        return replace(draft, what=f"{draft.owner} will {asked}"[:MAX_WHAT])
    return draft


def _due_by_what_was_said_before(
    draft: CommitmentDraft, candidate: _Candidate, utterances: Sequence[Utterance]
) -> CommitmentDraft:
    """A deadline named by something said earlier in the same conversation or notes ("The QBR is on
    11 December. I'll prepare the usage report before the QBR", "...the 11th. I'll have it before
    then"): the date of the latest earlier sentence naming it (for "then", giving any date)."""
    named = LATER_EVENT.search(candidate.quote)
    if named is None:
        return draft
    before: list[str] = []
    for utterance in utterances:
        sentences = [s.strip() for s in SENTENCE_END_RE.split(utterance.text) if s.strip()]
        if utterance is candidate.utterance:
            before += sentences[: next((i for i, s in enumerate(sentences) if candidate.quote in s), 0)]
            break
        before += sentences
    event = named["event"]
    if event:
        before = [s for s in before if re.search(rf"\b{re.escape(event)}\b", s)]
    due = earlier_date([doc[:] for doc in nlp().pipe(before[-EARLIER:])], draft.promised_on) if before else None
    return replace(draft, due_on=due) if due else draft
