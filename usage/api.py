"""GET /api/v1/usage: the organisation's plan and month, for any token of the organisation."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from brain.api.groups import ACCOUNT
from brain.api.metering import metered
from brain.api.tools import ErrorBody
from brain.core.actors import Actor
from brain.mcp.prices import FREE
from usage.selectors import get_usage
from usage.shapes import UsageOut


class UsageView(APIView):
    @extend_schema(
        operation_id="usage",
        summary="The plan, this month's reads, credits left and when the free reads renew",
        description="Never billed, even at zero credits.",
        responses={200: UsageOut, 401: ErrorBody},
        tags=[ACCOUNT],
    )
    @metered("usage", billing=FREE)
    def get(self, request: Request) -> Response:
        actor: Actor = request._request.brain_actor  # type: ignore[attr-defined]
        return Response(UsageOut.of(get_usage(org=actor.org)).model_dump(mode="json"))
