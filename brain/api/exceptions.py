"""REST errors share one body: {"code", "message", "details", "retryable"}, whatever went wrong.

A refusal keeps its own code and status; Brain's database not answering is ``unavailable`` (503,
retryable, with Retry-After); anything else is ``internal`` (500), logged, its internals not
shown. An answer to a write that failed unexpectedly says the write may have been saved.
"""

from __future__ import annotations

import logging
import sys
from typing import Any

from django.conf import settings
from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views import defaults
from rest_framework.permissions import SAFE_METHODS
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from brain.core.errors import DomainError
from brain.infra.unavailable import database_away, database_unavailable, internal_failure

logger = logging.getLogger("brain.api")
RETRY_AFTER_SECONDS = 60  # what a retryable refusal (an outage) suggests, in a Retry-After header
API_PREFIX = "/api/"


def error_body(
    code: str, message: str, details: dict[str, Any] | None = None, retryable: bool = False
) -> dict[str, Any]:
    return {"code": code, "message": message, "details": details or {}, "retryable": retryable}


def refusal(exc: DomainError) -> Response:
    headers = {"Retry-After": str(RETRY_AFTER_SECONDS)} if exc.retryable else None
    return Response(error_body(exc.code, exc.message, exc.details, exc.retryable), status=exc.status, headers=headers)


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response:
    if isinstance(exc, DomainError):
        return refusal(exc)
    if isinstance(exc, RequestDataTooBig):
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        message = f"The request body is larger than Brain's limit of {limit:,} bytes; send less in one request."
        return Response(error_body("too_large", message, {"limit_bytes": limit}), status=413)
    if isinstance(exc, TooManyFieldsSent):
        message = f"The request has more than {settings.DATA_UPLOAD_MAX_NUMBER_FIELDS:,} parameters."
        return Response(error_body("invalid_argument", message), status=400)
    response = drf_exception_handler(exc, context)
    if response is not None:
        detail = response.data.get("detail") if isinstance(response.data, dict) else None
        code = getattr(detail, "code", None) or getattr(exc, "default_code", "error")
        response.data = error_body(str(code), str(detail or response.data))
        return response
    request = context.get("request")
    status, body = _failure(exc, method=getattr(request, "method", "GET"), path=getattr(request, "path", ""))
    headers = {"Retry-After": str(RETRY_AFTER_SECONDS)} if body["retryable"] else None
    return Response(body, status=status, headers=headers)


def _failure(exc: BaseException, *, method: str, path: str) -> tuple[int, dict[str, Any]]:
    writes = method not in SAFE_METHODS
    what = f"{method} {path}"
    if database_away(exc):
        logger.warning("%s: the database is not answering: %s", what, exc)
        refused = database_unavailable(what=what, writes=writes)
        return refused.status, error_body(refused.code, refused.message, refused.details, retryable=True)
    logger.error("%s failed", what, exc_info=exc)
    return 500, error_body("internal", internal_failure(what=what, writes=writes), {"may_have_saved": writes})


def server_error(request: HttpRequest) -> HttpResponse:
    """Django's last resort (``handler500``): JSON in the same shape under /api/, the page elsewhere.
    Reached by what fails outside a REST view's own handling (a middleware, the answer's rendering)."""
    if not request.path.startswith(API_PREFIX):
        return defaults.server_error(request)
    exc = sys.exc_info()[1] or RuntimeError("unknown failure")
    status, body = _failure(exc, method=request.method or "GET", path=request.path)
    response = JsonResponse(body, status=status)
    if body["retryable"]:
        response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response
