"""Recomputing vectors: in place with an organisation's own model, or a switch to another model
while the old vectors go on serving (``memory.index.serving``). Both can stop at any time and
be run again to finish."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.db import connection, transaction
from django.db.models import QuerySet

from brain.infra.hooks import Seam
from brain.models import Organisation
from memory.documents.turns import stored_texts
from memory.index.embedding import EMBEDDERS, Embedder, EmbeddingError, get_embedder
from memory.index.serving import models_of
from memory.models import EMBEDDING_DIMENSIONS, Chunk, Document, Fact

# The vector columns a switch fills and then moves into place.
SERVING = ("embedding", "embedding_model")
UPCOMING = ("next_embedding", "next_embedding_model")


@dataclass(frozen=True)
class KeptElsewhere:
    """Vectors another app keeps of its own texts (a contact's topics), re-embedded with memory's.

    ``reembed(org, resume)`` recomputes them with the organisation's serving model and returns how
    many; ``switch(org, target)`` gives them the target model's vectors inside the transaction that
    completes a switch (there are few, so none is missed)."""

    name: str
    reembed: Callable[[Organisation, bool], int]
    switch: Callable[[Organisation, Embedder], None]


ELSEWHERE: Seam[KeptElsewhere] = Seam(
    "vectors kept elsewhere", "an app's texts, re-embedded and switched with memory's"
)


def reembed(*, org: Organisation | None = None, batch_size: int = 256, resume: bool = False) -> dict[str, int]:
    """Recompute every chunk's and fact's vector with its organisation's serving model (after a
    change in what is embedded, or to repair rows of another model).

    With ``resume``, rows already made by that model are skipped. Until a row has its new vector,
    vector search leaves it out (it never compares vectors of two models); keyword search still
    finds it. Returns how many of each were done.
    """
    done = {"chunks": 0, "facts": 0}
    for each in [org] if org is not None else Organisation.objects.order_by("pk"):
        model = get_embedder(each.embedder).name[:200]
        chunks, facts = Chunk.objects.filter(org=each), Fact.objects.filter(org=each)
        if resume:
            chunks, facts = chunks.exclude(embedding_model=model), facts.exclude(embedding_model=model)
        done["chunks"] += _chunks(chunks, each.embedder, SERVING, batch_size)
        done["facts"] += _facts(facts, each.embedder, SERVING, batch_size)
    return done


def switch(*, org: Organisation, to: str, batch_size: int = 256) -> dict[str, int]:
    """Move the organisation to the model ``to`` without a moment of search on missing vectors.

    The upcoming model is recorded first, so every write from then on embeds with both; the
    vectors of rows written before are computed beside the serving ones; then one transaction
    moves them into place and makes ``to`` the serving model. Run again after an interruption,
    it computes only what is missing. Returns how many rows got new vectors.
    """
    if not begin_switch(org=org, to=to):
        return {"chunks": 0, "facts": 0}
    done = fill_upcoming(org=org, batch_size=batch_size)
    for kind, n in complete_switch(org=org).items():
        done[kind] += n
    return done


def begin_switch(*, org: Organisation, to: str) -> bool:
    """Record ``to`` as the organisation's upcoming model; False when it already serves (and a
    switch elsewhere under way is dropped). Refuses a model that cannot be had before anything
    changes."""
    if to not in EMBEDDERS:
        raise EmbeddingError(f"no embedder called {to!r}; there are {', '.join(EMBEDDERS)}")
    target = get_embedder(to)
    probe = target.embed(["probe"])
    if probe.shape[1] != target.dimensions or target.dimensions != EMBEDDING_DIMENSIONS:
        raise EmbeddingError(f"{target.name} makes vectors of {probe.shape[1]} dimensions, not {EMBEDDING_DIMENSIONS}")
    org.refresh_from_db()
    if org.embedder == to:
        cancel_switch(org=org)
        return False
    Organisation.objects.filter(pk=org.pk).update(embedder_next=to)
    org.refresh_from_db()
    return True


def fill_upcoming(*, org: Organisation, batch_size: int = 256) -> dict[str, int]:
    """Compute the upcoming model's vector of every row that lacks one; the serving vectors are
    untouched."""
    org.refresh_from_db()
    if not org.embedder_next:
        return {"chunks": 0, "facts": 0}
    name = get_embedder(org.embedder_next).name[:200]
    chunks = Chunk.objects.filter(org=org).exclude(next_embedding_model=name)
    facts = Fact.objects.filter(org=org).exclude(next_embedding_model=name)
    return {
        "chunks": _chunks(chunks, org.embedder_next, UPCOMING, batch_size),
        "facts": _facts(facts, org.embedder_next, UPCOMING, batch_size),
    }


def complete_switch(*, org: Organisation) -> dict[str, int]:
    """In one transaction: the last missing upcoming vectors (rows whose writer could not reach the
    upcoming model), then every upcoming vector into place and the upcoming model serving."""
    with transaction.atomic():
        locked = Organisation.objects.select_for_update().get(pk=org.pk)  # writers wait from here on
        if not locked.embedder_next:
            raise EmbeddingError(f"no switch of {org.slug} is under way (it was cancelled or completed)")
        done = fill_upcoming(org=locked, batch_size=64)
        target = get_embedder(locked.embedder_next)
        with connection.cursor() as cursor:
            for table in ("memory_chunk", "memory_fact"):
                cursor.execute(
                    f"UPDATE {table} SET embedding = next_embedding, embedding_model = next_embedding_model, "  # noqa: S608 (constant names)
                    "next_embedding = NULL, next_embedding_model = '' WHERE org_id = %s",
                    [org.pk],
                )
        for kept in ELSEWHERE:
            kept.switch(locked, target)
        Organisation.objects.filter(pk=org.pk).update(embedder=locked.embedder_next, embedder_next="")
    org.refresh_from_db()
    return done


def cancel_switch(*, org: Organisation) -> bool:
    """Stop a switch under way and drop the vectors it made; the serving ones never changed."""
    if not Organisation.objects.filter(pk=org.pk).exclude(embedder_next="").update(embedder_next=""):
        return False
    _clear_upcoming(org)
    org.refresh_from_db()
    return True


def _clear_upcoming(org: Organisation) -> None:
    with transaction.atomic():
        Organisation.objects.select_for_update().get(pk=org.pk)
        for model in (Chunk, Fact):
            model.objects.filter(org=org).exclude(next_embedding_model="").update(
                next_embedding=None, next_embedding_model=""
            )


def _chunks(chunks: QuerySet[Chunk], kind: str, columns: tuple[str, str], batch_size: int) -> int:
    """Passages document by document, each embedded from the same text ingestion uses (its
    speaker, time and the turn before; ``memory.documents.turns``)."""
    embedder = get_embedder(kind)
    documents = list(chunks.order_by("document_id").values_list("document_id", flat=True).distinct())
    per_batch, done = max(1, batch_size // 8), 0
    for start in range(0, len(documents), per_batch):
        rows: list[Chunk] = []
        texts: list[str] = []
        for document in Document.objects.filter(pk__in=documents[start : start + per_batch]):
            passages = list(Chunk.objects.filter(document=document).order_by("ordinal"))  # whole, for the context
            rows += passages
            texts += stored_texts(document, passages)
        if rows:
            done += _write(rows, embedder.embed(texts), embedder.name[:200], columns)
    return done


def _facts(facts: QuerySet[Fact], kind: str, columns: tuple[str, str], batch_size: int) -> int:
    return _rows(facts.order_by("pk"), ["statement"], lambda fact: fact.statement, kind, columns, batch_size)


def _rows(
    rows: QuerySet[Any],
    fields: list[str],
    text: Callable[[Any], str],
    kind: str,
    columns: tuple[str, str],
    batch_size: int,
) -> int:
    embedder = get_embedder(kind)
    done, last = 0, 0
    while True:
        batch = list(rows.filter(pk__gt=last).only("pk", *fields)[:batch_size])
        if not batch:
            return done
        done += _write(batch, embedder.embed([text(row) for row in batch]), embedder.name[:200], columns)
        last = batch[-1].pk


def _write(rows: list[Any], vectors: Any, model: str, columns: tuple[str, str]) -> int:
    for row, vector in zip(rows, vectors, strict=True):
        setattr(row, columns[0], vector)
        setattr(row, columns[1], model)
    type(rows[0]).objects.bulk_update(rows, list(columns), batch_size=500)
    return len(rows)


def describe(org: Organisation) -> str:
    """The organisation's models in words, for the command's report."""
    models = models_of(org)
    serving = get_embedder(models.serving).name
    return f"{org.slug}: serving {serving}" + (f", switching to {models.upcoming}" if models.upcoming else "")
