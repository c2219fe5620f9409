"""Record REST calls that are not tool runs, like the tool runs are recorded."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import Any

from rest_framework.request import Request
from rest_framework.response import Response

from brain.models import ToolCall
from brain.services import record_tool_call


def metered(name: str) -> Callable[[Callable[..., Response]], Callable[..., Response]]:
    """Wrap an APIView method: one ToolCall row per call, with its outcome from the status code."""

    def decorator(method: Callable[..., Response]) -> Callable[..., Response]:
        @functools.wraps(method)
        def wrapper(self: Any, request: Request, *args: Any, **kwargs: Any) -> Response:
            started = time.perf_counter()
            response = method(self, request, *args, **kwargs)
            actor = getattr(request._request, "brain_actor", None)
            if actor is not None:
                status = response.status_code
                outcome = ToolCall.OK if status < 400 else ToolCall.DENIED if status in (401, 403) else ToolCall.REFUSED
                record_tool_call(
                    actor=actor,
                    tool=name,
                    duration_ms=round((time.perf_counter() - started) * 1000, 2),
                    outcome=outcome,
                    error_code="" if status < 400 else str(status),
                )
            return response

        return wrapper

    return decorator
