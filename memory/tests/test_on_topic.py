"""When what was found for a question counts as evidence: database-free."""

from __future__ import annotations

from datetime import UTC, datetime

from memory.search.evidence import ON_TOPIC_SIMILARITY, on_topic
from memory.search.passages import Hit

MODEL = "all-MiniLM-L6-v2 (onnx int8)"
CUT = ON_TOPIC_SIMILARITY[MODEL]


def hit(ranks: dict[str, int], scores: dict[str, float]) -> Hit:
    return Hit(
        chunk_id=1,
        document_id=1,
        title="t",
        heading="",
        text="x",
        source_url="",
        source_kind="api",
        ordinal=0,
        recorded_at=datetime(2026, 1, 1, tzinfo=UTC),
        occurred_at=None,
        speaker="",
        said_at=None,
        score=0.01,
        ranks=ranks,
        scores=scores,
    )


def test_a_passage_near_enough_in_meaning_is_evidence_and_one_further_is_not():
    assert on_topic([hit({"vector": 1}, {"vector": CUT + 0.01})], [], named=False, model=MODEL)
    assert not on_topic([hit({"vector": 1}, {"vector": CUT - 0.01})], [], named=False, model=MODEL)


def test_a_keyword_match_alone_is_not_nearness():
    assert not on_topic([hit({"keyword": 1}, {"keyword": 9.5})], [], named=False, model=MODEL)


def test_a_question_naming_an_entity_or_a_speaker_keeps_what_was_found():
    far = {"vector": 0.05}
    assert on_topic([hit({"vector": 1}, far)], [], named=True, model=MODEL)
    assert on_topic([hit({"vector": 1, "speaker": 1}, {**far, "speaker": 0.05})], [], named=False, model=MODEL)


def test_a_model_not_measured_has_no_cut():
    assert on_topic([hit({"vector": 1}, {"vector": 0.01})], [], named=False, model="text-embedding-3-small")
