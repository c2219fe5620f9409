"""Which model's vectors serve an organisation, and how a switch of models keeps search whole.

An organisation's searches embed the question with its serving model (``Organisation.embedder``)
and compare only vectors that model made. A switch (``reembed --to``) first names the upcoming
model (``embedder_next``): from then on every passage and fact written gets a vector of each
model, and the switch fills ``next_embedding`` for the rows written before, while the old vectors
go on serving. When every row has one, a single transaction moves the new vectors into place and
makes the new model the serving one, so a search sees all old vectors or all new ones.

Writers embed before their transaction opens (a model may be remote) and, inside it, hold the
organisation's row in share mode and check that its models are still the ones they embedded with
(``confirm``); the swap holds the row exclusively, so no write lands on the wrong side of it.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
from django.db import connection

from brain.models import Organisation
from memory.index.embedding import Embedder, EmbeddingError, get_embedder

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Models:
    """An organisation's serving model and the upcoming one ('' outside a switch), as kinds."""

    serving: str
    upcoming: str = ""


@dataclass(frozen=True)
class QueryVector:
    """A question's vector and the model that made it: it is compared only with that model's."""

    values: np.ndarray
    model: str


@dataclass(frozen=True)
class Vectors:
    """Vectors for a list of texts: the serving model's, and the upcoming one's during a switch."""

    models: Models
    current: list[Any]
    upcoming: list[Any] | None
    model: str
    next_model: str

    def fields(self, index: int) -> dict[str, Any]:
        """The vector columns of the row for text ``index``."""
        return {
            "embedding": self.current[index],
            "embedding_model": self.model,
            "next_embedding": self.upcoming[index] if self.upcoming is not None else None,
            "next_embedding_model": self.next_model,
        }

    def pick(self, indices: Iterable[int]) -> Vectors:
        """The vectors of those texts, in that order."""
        chosen = list(indices)
        upcoming = [self.upcoming[i] for i in chosen] if self.upcoming is not None else None
        return Vectors(self.models, [self.current[i] for i in chosen], upcoming, self.model, self.next_model)


def models_of(org: Organisation | int) -> Models:
    """The organisation's models as they are now (no lock; for questions and work before a write)."""
    if isinstance(org, Organisation):
        return Models(org.embedder, org.embedder_next)
    serving, upcoming = Organisation.objects.filter(pk=org).values_list("embedder", "embedder_next").get()
    return Models(serving, upcoming)


def locked_models(org_id: int) -> Models:
    """The organisation's models, its row held in share mode until the transaction ends (so a
    swap waits for this write, and this write for a swap under way). Call inside a transaction."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT embedder, embedder_next FROM brain_organisation WHERE id = %s FOR SHARE", [org_id])
        serving, upcoming = cursor.fetchone()
    return Models(serving, upcoming)


def query_vector(org: Organisation, text: str) -> QueryVector:
    embedder = get_embedder(org.embedder)
    return QueryVector(embedder.embed([text])[0], embedder.name[:200])


def embed_with(models: Models, texts: list[str], batch: int = 64) -> Vectors:
    """Vectors of both models for ``texts``. A switch never stops the serving side from writing:
    if the upcoming model is unavailable, rows go without its vector and the switch fills them."""
    serving = get_embedder(models.serving)
    current = _run(serving, texts, batch)
    upcoming, next_model = None, ""
    if models.upcoming:
        try:
            embedder = get_embedder(models.upcoming)
            upcoming, next_model = _run(embedder, texts, batch), embedder.name[:200]
        except EmbeddingError as exc:
            logger.warning(
                "the upcoming embedder %s is unavailable; the switch fills these rows: %s", models.upcoming, exc
            )
    return Vectors(models, current, upcoming, serving.name[:200], next_model)


def _run(embedder: Embedder, texts: list[str], batch: int) -> list[Any]:
    out: list[Any] = []
    for start in range(0, len(texts), batch):
        out.extend(embedder.embed(texts[start : start + batch]))
    return out


def embed_for(org: Organisation | int, texts: list[str]) -> Vectors:
    """Vectors of the organisation's models for ``texts``; call before a transaction opens."""
    return embed_with(models_of(org), texts)


def confirm(vectors: Vectors, org_id: int, texts: list[str]) -> Vectors:
    """Inside the writer's transaction: ``vectors`` if the organisation's models are the ones they
    were made with, otherwise vectors of its models now (a switch began or ended meanwhile)."""
    now = locked_models(org_id)
    return vectors if now == vectors.models else embed_with(now, texts)
