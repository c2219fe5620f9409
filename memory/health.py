"""The embedding model's health check (registered with brain.infra.health when the app loads)."""

from __future__ import annotations

from brain.infra.health import register_check
from memory.index.embedding import get_embedder


@register_check("model")
def _model() -> str:
    embedder = get_embedder()
    vector = embedder.embed(["health check"])[0]
    if vector.shape != (embedder.dimensions,):
        raise RuntimeError(f"the embedder returned a vector of shape {vector.shape}")
    return embedder.name
