"""Bearer tokens for the REST API: the same ApiToken rows as /mcp."""

from __future__ import annotations

from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import authentication, exceptions
from rest_framework.request import Request

from brain.core.errors import PermissionDenied
from brain.core.services import actor_for_token, authenticate_token
from brain.oauth.connections import connection_for_access_token, mcp_resource


class BearerTokenAuthentication(authentication.BaseAuthentication):
    keyword = "Bearer"

    def authenticate(self, request: Request) -> tuple[Any, Any] | None:
        header = authentication.get_authorization_header(request).decode("latin-1")
        if not header:
            return None
        keyword, _, value = header.partition(" ")
        if keyword.lower() != "bearer" or not value.strip():
            raise exceptions.AuthenticationFailed("Send the token as 'Authorization: Bearer <token>'.")
        token = authenticate_token(value.strip())
        if token is None and connection_for_access_token(value.strip()) is not None:
            # RFC 8707: an app's OAuth token was issued for the MCP endpoint and is refused elsewhere.
            raise exceptions.AuthenticationFailed(
                f"This OAuth access token is for the MCP endpoint ({mcp_resource()}) only; the REST API "
                "takes brn_ tokens from the Connect page."
            )
        if token is None:
            raise exceptions.AuthenticationFailed("The token is unknown, revoked or expired.")
        try:
            actor = actor_for_token(token, via="api", client={"user_agent": request.META.get("HTTP_USER_AGENT", "")})
        except PermissionDenied as exc:
            raise exceptions.AuthenticationFailed(exc.message) from None
        request._request.brain_actor = actor  # type: ignore[attr-defined]
        return token.user, token

    def authenticate_header(self, request: Request) -> str:
        return 'Bearer realm="brain"'


class BearerTokenScheme(OpenApiAuthenticationExtension):
    """Describes the bearer token in the OpenAPI schema."""

    target_class = "brain.api.authentication.BearerTokenAuthentication"
    name = "bearerAuth"

    def get_security_definition(self, auto_schema: Any) -> dict[str, str]:
        return {"type": "http", "scheme": "bearer", "description": "An API token (brn_...) from the Connect page."}
