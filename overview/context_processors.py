"""Whether the top menu (and the admin index) links to the overview page, and what waits for the
reader: a few small queries, and only when a template asks."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from django.utils.functional import SimpleLazyObject

from brain.core.needs import list_waiting_work
from overview.selectors import sees_overview


def overview_link(request: HttpRequest) -> dict[str, Any]:
    return {"shows_overview": SimpleLazyObject(lambda: sees_overview(user=request.user))}


def needs_you(request: HttpRequest) -> dict[str, Any]:
    """The work waiting for the reader (brain.core.needs), counted only on a page that shows it (the admin index)."""
    return {"needs_you": SimpleLazyObject(lambda: list_waiting_work(user=request.user))}
