"""Record REST calls that are not tool runs, like the tool runs are recorded."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import Any

from rest_framework.exceptions import APIException
from rest_framework.request import Request
from rest_framework.response import Response

from brain.errors import DomainError
from brain.models import ToolCall
from brain.services import record_tool_call


def metered(name: str) -> Callable[[Callable[..., Response]], Callable[..., Response]]:
    """Wrap an APIView method: one ToolCall row per call, with its outcome from the status code."""

    def decorator(method: Callable[..., Response]) -> Callable[..., Response]:
        @functools.wraps(method)
        def wrapper(self: Any, request: Request, *args: Any, **kwargs: Any) -> Response:
            started = time.perf_counter()
            status = 500  # an exception that is not a refusal: the exception handler answers 500
            try:
                response = method(self, request, *args, **kwargs)
                status = response.status_code
                return response
            except DomainError as exc:  # a refusal raised by a service: the exception handler answers it
                status = exc.status
                raise
            except APIException as exc:
                status = exc.status_code
                raise
            finally:
                _record(request, name, status, started)

        return wrapper

    return decorator


def _record(request: Request, name: str, status: int, started: float) -> None:
    actor = getattr(request._request, "brain_actor", None)
    if actor is None:
        return
    if status < 400:
        outcome = ToolCall.OK
    elif status in (401, 403):
        outcome = ToolCall.DENIED
    elif status >= 500:
        outcome = ToolCall.ERROR
    else:
        outcome = ToolCall.REFUSED
    record_tool_call(
        actor=actor,
        tool=name,
        duration_ms=round((time.perf_counter() - started) * 1000, 2),
        outcome=outcome,
        error_code="" if status < 400 else str(status),
    )
