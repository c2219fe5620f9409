"""Promises in one parsed sentence: the undertaking verb, its owner, and the promise in the third person."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from registers.commitments.extraction_rules import (
    ACTION_ITEM_RE,
    ACTION_PREFIX_RE,
    DELIVERY_LEMMAS,
    DONE_WORDS,
    LEAVE_IT_WITH_ME_RE,
    LET_ME_VERBS,
    MEETING_ADVERBS,
    MEETING_THINGS,
    NON_ACTION_LEMMAS,
    NOT_DELIVERABLE_OBJECTS,
    PERSON_OBJECTS,
    PRONOUNS,
    THIRD_PERSON,
)

if TYPE_CHECKING:
    from spacy.tokens import Doc, Token

_WILL = frozenset({"will", "'ll", "ll", "shall"})
_PRESENT_BE = frozenset({"am", "'m", "is", "'s", "are", "'re", "m", "s", "re"})
_GOING = frozenset({"going", "gon"})
_WH = frozenset({"WP", "WRB", "WDT"})
_TRAILING = frozenset({"and", "but", "so", "or", "then", "because", "cause", "'cause"})


@dataclass(frozen=True)
class Promise:
    owner: str
    predicate: str  # what follows "<owner> will", third person
    start_char: int  # where the predicate sits in the parsed sentence, for its deadline
    end_char: int


@dataclass(frozen=True)
class _Undertaking:
    verb: Token  # the action promised
    modal: Token  # the word that makes it a promise: "will", "going", "agreed", "let", "can"
    subject: Token | None
    first_person: bool = False  # "let me", "leave it with me": the speaker without a subject word


def _children(token: Token, *deps: str) -> list[Token]:
    return [c for c in token.children if c.dep_ in deps]


def _subject(head: Token) -> Token | None:
    subjects = _children(head, "nsubj")
    if subjects:
        return subjects[0]
    possessor = _children(head, "poss")  # "Adam's gonna ..." parses Adam as the possessor of "gon"
    return possessor[0] if possessor and head.lower_ == "gon" else None


def _undertaking(verb: Token) -> _Undertaking | None:
    if not verb.tag_.startswith("VB"):
        return None
    for aux in _children(verb, "aux"):
        if aux.lower_ in _WILL:
            return _Undertaking(verb, aux, _subject(verb))
        if (
            aux.lower_ == "can"
            and verb.lemma_ == "take"
            and any(c.lower_ in ("that", "this", "it", "care") for c in verb.children)
        ):
            return _Undertaking(verb, aux, _subject(verb))
    head = verb.head
    if verb.dep_ not in ("xcomp", "ccomp") or head.i == verb.i:
        return None
    if head.lower_ in _GOING:
        tense = [a.lower_ for a in _children(head, "aux")]
        if any(t not in _PRESENT_BE for t in tense):  # "was going to" reports a past plan
            return None
        return _Undertaking(verb, head, _subject(head))
    if head.lower_ in ("hope", "hoping") and verb.dep_ == "xcomp":
        # "I'm hoping to release it this week", "I hope to send it": the speaker's own intention.
        subject = _subject(head)
        return _Undertaking(verb, head, subject) if subject is not None and subject.lower_ == "i" else None
    if head.lemma_ == "agree" and head.tag_ in ("VBD", "VBN", "VBZ"):
        subject = _subject(head)
        return _Undertaking(verb, head, subject) if subject is not None and subject.lower_ != "we" else None
    if (
        head.lower_ == "let"
        and any(c.lower_ == "me" for c in (*head.children, *verb.children))
        and verb.lemma_ in LET_ME_VERBS
    ):
        return _Undertaking(verb, head, None, first_person=True)
    return None


def _is_action(verb: Token) -> bool:
    lemma, kids = verb.lemma_.lower(), list(verb.children)
    objects = [c for c in kids if c.dep_ in ("dobj", "dative", "attr")]
    if any(c.dep_ == "neg" for c in kids) or any(c.dep_ == "advmod" and c.lower_ in MEETING_ADVERBS for c in kids):
        return False
    if lemma == "come":  # "I'll come back to you on that", not "I'll come back to that point"
        targets = [g for p in kids if p.lower_ == "to" for g in p.children if g.dep_ == "pobj"]
        return any(c.lower_ == "back" for c in kids) and any(
            t.lower_ in PERSON_OBJECTS or t.tag_ == "NNP" for t in targets
        )
    if verb.dep_ in ("relcl", "acl") or _children(verb, "auxpass") or any(c.tag_ in _WH for c in kids):
        return False  # "the example I'll give you", "it will be given", "what we're going to do"
    if lemma == "get":  # "I'll get back to you", "I'll get the report to them", not "I'll get three pairs"
        return any(c.dep_ == "prt" and c.lower_ == "back" for c in kids) or (
            bool(objects) and bool(_children(verb, "prep"))
        )
    if lemma == "move":  # "I'll move the alerts to the new dashboards", not "I'll move on", "move to the next item"
        moved = [c for c in kids if c.dep_ in ("dobj", "xcomp")]
        return any(o.lower_ not in PRONOUNS and o.lemma_.lower() not in MEETING_THINGS for o in moved)
    states = [c for c in kids if c.dep_ in ("xcomp", "ccomp", "oprd", "acomp")]
    held = objects + [g for c in states for g in c.children if g.dep_ == "nsubj"]
    if lemma == "have" and any(o.lower_ in ("it", "them", "that", "this") for o in held):
        # "I'll have them done by Friday", "I'll have it in the release": what was asked, delivered
        done = any(c.lemma_.lower() in DONE_WORDS or c.lower_ in DONE_WORDS for c in states)
        return done or any(c.dep_ == "prep" and c.lower_ in ("in", "by", "for", "to") for c in kids)
    if lemma == "have" and not any(c.lower_ == "the" for o in objects for c in o.children if c.dep_ == "det"):
        return False  # "we'll have the report to them", not "we'll have a discussion", "our meetings"
    if lemma == "give" and not any(o.dep_ == "dobj" for o in objects):
        return False
    if lemma in ("have", "give") and (
        _children(verb, "xcomp") or any(o.lemma_.lower() in NOT_DELIVERABLE_OBJECTS for o in objects)
    ):
        return False
    if lemma == "put":
        return bool(_children(verb, "prep", "prt"))
    if lemma == "write" and any(c.dep_ == "prt" and c.lower_ == "down" for c in kids):
        return False
    if lemma == "ask" and any(o.lower_ == "you" or o.lemma_ == "question" for o in objects):
        return False
    if lemma == "tell" and not any(o.tag_ == "NNP" or o.lower_ in PERSON_OBJECTS - {"you"} for o in objects):
        return False  # "I'll tell you a bit about the plan" narrates; "I'll tell Sam" promises
    if lemma == "do" and all(o.lower_ in PRONOUNS for o in objects):
        return False  # "I will do that" mid-meeting is whatever is being done at the table
    if lemma == "try":
        return bool(_children(verb, "xcomp"))
    return lemma not in NON_ACTION_LEMMAS


def _team_in(text: str, teams: Sequence[str]) -> str | None:
    lowered = text.casefold()
    for team in sorted(teams, key=len, reverse=True):
        bare = re.sub(r"^the\s+", "", team.casefold())
        if re.search(rf"(?<!\w)(?:the\s+)?{re.escape(bare)}(?!\w)", lowered):
            return team
    return None


def _named(subject: Token) -> str | None:
    """The subject's name when it is a person or a named role ("Sam", "The Industrial Designer")."""
    if (
        subject.lower_ in PRONOUNS
        or subject.is_stop
        or not subject.text[:1].isupper()
        or not (subject.tag_ in ("NNP", "NNPS") or subject.ent_type_ == "PERSON")
    ):
        return None
    parts = [c for c in subject.children if c.dep_ in ("compound", "flat") and c.i < subject.i] + [subject]
    words = [t.text for t in sorted(parts, key=lambda t: t.i)]
    while words and words[0].lower() in ("the", "a", "an"):
        words = words[1:]
    return " ".join(words) or None


