"""The toolkit's request validator with Brain's rules: every token is bound to this server's MCP
URL (RFC 8707); a code or a refresh token gets nothing for a person whose connection has ended,
who has left the organisation or whose account is deactivated; and an exchanged code is
remembered with the tokens it began (brain.oauth.codes)."""

from __future__ import annotations

from typing import Any

from oauth2_provider.models import RefreshToken
from oauth2_provider.oauth2_validators import OAuth2Validator
from oauthlib.oauth2.rfc6749 import errors

from brain.core.services import live_tokens
from brain.oauth.codes import record_spent
from brain.oauth.connections import is_mcp_resource, mcp_resource


def _connected(request: Any) -> bool:
    """Whether the person still has a live connection of this app, in an organisation they
    still belong to (``live_tokens`` leaves out deactivated accounts and annotates the role)."""
    user, client = getattr(request, "user", None), getattr(request, "client", None)
    if user is None or client is None:
        return False
    connection = live_tokens().filter(user_id=user.pk, oauth_application_id=client.pk).first()
    return connection is not None and getattr(connection, "member_role", None) is not None


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
        if not super().validate_refresh_token(refresh_token, client, request, *args, **kwargs):
            return False
        if _connected(request):
            return True
        # Nothing issued to this person through this grant may outlive the refusal: re-adding them
        # to the organisation, or reactivating the account, must not bring the tokens back.
        RefreshToken.revoke_family(request.refresh_token_instance.token_family)
        return False

    def _create_refresh_token(
        self, request: Any, refresh_token_code: str, access_token: Any, previous_refresh_token: Any
    ) -> RefreshToken:
        token = super()._create_refresh_token(request, refresh_token_code, access_token, previous_refresh_token)
        request.brain_token_family = token.token_family
        return token

    def invalidate_authorization_code(self, client_id: str, code: str, request: Any, *args: Any, **kwargs: Any) -> None:
        super().invalidate_authorization_code(client_id, code, request, *args, **kwargs)
        record_spent(code=code, token_family=getattr(request, "brain_token_family", None))
