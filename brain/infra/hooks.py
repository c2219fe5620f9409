"""Seams: where a lower part of Brain lets a part above it take part, without importing it.

The part below declares a ``Seam`` and calls what is plugged into it; the part above plugs a
function in when its app is ready (its ``AppConfig.ready``). So imports point one way, and what
joins two parts is written where both can read it: the seam's name and its doc say what a plugged
function receives and returns.

    READY_DOCUMENT = Seam[Callable[[int], object]]("ready document", "...")
    READY_DOCUMENT.plug(extract_facts_of)          # in the part above
    for step in READY_DOCUMENT: step(document_id)  # in the part below

What is plugged is usually a function, or a small record of functions. Plugging the same one
twice keeps it once (an app's ``ready`` may run more than once in tests).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Generic, TypeVar

F = TypeVar("F")


class Seam(Generic[F]):
    def __init__(self, name: str, doc: str) -> None:
        self.name, self.doc = name, doc
        self._plugged: dict[str, F] = {}

    def plug(self, fn: F) -> F:
        name = getattr(fn, "__qualname__", None)
        self._plugged[f"{fn.__module__}.{name}" if name else repr(fn)] = fn
        return fn

    def __iter__(self) -> Iterator[F]:
        return iter(tuple(self._plugged.values()))

    def __repr__(self) -> str:
        return f"<Seam {self.name}: {', '.join(self._plugged) or 'nothing plugged'}>"
