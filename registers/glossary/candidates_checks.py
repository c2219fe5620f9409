"""Second looks at the strongest drafts, on a few of their sentences only, so the cost stays fixed
however much text there is: spaCy says whether a word is used as a noun and whether a name is a
person, a place or a date; the sentence embedder says whether a term is used in two clearly
different contexts.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from registers.glossary.candidates_text import Scan, Tally

if TYPE_CHECKING:
    from spacy.tokens import Doc

Embed = Callable[[list[str]], np.ndarray]

CHECKED_USES = 6
MAX_SENTENCE = 300
CONTEXT = 160  # characters around a use that the checks read: enough for its phrase, and cheap
# People, places, dates and amounts are not the organisation's vocabulary.
NOT_TERMS = frozenset({"PERSON", "GPE", "LOC", "NORP", "FAC", "DATE", "TIME", "CARDINAL", "ORDINAL", "MONEY"})
NOUNS = frozenset({"NOUN", "PROPN"})
INNER = NOUNS | {"ADJ"}
_CONNECTORS = frozenset({"of", "for", "&"})
# Two senses need enough uses with enough words around them to tell; the two groups must be less
# alike than two sentences of the text at random by SENSE_APART, and each group more alike within
# than across by SENSE_TIGHT (cosine similarities of the sentence embedder). Set on meeting
# transcripts so that no word there was split, while "pod" as a team and as a container is.
SENSE_MIN_USES = 8
SENSE_USES = 16
SENSE_MIN_WORDS = 6
SENSE_MIN_GROUP = 3
SENSE_APART = 0.14
SENSE_TIGHT = 0.1
SENSE_REFERENCE = 100


def spread(uses: Sequence[int], n: int) -> list[int]:
    """``n`` of the kept uses, evenly spaced, always the same ones."""
    if len(uses) <= n:
        return list(uses)
    step = len(uses) / n
    return [uses[int(i * step)] for i in range(n)]


def pattern_for(tally: Tally) -> re.Pattern[str]:
    forms = sorted(tally.surfaces, key=lambda s: (-len(s), s))
    return re.compile(r"(?i)(?<![\w-])(?:" + "|".join(re.escape(f) for f in forms) + r")(?:e?s)?(?![\w-])")


def usage_shares(tallies: Sequence[Tally], scan: Scan) -> list[tuple[float, float]]:
    """For each tally, the share of its checked uses that spaCy reads as a noun, and the share it
    reads as part of a person, place, date or number."""
    from memory.extraction import nlp

    jobs: list[tuple[int, str, re.Pattern[str]]] = []
    for n, tally in enumerate(tallies):
        pattern = pattern_for(tally)
        jobs += [(n, _clip(scan.sentence(s), pattern), pattern) for s in spread(tally.uses, CHECKED_USES)]
    nouns, others, seen = [0] * len(tallies), [0] * len(tallies), [0] * len(tallies)
    docs = nlp().pipe((text for _, text, _ in jobs), disable=["parser", "lemmatizer"], batch_size=256)
    for (n, _, pattern), doc in zip(jobs, docs, strict=True):
        found = _reading(doc, pattern)
        if found is not None:
            seen[n] += 1
            nouns[n] += found[0]
            others[n] += found[1]
    return [(nouns[n] / seen[n], others[n] / seen[n]) if seen[n] else (0.0, 0.0) for n in range(len(tallies))]


def _reading(doc: Doc, pattern: re.Pattern[str]) -> tuple[bool, bool] | None:
    match = pattern.search(doc.text)
    span = doc.char_span(match.start(), match.end(), alignment_mode="expand") if match else None
    if span is None or not len(span):
        return None
    # A compound is nouns and adjectives ending in a noun ("belief net", not "including digits").
    inner = span[:-1]
    is_noun = span[-1].pos_ in NOUNS and all(t.pos_ in INNER or t.lower_ in _CONNECTORS or t.is_punct for t in inner)
    is_other = any(token.ent_type_ in NOT_TERMS for token in span)
    return is_noun, is_other


def _clip(sentence: str, pattern: re.Pattern[str]) -> str:
    return clip_around(sentence, pattern.search(sentence), CONTEXT)


def clip_around(sentence: str, match: re.Match[str] | None, limit: int = MAX_SENTENCE) -> str:
    """The sentence itself, or a verbatim stretch of at most ``limit`` characters around the use,
    cut at spaces."""
    if len(sentence) <= limit:
        return sentence
    centre = (match.start() + match.end()) // 2 if match else 0
    start = max(0, min(centre - limit // 2, len(sentence) - limit))
    window = sentence[start : start + limit]
    if start > 0 and " " in window:
        window = window.split(" ", 1)[1]
    if start + limit < len(sentence) and " " in window:
        window = window.rsplit(" ", 1)[0]
    return window.strip()


def sense_groups(tallies: Sequence[Tally], scan: Scan, embed: Embed) -> list[list[list[int]] | None]:
    """For each tally, its sampled uses split in two when they fall into two groups that are each
    coherent and less alike than two sentences of this text taken at random (two senses), else
    ``None``. Each use is its sentence with the term blanked, so only the context speaks."""
    jobs = []
    for n, tally in enumerate(tallies):
        pattern = pattern_for(tally)
        contexts = [(s, pattern.sub(" ", _clip(scan.sentence(s), pattern))) for s in spread(tally.uses, SENSE_USES)]
        contexts = [(s, text) for s, text in contexts if len(text.split()) >= SENSE_MIN_WORDS]
        if len(contexts) >= SENSE_MIN_USES:
            jobs.append((n, contexts))
    out: list[list[list[int]] | None] = [None] * len(tallies)
    if not jobs:
        return out
    vectors = embed([text for _, contexts in jobs for _, text in contexts] + _reference_sentences(scan))
    reference = _mean_similarity(vectors[sum(len(c) for _, c in jobs) :])
    row = 0
    for n, contexts in jobs:
        groups = two_groups(vectors[row : row + len(contexts)], reference)
        row += len(contexts)
        if groups is not None:
            out[n] = [[contexts[i][0] for i in group] for group in groups]
    return out


def _reference_sentences(scan: Scan) -> list[str]:
    """Up to SENSE_REFERENCE sentences evenly spaced over the text, to say how alike two of its
    sentences are by chance."""
    step = max(1, len(scan.sentences) // (4 * SENSE_REFERENCE))
    picked = [scan.sentence(i) for i in range(0, len(scan.sentences), step)]
    picked = [s[:CONTEXT] for s in picked if len(s.split()) >= SENSE_MIN_WORDS]
    return [picked[i] for i in spread(range(len(picked)), SENSE_REFERENCE)]


def _mean_similarity(vectors: np.ndarray) -> float:
    n = len(vectors)
    if n < 2:
        return 0.0
    total = vectors.sum(axis=0)
    return float((total @ total - n) / (n * (n - 1)))


def two_groups(vectors: np.ndarray, reference: float) -> tuple[list[int], list[int]] | None:
    """Two groups by 2-means seeded with the two least alike uses; kept only when both are big
    enough, the uses across the groups are clearly less alike than ``reference`` (two sentences
    of the text at random), and each group holds together well above that."""
    if len(vectors) < 2 * SENSE_MIN_GROUP:
        return None
    similarity = vectors @ vectors.T
    first, second = np.unravel_index(int(np.argmin(similarity)), similarity.shape)
    centres = vectors[[first, second]]
    labels = np.zeros(len(vectors), dtype=int)
    for _ in range(10):
        labels = np.argmax(vectors @ centres.T, axis=1)
        if min(np.sum(labels == 0), np.sum(labels == 1)) == 0:
            return None
        centres = np.stack([_unit(vectors[labels == k].mean(axis=0)) for k in (0, 1)])
    groups = [np.flatnonzero(labels == k) for k in (0, 1)]
    if min(len(g) for g in groups) < max(SENSE_MIN_GROUP, len(vectors) // 5):
        return None
    between = float(similarity[np.ix_(groups[0], groups[1])].mean())
    within = min(_mean_similarity(vectors[g]) for g in groups)
    if between > reference - SENSE_APART or within < between + SENSE_TIGHT:
        return None
    return [int(i) for i in groups[0]], [int(i) for i in groups[1]]


def _unit(vector: np.ndarray) -> np.ndarray:
    return vector / max(float(np.linalg.norm(vector)), 1e-12)
