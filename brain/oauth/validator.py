"""The toolkit's request validator with Brain's rules: every token is bound to this server's MCP
URL (RFC 8707), and an app whose connection has ended gets no new token from a code or a refresh
token it still holds."""

from __future__ import annotations

from typing import Any

from oauth2_provider.oauth2_validators import OAuth2Validator
from oauthlib.oauth2.rfc6749 import errors

from brain.oauth.connections import is_mcp_resource, mcp_resource
from brain.services import live_tokens


def _connected(request: Any) -> bool:
    user, client = getattr(request, "user", None), getattr(request, "client", None)
    if user is None or client is None:
        return False
    return live_tokens().filter(user_id=user.pk, oauth_application_id=client.pk).exists()


class BrainValidator(OAuth2Validator):
    def _validate_resource_uris(self, request: Any, resources: list[Any]) -> None:
        super()._validate_resource_uris(request, resources)
        for resource in resources:
            if not is_mcp_resource(resource):
                raise errors.CustomOAuth2Error(
                    error="invalid_target",
                    description=f"This server issues tokens only for its MCP endpoint, {mcp_resource()}.",
                    request=request,
                )

    def _check_and_set_request_resource(self, request: Any) -> None:
        super()._check_and_set_request_resource(request)
        # Every resource named has been checked to be /mcp; it is stored in one form, so that a
        # token is found by it (brain.oauth.connections), and a client that names none still
        # gets a token bound to /mcp.
        request.resource = [mcp_resource()]

    def validate_code(self, client_id: str, code: str, client: Any, request: Any, *args: Any, **kwargs: Any) -> bool:
        return bool(super().validate_code(client_id, code, client, request, *args, **kwargs)) and _connected(request)

    def validate_refresh_token(self, refresh_token: str, client: Any, request: Any, *args: Any, **kwargs: Any) -> bool:
        valid = super().validate_refresh_token(refresh_token, client, request, *args, **kwargs)
        return bool(valid) and _connected(request)
