"""Candidate glossary terms from an organisation's own text: acronyms, capitalised process and
product names, and ordinary words it uses far more than general English does.

Pure: passages in, candidates out, the same ones every time for the same passages. The steps:

1. one regular-expression pass tallies every acronym, capitalised word or run of words, and
   lower-case word, with where it was written capitalised (``candidates_text``), and collects
   the definitions the text gives (``candidates_defs``);
2. each tally is compared with its frequency in general English (``wordfreq``, shipped inside
   its wheel): people's first names, months and ordinary words are common there, the
   organisation's own words are not; what is left is scored by how often it is used, how much
   more than in English, across how many passages, and whether the text defines it;
3. the best drafts get a second look on a few sentences each: spaCy drops people, places and
   dates and keeps only nouns among the ordinary words; the sentence embedder marks a term
   whose uses form two tight groups far apart as having two senses (``candidates_checks``).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

from registers.glossary.candidates_checks import Embed, clip_around, pattern_for, sense_groups, usage_shares
from registers.glossary.candidates_defs import Definition, definitions_in
from registers.glossary.candidates_text import Scan, Tally, scan, stop_words, words_of

MAX_EXAMPLES = 3
# Zipf frequencies (log10 of uses per billion words): "the" is 7.7, "meeting" 5.2, "sprint" 4.0.
COMMON_ZIPF = 4.5  # an acronym or name this common in English ("OK", "TV", "John") is not ours
ORDINARY_ZIPF = 4.8  # a word more common than this is too ordinary to be a term of art
ENGLISH_FLOOR = 1e-7  # words wordfreq has never seen count as this rare
MIN_LIFT = {"acronym": 5.0, "name": 10.0, "term_of_art": 20.0}
# Words English uses often rank lower even when this text uses them more: "speaker" below "endpoint".
RARE_ZIPF = 5.0
SPREAD_STRETCHES = 10
RARITY_FLOOR = 0.3
# A short word English hardly knows is a fragment or a filler ("nnn", "iness"), not a term.
SHORT_WORD, SHORT_MIN_ZIPF = 5, 3.0
PAIR_SHARE = 0.4  # of a word's uses inside a pair, for the pair to be a compound and the word not alone
CAPITALISED_SHARE = 0.7  # of mid-sentence uses, for a word to count as a name
MIN_NOUN_SHARE = 0.5
MAX_OTHER_SHARE = 0.5  # of checked uses read as a person, place, date or number
PERSON_CUE_SHARE = 0.15  # of uses with a person's cue: "Priya said", "ask Srini", "Srini ... he"
THING_CUE_SHARE = 0.3  # of uses after a determiner: "the Falcon Console" is a thing, whatever spaCy says
DEFINED_BONUS = 1.3
CHECK_MARGIN = 2
_CALENDAR = words_of(
    "january february march april may june july august september october november december jan feb "
    "mar apr jun jul aug sep sept oct nov dec monday tuesday wednesday thursday friday saturday "
    "sunday mon tue tues wed thu thur thurs fri sat sun"
)


@dataclass(frozen=True)
class Passage:
    text: str
    ref: int | None = None  # opaque id passed through (a chunk id)


@dataclass(frozen=True)
class Example:
    sentence: str  # the sentence the term is used in, verbatim, at most 300 chars
    ref: int | None


@dataclass(frozen=True)
class TermCandidate:
    term: str  # as the organisation writes it (its most frequent form)
    kind: str  # "acronym" | "name" | "term_of_art"
    count: int  # uses seen
    examples: tuple[Example, ...]  # up to 3, from different passages where possible
    suggestion: str  # a definition found in the text, '' if none
    senses: int  # 1, or 2 when the term is used in clearly different contexts
    score: float = 0.0  # what the ranking sorted by: higher is more glossary-worthy


@dataclass
class _Draft:
    key: str
    kind: str
    tally: Tally
    score: float
    definition: Definition | None


def find_terms(
    passages: Sequence[Passage], *, limit: int = 200, min_count: int = 3, embed: Embed | None = None
) -> list[TermCandidate]:
    """The ``limit`` most glossary-worthy terms used at least ``min_count`` times, best first.

    ``embed`` turns sentences into unit vectors for telling senses apart; by default the
    MiniLM embedder on this machine."""
    if limit <= 0 or not passages:
        return []
    found = scan([p.text for p in passages])
    definitions = _definitions(found)
    drafts = _drafts(found, definitions, min_count)
    drafts = _second_look(drafts[: limit * CHECK_MARGIN + 20], found)[:limit]
    groups = sense_groups([d.tally for d in drafts], found, embed or _default_embed())
    refs = [p.ref for p in passages]
    return [_candidate(d, g, found, refs) for d, g in zip(drafts, groups, strict=True)]


def _definitions(found: Scan) -> dict[str, Definition]:
    best: dict[str, Definition] = {}
    for index in range(len(found.sentences)):
        for definition in definitions_in(found.sentence(index), index):
            held = best.get(definition.key)
            if held is None or definition.strength > held.strength:
                best[definition.key] = definition
    return best


def _drafts(found: Scan, definitions: dict[str, Definition], min_count: int) -> list[_Draft]:
    drafts = []
    for key, tally in found.acronyms.items():
        # A common word in capitals ("OK", "US") is no term, unless the text says what it stands for.
        if (_zipf(key.lower()) < COMMON_ZIPF or key.lower() in definitions) and key.lower() not in _CALENDAR:
            drafts.append(_draft(key, "acronym", tally, found, definitions))
    for key, tally in found.runs.items():
        if not any(word in _CALENDAR for word in key.split()):
            drafts.append(_draft(key, "name", tally, found, definitions))
    pairs = {k: t for k, t in found.pairs.items() if t.count >= min_count and _is_compound(k, t, found)}
    for key, tally in pairs.items():
        drafts.append(_draft(key, "term_of_art", tally, found, definitions))
    inside: Counter[str] = Counter()
    for key, tally in pairs.items():
        inside.update({word: tally.count for word in set(key.split(" "))})
    for key, tally in found.words.items():
        kind = _word_kind(key, tally)
        if kind and inside[key] < PAIR_SHARE * tally.count:
            drafts.append(_draft(key, kind, tally, found, definitions))
    kept = [d for d in drafts if d.tally.count >= min_count and d.score > 0]
    return sorted(kept, key=lambda d: (-d.score, d.key))


def _is_compound(key: str, tally: Tally, found: Scan) -> bool:
    """Two words that mostly come together when either is used: "belief net", not "next week"."""
    alone = min((found.words[w].count for w in key.split(" ") if w in found.words), default=0)
    return tally.count >= PAIR_SHARE * alone


def _word_kind(key: str, tally: Tally) -> str:
    mid = tally.capital_mid + tally.lower_mid
    if key in _CALENDAR or not mid:
        return ""
    if tally.capital_mid >= CAPITALISED_SHARE * mid:
        return "name" if _zipf(key) < COMMON_ZIPF else ""
    zipf = _zipf(key)
    if (
        len(key) < 3
        or key in stop_words()
        or zipf > ORDINARY_ZIPF
        or (len(key) <= SHORT_WORD and zipf < SHORT_MIN_ZIPF)
    ):
        return ""
    return "term_of_art"


def _draft(key: str, kind: str, tally: Tally, found: Scan, definitions: dict[str, Definition]) -> _Draft:
    definition = definitions.get(key.lower())
    score = _score(kind, tally, found, definition is not None, key)
    return _Draft(key=key, kind=kind, tally=tally, score=score, definition=definition)


def _score(kind: str, tally: Tally, found: Scan, defined: bool, key: str) -> float:
    """How often, how far above English, how evenly over the text; zero below the kind's lift."""
    english = max(_frequency(key.lower()), ENGLISH_FLOOR)
    lift = tally.count / max(found.total_words, 1) / english
    if lift < MIN_LIFT[kind]:
        return 0.0
    spread = _spread(tally, len(found.passages)) ** 0.5
    rarity = min(1.0, max(RARITY_FLOOR, (RARE_ZIPF - _zipf(key.lower())) / 2))
    return math.log2(1 + tally.count) * math.log10(lift) * spread * rarity * (DEFINED_BONUS if defined else 1.0)


