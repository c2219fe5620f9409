import numpy as np
import pytest

from memory.index.embedding import EmbeddingError, MiniLMEmbedder, OpenAICompatibleEmbedder
from memory.tests.embedding_stub import EmbeddingsStub
from memory.tests.reference_minilm import reference_embed

SENTENCES = [
    "Hi!",
    "The enterprise plan costs $48,500 a year and renews every March.",
    "Priya Shah took over as head of support from Sam in Q3 2025.",
    "Café déjà vu — naïve résumé, 東京, 2025-03-15.",
    " ".join(f"The committee reviewed proposal {i} on rainwater capture." for i in range(60)),  # past 256 tokens
]


@pytest.fixture(scope="module")
def embedder():
    return MiniLMEmbedder(threads=1)


def test_onnx_vectors_match_the_fp32_reference_model(embedder):
    ours, reference = embedder.embed(SENTENCES), reference_embed(SENTENCES)
    cosines = (ours * reference).sum(axis=1)
    assert cosines.min() > 0.99, cosines


def test_vectors_are_unit_length_and_batching_does_not_change_them(embedder):
    together = embedder.embed(SENTENCES)
    alone = np.stack([embedder.embed([s])[0] for s in SENTENCES])
    assert np.allclose(np.linalg.norm(together, axis=1), 1, atol=1e-5)
    assert np.allclose(together, alone, atol=1e-4)


def test_similar_sentences_are_closer_than_unrelated_ones(embedder):
    food, bread, horse = embedder.embed(["A man is eating food.", "A man eats bread.", "A man rides a horse."])
    assert food @ bread > food @ horse + 0.2


def test_the_openai_compatible_embedder_speaks_the_embeddings_protocol(stub_url):
    embedder = OpenAICompatibleEmbedder(base_url=stub_url, model="text-embedding-3-small", api_key="sk-test")
    vectors = embedder.embed(["one", "two"])
    assert vectors.shape == (2, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1, atol=1e-5)
    assert np.allclose(vectors[0], embedder.embed(["one"])[0], atol=1e-6)  # rows come back in input order
    sent = EmbeddingsStub.requests[-1]
    assert sent["body"]["dimensions"] == 384
    assert sent["auth"] == "Bearer sk-test"


def test_an_endpoint_failure_is_an_embedding_error(stub_url):
    with pytest.raises(EmbeddingError, match="failed"):
        OpenAICompatibleEmbedder(base_url=stub_url, model="m").embed(["fail"])


def test_the_model_health_check_embeds_for_real():
    from brain.infra.health import run_checks

    [result] = run_checks(["model"])
    assert result.ok
    assert "MiniLM" in result.detail
