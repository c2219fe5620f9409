"""Switching embedding models: every vector recomputed with the current model, resumable."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.db.models import QuerySet

from brain.models import Organisation
from memory.documents.turns import stored_texts
from memory.models import Chunk, Document, Fact
from memory.retrieval.embedding import get_embedder


def reembed(*, org: Organisation | None = None, batch_size: int = 256, resume: bool = False) -> dict[str, int]:
    """Recompute every chunk's and fact's vector with the current embedder, recording its model.

    With ``resume``, rows already made by the current model are skipped (to finish an interrupted
    switch). Until a row has its new vector, vector search leaves it out (it never compares
    vectors of two models); keyword search still finds it. Returns how many of each were done.
    """
    chunks = Chunk.objects.all() if org is None else Chunk.objects.filter(org=org)
    facts = Fact.objects.all() if org is None else Fact.objects.filter(org=org)
    return {
        "chunks": _reembed_chunks(chunks, batch_size, resume),
        "facts": _reembed_rows(facts, ["statement"], lambda f: f.statement, batch_size, resume),
    }


def _reembed_chunks(chunks: QuerySet[Chunk], batch_size: int, resume: bool) -> int:
    """Passages document by document, each embedded from the same text ingestion uses (its
    speaker, time and the turn before; ``memory.documents.turns``)."""
    embedder = get_embedder()
    model = embedder.name[:200]
    pending = chunks.exclude(embedding_model=model) if resume else chunks
    documents = list(pending.order_by("document_id").values_list("document_id", flat=True).distinct())
    done = 0
    for start in range(0, len(documents), max(1, batch_size // 8)):
        batch = Document.objects.filter(pk__in=documents[start : start + max(1, batch_size // 8)])
        rows: list[Chunk] = []
        texts: list[str] = []
        for document in batch:
            passages = list(chunks.filter(document=document).order_by("ordinal"))  # whole, for the context
            rows += passages
            texts += stored_texts(document, passages)
        if not rows:
            continue
        vectors = embedder.embed(texts)  # no transaction is open here
        for row, vector in zip(rows, vectors, strict=True):
            row.embedding, row.embedding_model = vector, model
        Chunk.objects.bulk_update(rows, ["embedding", "embedding_model"], batch_size=500)
        done += len(rows)
    return done


def _reembed_rows(
    rows: QuerySet[Any], fields: list[str], text: Callable[[Any], str], batch_size: int, resume: bool
) -> int:
    embedder = get_embedder()
    model = embedder.name[:200]
    pending = (rows.exclude(embedding_model=model) if resume else rows).order_by("pk")
    done, last = 0, 0
    while True:
        batch = list(pending.filter(pk__gt=last).only("pk", *fields)[:batch_size])
        if not batch:
            return done
        vectors = embedder.embed([text(row) for row in batch])  # no transaction is open here
        for row, vector in zip(batch, vectors, strict=True):
            row.embedding, row.embedding_model = vector, model
        type(batch[0]).objects.bulk_update(batch, ["embedding", "embedding_model"])
        done, last = done + len(batch), batch[-1].pk
