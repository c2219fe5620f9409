"""Record and charge REST calls that are not tool runs, as tool runs are recorded and charged."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from rest_framework.exceptions import APIException
from rest_framework.permissions import SAFE_METHODS
from rest_framework.request import Request
from rest_framework.response import Response

from brain.core.errors import DomainError
from brain.infra.replicas import mark_written
from brain.mcp.meter import recorded_call
from brain.mcp.prices import CALL, of_call


def metered(name: str, billing: str = CALL) -> Callable[[Callable[..., Response]], Callable[..., Response]]:
    """Wrap an APIView method: charged as ``billing`` says (``brain.mcp.prices``), given back when it
    does not succeed, and one ToolCall row per call with its outcome from the status code. A write
    that succeeds sends its caller's reads to the primary for a while (``brain.infra.replicas``)."""
    price = of_call(billing)

    def decorator(method: Callable[..., Response]) -> Callable[..., Response]:
        @functools.wraps(method)
        def wrapper(self: Any, request: Request, *args: Any, **kwargs: Any) -> Response:
            actor = getattr(request._request, "brain_actor", None)
            # A write that succeeded is answered as such even if recording it fails afterwards.
            with recorded_call(actor, name) as call:
                call.status = 500  # an exception that is not a refusal: the exception handler answers 500
                try:
                    with call.paying(actor, name, price) as meter:
                        response = method(self, request, *args, **kwargs)
                        call.status = response.status_code
                        if call.status >= 400:
                            meter.give_back()
                    if actor is not None and call.status < 400 and request.method not in SAFE_METHODS:
                        mark_written(actor)
                    return response
                except DomainError as exc:  # a refusal raised by a service: the exception handler answers it
                    call.status = exc.status
                    raise
                except APIException as exc:
                    call.status = exc.status_code
                    raise

        return wrapper

    return decorator
