"""REST errors share one body: {"code", "message", "details"}."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from brain.errors import DomainError


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, DomainError):
        return Response({"code": exc.code, "message": exc.message, "details": exc.details}, status=exc.status)
    if isinstance(exc, RequestDataTooBig):
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        message = f"The request body is larger than Brain's limit of {limit:,} bytes; send less in one request."
        return Response({"code": "too_large", "message": message, "details": {"limit_bytes": limit}}, status=413)
    if isinstance(exc, TooManyFieldsSent):
        message = f"The request has more than {settings.DATA_UPLOAD_MAX_NUMBER_FIELDS:,} parameters."
        return Response({"code": "invalid_argument", "message": message, "details": {}}, status=400)
    response = drf_exception_handler(exc, context)
    if response is not None:
        detail = response.data.get("detail") if isinstance(response.data, dict) else None
        code = getattr(detail, "code", None) or getattr(exc, "default_code", "error")
        response.data = {"code": code, "message": str(detail or response.data), "details": {}}
    return response