def _spread(tally: Tally, passages: int) -> float:
    """The share of the text's stretches (tenths, in passage order) the term is used in, against
    what its number of uses allows: a word the text talks about in one stretch only is a topic
    of the day, a term of the organisation's is used throughout."""
    stretches = min(SPREAD_STRETCHES, passages)
    used = {p * stretches // passages for p in tally.passages}
    return len(used) / min(stretches, len(tally.passages))


def _second_look(drafts: list[_Draft], found: Scan) -> list[_Draft]:
    shares = usage_shares([d.tally for d in drafts], found)
    kept = []
    for draft, (noun, other) in zip(drafts, shares, strict=True):
        tally = draft.tally
        thing = tally.thing_cues >= THING_CUE_SHARE * tally.count or draft.definition is not None
        if draft.kind == "name" and tally.person_cues >= PERSON_CUE_SHARE * tally.count and not thing:
            continue
        if other >= MAX_OTHER_SHARE and not thing:
            continue
        if noun < MIN_NOUN_SHARE:  # "Oops", "hurry up": not the name of anything
            continue
        kept.append(draft)
    return kept


def _candidate(draft: _Draft, groups: list[list[int]] | None, found: Scan, refs: list[int | None]) -> TermCandidate:
    definition = draft.definition
    lead = definition.sentence if definition and _uses_term(draft.tally, definition.sentence, found) else -1
    pools = groups or [draft.tally.uses]
    if lead >= 0:
        pools = [[lead, *pools[0]], *pools[1:]]
    return TermCandidate(
        term=draft.tally.surface(),
        kind=draft.kind,
        count=draft.tally.count,
        examples=_examples(draft.tally, pools, lead, found, refs),
        suggestion=definition.text if definition else "",
        senses=2 if groups else 1,
        score=round(draft.score, 4),
    )


def _examples(
    tally: Tally, pools: list[list[int]], lead: int, found: Scan, refs: list[int | None]
) -> tuple[Example, ...]:
    """Up to three uses, taking from each sense in turn, from different passages where possible:
    the defining sentence first, then fuller sentences, then earlier ones."""
    pattern = pattern_for(tally)
    ordered = [sorted(set(pool), key=lambda s: (s != lead, not _readable(found, s), s)) for pool in pools]
    picked: list[int] = []
    for distinct in (True, False):
        for turn in range(max(len(o) for o in ordered)):
            for pool in ordered:
                if len(picked) < MAX_EXAMPLES and turn < len(pool) and _fits(pool[turn], picked, found, distinct):
                    picked.append(pool[turn])
    examples = []
    for s in picked:
        sentence = found.sentence(s)
        examples.append(Example(clip_around(sentence, pattern.search(sentence)), refs[found.passage_of(s)]))
    return tuple(examples)


def _uses_term(tally: Tally, sentence: int, found: Scan) -> bool:
    return pattern_for(tally).search(found.sentence(sentence)) is not None


def _fits(sentence: int, picked: list[int], found: Scan, distinct_passages: bool) -> bool:
    if sentence in picked or found.sentence(sentence) in {found.sentence(p) for p in picked}:
        return False
    return not distinct_passages or found.passage_of(sentence) not in {found.passage_of(p) for p in picked}


def _readable(found: Scan, sentence: int) -> bool:
    return 6 <= len(found.sentence(sentence).split()) <= 60


@cache
def _english() -> dict[str, float]:
    import wordfreq

    return dict(wordfreq.get_frequency_dict("en", wordlist="large"))


@cache
def _frequency(phrase: str) -> float:
    """How often general English uses the phrase; a phrase of several words as often as its
    rarest word, which overstates it and so errs towards calling it ordinary."""
    words = phrase.replace("-", " ").split()
    table = _english()
    return min((table.get(w, 0.0) for w in words), default=0.0)


def _zipf(word: str) -> float:
    frequency = _frequency(word)
    return math.log10(frequency * 1e9) if frequency > 0 else 0.0


def _default_embed() -> Embed:
    from memory.index.embedding import get_embedder

    return get_embedder("minilm").embed
