"""What a sentence states a value of, as words: its topic ("the Lisbon office opens on 1 May" is
about ``lisbon office|open``; "the Enterprise plan costs $40k" about ``enterprise plan|price``).

A topic lets a later sentence about the same thing meet an earlier one when neither names an
entity the graph knows, or when they name it with different verbs ("costs", "is", "price:").
Only statements of one value at a time get one: a price, a budget, a salary, a deal's value, or
the date of a one-time happening (an office opening, a launch, a start, a renewal). Values a
sentence denies ("not 1 May", "instead of $40k") are left out of its values.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from memory.extraction.shapes import ExtractedValue
from memory.extraction.values import REPORTING

if TYPE_CHECKING:
    from spacy.tokens import Span, Token

# Value keys that hold one value at a time for one thing.
ONE_VALUE_KEYS = {"price", "deal_value", "budget", "salary", "headcount", "renewal_date", "launch_date", "start_date"}
# Verbs of something that happens once: its date is one value.
ONE_TIME_VERBS = {"open", "launch", "start", "begin", "close", "end", "ship", "release", "renew", "expire", "finish",
                  "move", "go", "happen", "take", "kick"}  # fmt: skip
# Words that name the attribute or the kind of statement, not the thing: left out of the topic.
NOT_THE_THING = {"price", "cost", "fee", "rate", "budget", "salary", "value", "update", "correction", "new", "current",
                 "date", "now", "annual", "yearly", "monthly", "total"}  # fmt: skip
_DENIED = r"(?:\bnot|\binstead of|\brather than|\breplacing)\s+(?:on\s+|at\s+|the\s+)?"


def affirmed(text: str, values: list[ExtractedValue]) -> list[ExtractedValue]:
    """The values ``text`` states, without those it denies ("now 15 June, not 1 May")."""
    kept = []
    for value in values:
        if value.text and re.search(_DENIED + re.escape(value.text), text, re.IGNORECASE):
            continue
        kept.append(value)
    return kept


def topic_of(sent: Span, values: list[ExtractedValue], dated: bool) -> tuple[str, str]:
    """(``subject words|attribute``, the thing's name as written when it is a name) when the
    sentence states one value of one thing, else ('', '')."""
    verb = _main_verb(sent)
    key = next((v.key for v in values if v.key in ONE_VALUE_KEYS), "")
    if not key and dated and verb is not None and verb.lemma_.lower() in ONE_TIME_VERBS:
        key = verb.lemma_.lower()
    if not key:
        return "", ""
    tokens = _subject_tokens(sent, verb)
    # "The Enterprise plan" names a thing, and so does a heading ("Enterprise plan price: $50k");
    # "the deal" or "the office" does not: two of them in two documents may be two different
    # things, so they get no topic.
    named = any(t.pos_ == "PROPN" or (t.text[:1].isupper() and (t.i != sent.start or verb is None)) for t in tokens)
    if not named:
        return "", ""
    return f"{' '.join(t.lemma_.lower() for t in tokens)}|{key}"[:200], " ".join(t.text for t in tokens)


def _main_verb(sent: Span) -> Token | None:
    root = sent.root
    reported = next((c for c in root.children if c.dep_ in ("ccomp", "parataxis") and c.pos_ in ("VERB", "AUX")), None)
    if root.lemma_.lower() in REPORTING and reported is not None:
        return reported  # "BigCo renews on 1 March, Priya said": what is said is about BigCo
    if root.pos_ in ("VERB", "AUX"):
        return root
    # "Update: the office now opens on ...": the verb hangs under the heading word.
    return next((c for c in root.children if c.pos_ in ("VERB", "AUX") and c.dep_ in ("acl", "relcl", "appos")), None)


def _subject_tokens(sent: Span, verb: Token | None) -> list[Token]:
    if verb is not None:
        head = next((c for c in verb.children if c.dep_ in ("nsubj", "nsubjpass")), None)
    else:  # "Enterprise plan price: $50k": the heading noun is the thing
        head = sent.root if sent.root.pos_ in ("NOUN", "PROPN") else None
    if head is None:
        return []
    if head.lemma_.lower() in NOT_THE_THING:  # "the price of the Enterprise plan": the plan
        of = next((c for c in head.children if c.dep_ == "prep" and c.lower_ in ("of", "for")), None)
        inner = next((c for c in of.children if c.dep_ == "pobj"), None) if of is not None else None
        head = inner or head
    # "our customer Northwind": the name after the noun is part of it.
    names = [t for t in head.children if t.dep_ == "appos" and t.pos_ == "PROPN"]
    tokens = [t for t in head.subtree if t.i <= head.i or t.dep_ in ("compound", "amod")]
    tokens += [t for name in names for t in name.subtree if t.dep_ in ("compound", "appos") or t.i == name.i]
    return [
        t
        for t in tokens
        if t.pos_ in ("NOUN", "PROPN", "ADJ", "NUM")
        and t.lemma_.lower() not in NOT_THE_THING
        and re.search(r"[a-z]", t.lemma_.lower())
    ]
