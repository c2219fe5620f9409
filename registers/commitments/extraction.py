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
from memory.extraction.lines import LABELS
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
    speaker: str  # who says it: the utterance's speaker, or a name an item of notes gives the line to
    owner: str = ""  # the owner an action item names, as written ("@sam", "Samuel Osei")
    topic: str = ""  # the agenda item a line of notes sits under, for what "it" means


_NAME = r"[A-Z][\w'-]+(?: [A-Z][\w'-]+){0,2}"
_BULLET = "[-*•○◦▪‣–]"  # a list item's mark, as markdown or a PDF's text writes it
# An action item in notes: "- Samuel Osei: renew the staging certificates by Friday.", and under an
# agenda item (read with it as its lead-in): "- Disband the design team: Matteo: I will take care of it".
_NAMED_ACTION = re.compile(
    rf"^\s*(?P<item>{_BULLET}\s*)?(?:(?P<topic>[^:\n]{{3,200}}?):\s+)?(?P<owner>{_NAME}):\s+(?P<rest>\S.*)$"
)
# A task list's open box given to someone: "- [ ] @sam book the room", "[ ] Sam Carter: book the room".
_OPEN_BOX = re.compile(
    rf"^\s*(?:{_BULLET}\s*)?\[ \]\s*(?P<owner>@[\w.-]+|{_NAME})\s*:?\s+(?:to\s+)?(?P<rest>[a-z]+\b.*)$"
)
_ITEM_MARK = re.compile(rf"^\s*{_BULLET}\s+")
# A line a named person says for themselves: "I will take care of it", "I'll send it", "let me check".
_OWN_WORDS = re.compile(r"^(?:i|i'll|i'm|i've|we|we'll|we're|let me|leave it with me)\b", re.IGNORECASE)


def _noted(utterance: Utterance, quote: str) -> tuple[bool, _Candidate | None]:
    """A line of notes that gives its promise to a name: an open task box, "Name: do this" (a name of
    two or three words, or one in a list item), or "Name: I'll do this" in a list item. Whether the
    line is given to a name, and the promise it makes; a line given to a name that is no action
    gives nothing."""
    box = _OPEN_BOX.match(quote)
    if box is not None:
        owner = box["owner"]
        name = owner.lstrip("@")
        cleaned = clean(f"{name[:1].upper()}{name[1:]} will {box['rest']}")
        return True, _Candidate(utterance, quote, cleaned, "", owner=owner) if rejection(cleaned) is None else None
    action = _NAMED_ACTION.match(quote)
    if action is None:
        return False, None
    owner, rest, topic = action["owner"], action["rest"], (action["topic"] or "").strip()
    in_item = bool(action["item"]) or bool(topic)
    if owner.casefold() in LABELS or owner.split()[0].casefold() in LABELS or (" " not in owner and not in_item):
        return False, None
    if _OWN_WORDS.match(rest):  # "Matteo: I will take care of it" in an item: Matteo says it
        cleaned = clean(rest)
        if not in_item or not CUE_RE.search(cleaned) or rejection(cleaned) is not None:
            return in_item, None
        return True, _Candidate(utterance, quote, cleaned, owner, topic=topic)
    if not rest[:1].islower() or not rest.split()[0].isalpha():  # "Marco: next-10 survey ready" is a remark
        return False, None
    cleaned = clean(f"{owner} will {rest}")  # read as "Samuel Osei will renew ..."
    found = _Candidate(utterance, quote, cleaned, "", owner=owner, topic=topic)
    return True, found if rejection(cleaned) is None else None


def _candidates(utterances: Sequence[Utterance]) -> Iterator[_Candidate]:
    for utterance in utterances:
        speaker = utterance.speaker.strip()
        for sentence in SENTENCE_END_RE.split(utterance.text):
            quote = sentence.strip()
            given, noted = _noted(utterance, quote) if not speaker else (False, None)
            if given:
                if noted is not None:
                    yield noted
                continue
            said = _ITEM_MARK.sub("", quote)  # "- ACTION: Priya to send it" reads as its words
            if not said or not CUE_RE.search(said):
                continue
            cleaned = clean(said)
            if cleaned and CUE_RE.search(cleaned) and rejection(cleaned) is None:
                yield _Candidate(utterance, quote, cleaned, speaker)


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
        for promise in find_promises(doc, speaker=candidate.speaker, teams=team_names):
            if rejection(candidate.cleaned, upto=promise.end_char) is not None:
                continue
            if candidate.owner:  # the action the note gives, opening with its verb; not another reading of it
                opening = candidate.cleaned.split(" will ", 1)[-1].split()[0]
                if promise.owner.casefold() != candidate.owner.lstrip("@").casefold():
                    continue
                if not promise.predicate.startswith(opening):
                    continue
                promise = replace(promise, owner=candidate.owner.lstrip("@"))  # the name as the notes write it
            draft = _draft(candidate, doc, promise)
            if _BACK_REFERENCE.search(promise.predicate) or _POSSESSIVE.search(promise.predicate):
                draft = _as_asked(draft, candidate, utterances, promise.predicate)
            if candidate.topic and draft.what.endswith(promise.predicate) and _BACK_REFERENCE.search(promise.predicate):
                draft = replace(draft, what=f"{draft.what}: {candidate.topic}"[:MAX_WHAT])  # "it" is the item
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
