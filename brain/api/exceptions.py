"""REST errors share one body: {"code", "message", "details"}."""

from __future__ import annotations

from typing import Any

from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from brain.errors import DomainError


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, DomainError):
        return Response({"code": exc.code, "message": exc.message, "details": exc.details}, status=exc.status)
    response = drf_exception_handler(exc, context)
    if response is not None:
        detail = response.data.get("detail") if isinstance(response.data, dict) else None
        code = getattr(detail, "code", None) or getattr(exc, "default_code", "error")
        response.data = {"code": code, "message": str(detail or response.data), "details": {}}
    return response
