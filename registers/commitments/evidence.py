"""Whether a passage said after a promise is evidence that it landed: pure, without a database.

A passage is cited for a promise only through one of its sentences, and that sentence must

- say something was carried out: a word of completion ("sent", "shipped", "went out"), in a
  sentence that is not a question, not a promise of its own ("will", "'ll", "going to") and not
  a negation ("not", "n't", "never", "yet to");
- mention the promise's subject: share a content word with what was promised, once the owner's
  name, filler, day words and the words of doing ("send", "sent", "done") are set aside, so "the
  revised quote went out" is evidence for "send the revised quote to BigCo" and "I sent the
  invoice to Acme" is not;

and the passage must be its owner's: said by them or naming them. Whether it was said after the
promise is decided by the caller, which knows each passage's moment (``said_after``).
"""

from __future__ import annotations

import re
from datetime import datetime

from memory.extraction.lines import word_set
from registers.commitments.twins import content_words

# Words that say something was carried out.
COMPLETION = re.compile(
    r"\b(?:done|finished|completed|complete|shipped|sent|delivered|landed|merged|released|launched|migrated|"
    r"published|signed|closed|resolved|fixed|submitted|deployed|handed over|went out|is out|are out|live now)\b",
    re.IGNORECASE,
)
# A sentence that still promises, plans, doubts or denies it, or asks whether it happened.
NOT_YET = re.compile(
    r"\b(?:will|shall|going to|gonna|plan(?:s|ning)? to|need(?:s|ed)? to|has to|have to|should|must|not|never|"
    r"yet to|hopefully|maybe)\b|n't\b|'ll\b|\?\s*$",
    re.IGNORECASE,
)
# Words that say what someone does, not what about: they never make a passage about the promise.
DOING = word_set(
    """
    send make get give take put do done go going went check look looking work working follow sort
    handle try update updates share prepare finish finished complete completed deliver sent shipped
    delivered landed merged released launched migrated published signed closed resolved fixed
    submitted deployed handed live everyone team people someone thing things stuff sure let know
    """
)
SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
LINE = 200  # the longest line a verdict keeps


def fold(word: str) -> str:
    """A word without its inflection, enough to match "quote", "quotes" and "quoted"."""
    word = word.lower().removesuffix("'s")
    for suffix, replacement in (("ies", "y"), ("ing", ""), ("ed", ""), ("es", ""), ("s", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3 and not word.endswith("ss"):
            word = word[: -len(suffix)] + replacement
            break
    return word.removesuffix("e") if len(word) > 4 else word


def subject_words(what: str, owner: str) -> frozenset[str]:
    """The folded content words of what was promised: the words a sentence must share with it."""
    return frozenset(fold(w) for w in content_words(what, owner).split() if w not in DOING and len(w) > 1)


def words_of(text: str) -> set[str]:
    return {fold(w) for w in re.findall(r"[^\W\d_][\w'-]*", text)}


def mentions_subject(sentence: str, subject: frozenset[str]) -> bool:
    """Whether ``sentence`` shares a content word with what was promised."""
    return bool(subject & words_of(sentence))


def says_done(sentence: str) -> bool:
    """Whether ``sentence`` says something was carried out (not asked, promised again or denied)."""
    return bool(COMPLETION.search(sentence)) and not NOT_YET.search(sentence)


def sentences(text: str) -> list[str]:
    return [s.strip() for line in text.splitlines() for s in SENTENCE_END.split(line) if s.strip()]


def owner_key(owner: str) -> str:
    """The word a passage must name (or be said by) to be its owner's: their first name."""
    words = owner.split()
    return words[0].lower() if words else ""


def evidence_line(text: str, *, speaker: str = "", what: str, owner: str) -> str | None:
    """The sentence of ``text`` that is evidence the promise ``what`` of ``owner`` landed, or None:
    one saying it was done and mentioning its subject, in a passage said by or naming its owner."""
    key = owner_key(owner)
    subject = subject_words(what, owner)
    if not key or not subject or (key not in speaker.lower() and key not in text.lower()):
        return None
    for sentence in sentences(text):
        if says_done(sentence) and mentions_subject(sentence, subject):
            return short(sentence, LINE)
    return None


def said_after(moment: datetime, since: datetime, *, exact: bool) -> bool:
    """Whether a passage of ``moment`` was said after a promise made at ``since``: strictly after a
    promise whose moment is known, from the start of its day for one known only by its day."""
    return moment > since if exact else moment >= since


def short(text: str, most: int) -> str:
    return text if len(text) <= most else text[: most - 1].rstrip() + "…"