def _hands_over(verb: Token, doc: Doc) -> bool:
    """A delivery: a handing-over verb, a recipient ("to them", "send you") or a date in the promise."""
    recipient = any(c.dep_ == "dative" for c in verb.children) or any(
        p.lower_ == "to" and any(g.lower_ in PERSON_OBJECTS or g.tag_ == "NNP" for g in p.children)
        for p in verb.subtree
    )
    dated = any(e.label_ == "DATE" and verb.left_edge.i <= e.start <= verb.right_edge.i for e in doc.ents)
    return verb.lemma_.lower() in DELIVERY_LEMMAS or recipient or dated


def _owner(found: _Undertaking, doc: Doc, speaker: str, teams: Sequence[str]) -> str | None:
    subject = found.subject
    if found.first_person or (subject is not None and subject.lower_ == "i"):
        return speaker or None
    if subject is None:
        return None
    if subject.lower_ == "we":
        team = _team_in(doc.text[: found.modal.idx], teams)
        if team is not None:
            return team
        return speaker if speaker and _hands_over(found.verb, doc) else None
    span = doc[subject.left_edge.i : subject.right_edge.i + 1].text
    team = _team_in(span, teams)
    if team is not None and len(span.split()) <= len(team.split()) + 1:
        return team
    return _named(subject)


