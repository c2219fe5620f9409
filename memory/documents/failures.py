"""Which failures of ingestion can succeed when tried again."""

from __future__ import annotations

from django.db import InterfaceError, OperationalError

from memory.index.embedding import EmbeddingError


def is_transient(exc: BaseException) -> bool:
    """Whether trying again later can succeed: the database was away or chose this transaction as
    a deadlock's or a serialization conflict's victim (Django raises those as ``OperationalError``),
    or the embedding endpoint was away."""
    if isinstance(exc, OperationalError | InterfaceError):
        return True
    return isinstance(exc, EmbeddingError) and exc.transient
