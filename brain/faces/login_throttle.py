"""How failed-login throttling (django-axes, configured in settings) sees a client and answers it."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

LOCKED_OUT_STATUS = 429


def client_ip(request: HttpRequest) -> str | None:
    """The address failures are counted against.

    Behind a reverse proxy (BRAIN_BEHIND_PROXY=1) every request comes from the proxy, so the
    address is the last one in X-Forwarded-For: the one our proxy appended. Earlier entries come
    from the client and could be anything it likes.
    """
    if settings.BRAIN_BEHIND_PROXY:
        forwarded = [part.strip() for part in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")]
        if forwarded[-1]:
            return forwarded[-1]
    return request.META.get("REMOTE_ADDR")


def locked_out(request: HttpRequest, original_response: Any = None, credentials: Any = None) -> HttpResponse:
    """The page a locked-out login gets, from the site's login page and the admin's alike."""
    minutes = int(settings.AXES_COOLOFF_TIME.total_seconds() // 60)
    return render(request, "registration/locked_out.html", {"minutes": minutes}, status=LOCKED_OUT_STATUS)