def _predicate_tokens(found: _Undertaking) -> list[Token]:
    verb, skip = found.verb, set[int]()
    if found.subject is not None:
        skip |= {t.i for t in found.subject.subtree}
    for conj in _children(verb, "conj"):
        cc = [c.lower_ for c in _children(verb, "cc") if c.i < conj.i]
        if _children(conj, "nsubj", "nsubjpass") or cc[-1:] in (["but"], ["or"]):  # a clause of its own
            skip |= {t.i for t in conj.subtree} | {c.i for c in _children(verb, "cc") if c.i < conj.i}
    skip |= {c.i for c in _children(verb, "aux") if c.tag_ == "TO" or c.lower_ == "na"}
    if found.first_person:  # "let me check": "me" is the owner, not part of the promise
        skip |= {c.i for c in _children(verb, "nsubj", "dobj") if c.lower_ == "me"}
    said = list(verb.subtree)
    # "I'm going to test it, merge it in and do a release": the verbs joined to "going" are promised too.
    joined = [c for c in _children(found.modal, "conj") if c.tag_ == "VB" and not _children(c, "nsubj", "nsubjpass")]
    if found.modal.i != verb.i and joined and joined[0].i > verb.i:
        said = list(verb.doc[verb.left_edge.i : joined[-1].right_edge.i + 1])
    tokens = [t for t in said if t.i > found.modal.i and t.i not in skip and not t.is_space and t.pos_ != "INTJ"]
    while tokens and tokens[0].is_punct:
        tokens.pop(0)
    while tokens and (tokens[-1].is_punct or tokens[-1].lower_ in _TRAILING):
        tokens.pop()
    return tokens


def _third_person(tokens: list[Token], owner: str) -> str:
    words = []
    for t in tokens:
        word = owner if t.text == "I" else THIRD_PERSON.get(t.lower_, t.text)
        words.append(word + t.whitespace_)
    return re.sub(r"\s+([,;:])", r"\1", "".join(words)).strip(" ,;:")


def _action_item(doc: Doc, speaker: str) -> Promise | None:
    """Notes style: "Action: Priya to send the notes", "Sam to book the room by Friday"."""
    text = doc.text
    match = ACTION_ITEM_RE.match(text)
    if match is None or (not ACTION_PREFIX_RE.match(text) and match.start("owner") > 0):
        return None
    owner = match["owner"].strip()
    first = next((t for t in doc if t.idx >= match.start("rest")), None)
    if first is None or first.tag_ != "VB" or owner.lower() in PRONOUNS or first.lemma_ in NON_ACTION_LEMMAS:
        return None
    person = any(e.label_ == "PERSON" and e.start_char <= match.start("owner") < e.end_char for e in doc.ents)
    finite = any(t.tag_ in ("VBZ", "VBP", "VBD", "MD") for t in doc if t.idx > match.start("rest"))
    if not ACTION_PREFIX_RE.match(text) and (not person or finite):  # "Paper to note 1 is a letter ..."
        return None
    tokens = [t for t in doc if t.idx >= match.start("rest")]
    while tokens and tokens[-1].is_punct:
        tokens.pop()
    return Promise(owner, _third_person(tokens, owner), tokens[0].idx, tokens[-1].idx + len(tokens[-1]))


def find_promises(doc: Doc, *, speaker: str, teams: Sequence[str]) -> list[Promise]:
    """Each undertaking by a named owner in ``doc`` (one sentence)."""
    if LEAVE_IT_WITH_ME_RE.search(doc.text):
        return [Promise(speaker, "take care of it", 0, len(doc.text))] if speaker else []
    item = _action_item(doc, speaker)
    if item is not None:
        return [item]
    promises = []
    for token in doc:
        found = _undertaking(token)
        if found is None or not _is_action(found.verb) or any(c.dep_ == "neg" for c in found.modal.children):
            continue
        owner = _owner(found, doc, speaker, teams)
        tokens = _predicate_tokens(found)
        if owner is None or not tokens or not any(t.is_alpha for t in tokens):
            continue
        start, end = tokens[0].idx, tokens[-1].idx + len(tokens[-1])
        promises.append(Promise(owner, _third_person(tokens, owner), start, end))
    return promises
