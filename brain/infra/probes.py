"""Liveness and readiness for orchestrators: ``/healthz`` and ``/readyz``, no token, nothing sensitive.

They are answered by the first middleware, before host validation and the HTTPS redirect: a
probe comes from the orchestrator with the pod's address as its host and over plain HTTP.

- ``/healthz``: the process serves requests. It touches nothing else, so a database blip does
  not get healthy web processes restarted.
- ``/readyz``: this process can do its work: the database (with pgvector), Redis and the
  embedding model answer. 503 while any does not; the body names the parts and whether each is
  up, never versions, addresses or error text.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

from brain.infra.health import run_checks

READY_CHECKS = ["database", "redis", "model"]


def _answer(status: int, body: dict[str, object]) -> HttpResponse:
    response = HttpResponse(json.dumps(body), status=status, content_type="application/json")
    response["Cache-Control"] = "no-store"
    return response


class ProbeMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.method not in ("GET", "HEAD"):
            return self.get_response(request)
        if request.path == "/healthz":
            return _answer(200, {"status": "ok"})
        if request.path == "/readyz":
            checks = {result.name: result.ok for result in run_checks(READY_CHECKS)}
            ready = all(checks.values())
            return _answer(200 if ready else 503, {"status": "ready" if ready else "not ready", "checks": checks})
        return self.get_response(request)
