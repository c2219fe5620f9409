"""REST endpoints that run a registered tool: same arguments, limits, services and call records."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiResponse, extend_schema
from pydantic import BaseModel
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from brain.api.exceptions import RETRY_AFTER_SECONDS, error_body
from brain.api.groups import group_of
from brain.core.actors import Actor
from brain.mcp.invoke import execute
from brain.mcp.registry import TOOLS, ToolSpec


class ErrorBody(BaseModel):
    code: str
    message: str
    details: dict[str, Any] = {}
    retryable: bool = False


def _run(request: Request, spec: ToolSpec, arguments: dict[str, Any]) -> Response:
    actor: Actor = request._request.brain_actor  # type: ignore[attr-defined]
    outcome = execute(actor, spec, arguments)
    if outcome.output is None:
        body = error_body(outcome.code, outcome.message, outcome.details, outcome.retryable)
        headers = {"Retry-After": str(RETRY_AFTER_SECONDS)} if outcome.retryable else None
        return Response(body, status=outcome.status, headers=headers)
    return Response(outcome.output.model_dump(mode="json"))


def tool_view(tool: str, method: str, *, summary: str = "") -> type[APIView]:
    """A view class for one tool. GET reads arguments from the query string, POST from the body;
    arguments in the URL path (``<str:memory_id>``) are added to either. Its group in the docs is the
    tool's in ``brain.api.groups``."""
    spec = TOOLS[tool]
    errors = {
        400: OpenApiResponse(ErrorBody, description="Invalid arguments or a refusal"),
        401: OpenApiResponse(ErrorBody, description="Missing, unknown, revoked or expired token"),
        402: OpenApiResponse(
            ErrorBody,
            description="Out of credits: this month's free reads are used and the credits do not cover the call",
        ),
        403: OpenApiResponse(ErrorBody, description="The token lacks the scope, or the tool is switched off"),
        404: OpenApiResponse(ErrorBody, description="Not found in this organisation"),
        413: OpenApiResponse(ErrorBody, description="The body is over BRAIN_MAX_REQUEST_BYTES"),
        500: OpenApiResponse(ErrorBody, description="An unexpected failure, logged; a write may have been saved"),
        503: OpenApiResponse(ErrorBody, description="A model or Brain's database is unreachable; retry later"),
    }
    docs = extend_schema(
        operation_id=tool,
        summary=summary or spec.title,
        description=spec.description,
        request=spec.args if method == "post" else None,
        responses={200: spec.output, **errors},
        tags=[group_of(tool)],
    )

    if method == "get":

        class GetView(APIView):
            @docs
            def get(self, request: Request, **path: str) -> Response:
                return _run(request, spec, {**dict(request.query_params.items()), **path})

        view: type[APIView] = GetView
    elif method == "delete":

        class DeleteView(APIView):
            @docs
            def delete(self, request: Request, **path: str) -> Response:
                return _run(request, spec, dict(path))

        view = DeleteView
    else:

        class PostView(APIView):
            @docs
            def post(self, request: Request, **path: str) -> Response:
                data = request.data if isinstance(request.data, dict) else {}
                return _run(request, spec, {**dict(data), **path})

        view = PostView
    view.__name__ = view.__qualname__ = "".join(p.title() for p in tool.split("_")) + "View"
    view.tool = tool  # type: ignore[attr-defined]  # lets tests and docs find every tool's REST route
    view.tool_method = method  # type: ignore[attr-defined]
    return view
