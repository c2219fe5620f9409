"""Record and charge REST calls that are not tool runs, as tool runs are recorded and charged."""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable
from contextlib import nullcontext
from typing import Any

from rest_framework.exceptions import APIException
from rest_framework.permissions import SAFE_METHODS
from rest_framework.request import Request
from rest_framework.response import Response

from brain.errors import DomainError
from brain.mcp import meter as metering
from brain.mcp.meter import Meter, record_call
from brain.mcp.prices import CALL, of_call
from brain.replicas import mark_written

logger = logging.getLogger("brain.calls")


def metered(name: str, billing: str = CALL) -> Callable[[Callable[..., Response]], Callable[..., Response]]:
    """Wrap an APIView method: charged as ``billing`` says (``brain.mcp.prices``), given back when it
    does not succeed, and one ToolCall row per call with its outcome from the status code. A write
    that succeeds sends its caller's reads to the primary for a while (``brain.replicas``)."""
    price = of_call(billing)

    def decorator(method: Callable[..., Response]) -> Callable[..., Response]:
        @functools.wraps(method)
        def wrapper(self: Any, request: Request, *args: Any, **kwargs: Any) -> Response:
            started = time.perf_counter()
            status = 500  # an exception that is not a refusal: the exception handler answers 500
            meter: Meter | None = None
            actor = getattr(request._request, "brain_actor", None)
            try:
                paying = metering.metered(actor, name, price) if actor is not None else nullcontext(Meter(None))
                with paying as meter:
                    response = method(self, request, *args, **kwargs)
                    status = response.status_code
                    if status >= 400:
                        meter.give_back()
                if actor is not None and status < 400 and request.method not in SAFE_METHODS:
                    mark_written(actor)
                return response
            except DomainError as exc:  # a refusal raised by a service: the exception handler answers it
                status = exc.status
                raise
            except APIException as exc:
                status = exc.status_code
                raise
            finally:
                # A write that succeeded is answered as such even if recording it fails now.
                _record(request, name, status, started, meter.credits if meter is not None else 0)

        return wrapper

    return decorator


def _record(request: Request, name: str, status: int, started: float, credits: int) -> None:
    actor = getattr(request._request, "brain_actor", None)
    if actor is not None:
        code = "" if status < 400 else str(status)
        record_call(actor, name, code, time.perf_counter() - started, credits=credits, status=status)
