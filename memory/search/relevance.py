"""Where the evidence for a question ends: the similarity below which a passage is no nearer the
question than unrelated text is, and the floor a list of passages is cut at.

Both are measured per embedding model on the evaluation sets (docs/benchmarks.md, "No evidence"
and "Relevance floor"); a model not measured here keeps whatever the searches find, since its
similarities are on another scale.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Protocol, TypeVar

# Per model: below this, the closest passage or fact is no nearer the question than unrelated
# text is (measured on chat-dev, chitchat and the off-topic questions).
ON_TOPIC_SIMILARITY = {"all-MiniLM-L6-v2 (onnx int8)": 0.25}
# The floor, calibrated on the mixed set's dev questions (docs/benchmarks.md): a passage at least
# ON_TOPIC near the question is kept when it is among the first FLOOR_FIRST, or within
# FLOOR_MARGIN of the nearest passage found, or among the keyword search's first FLOOR_KEYWORD
# (a chat turn that holds the question's rare words is often less near in meaning than the
# pages around it, and is still the answer).
FLOOR_FIRST = 3
FLOOR_MARGIN = 0.15
FLOOR_KEYWORD = 3
# A passage says something of its own when it holds a word of four letters or more that is not
# one of these: "lol", "+1", "😂", "same here" and "thanks!" answer no question, and never stand in
# a list of evidence.
_WORD = re.compile(r"[^\W_]{4,}")
_FILLER = frozenset(
    ["haha", "hahaha", "lmao", "same", "here", "thanks", "thank", "cheers", "nice", "cool", "great", "okay", "yeah"]
)


class Ranked(Protocol):
    @property
    def text(self) -> str: ...

    @property
    def similarity(self) -> float | None: ...

    @property
    def ranks(self) -> dict[str, int]: ...


T = TypeVar("T", bound=Ranked)


def on_topic_similarity(model: str) -> float | None:
    """The similarity below which nothing is about the question, for ``model``; None when unmeasured."""
    return ON_TOPIC_SIMILARITY.get(model)


def above_floor(hits: Sequence[T], model: str) -> list[T]:
    """``hits`` (best first) cut where the evidence ends; all of them for a model not measured."""
    least = on_topic_similarity(model)
    if least is None:
        return list(hits)
    nearest = max((h.similarity for h in hits if h.similarity is not None), default=0.0)

    def kept(place: int, hit: T) -> bool:
        if hit.similarity is None or hit.similarity < least or not says_something(hit.text):
            return False
        return (
            place < FLOOR_FIRST
            or hit.similarity >= nearest - FLOOR_MARGIN
            or hit.ranks.get("keyword", FLOOR_KEYWORD + 1) <= FLOOR_KEYWORD
        )

    return [hit for place, hit in enumerate(hits) if kept(place, hit)]


def says_something(text: str) -> bool:
    """Whether a passage holds a word of its own (``_FILLER`` aside)."""
    return any(word.casefold() not in _FILLER for word in _WORD.findall(text))
