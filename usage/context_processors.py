"""Whether the top menu (and the admin index) links to the overview page: at most one small
query, and only when a template asks."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from django.utils.functional import SimpleLazyObject

from usage.overview import sees_overview


def overview_link(request: HttpRequest) -> dict[str, Any]:
    return {"shows_overview": SimpleLazyObject(lambda: sees_overview(user=request.user))}
