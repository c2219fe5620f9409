"""Bearer tokens for /mcp, verified against ApiToken, and the caller they stand for."""

from __future__ import annotations

from django.db import close_old_connections
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import AccessToken

from brain.core.actors import Actor
from brain.core.errors import PermissionDenied
from brain.core.selectors import enabled_features
from brain.core.services import TOKEN_PREFIX, actor_for_token, authenticate_token
from brain.mcp.threads import in_pool
from brain.oauth.connections import connection_for_access_token


def _verify(plaintext: str) -> AccessToken | None:
    """A ``brn_`` token, or an OAuth access token of a connected app (brain.oauth), which acts as
    its connection's row: either way the same actor follows."""
    close_old_connections()
    token = (
        authenticate_token(plaintext) if plaintext.startswith(TOKEN_PREFIX) else connection_for_access_token(plaintext)
    )
    if token is None:
        return None
    try:
        actor = actor_for_token(token, via="mcp")
    except PermissionDenied:
        return None
    return AccessToken(
        token=plaintext,
        client_id=getattr(token, "client_ref", None) or f"brn_{token.prefix}",
        scopes=list(actor.scopes),
        expires_at=int(token.expires_at.timestamp()) if token.expires_at else None,
        claims={"actor": actor, "features": sorted(enabled_features(actor=actor))},
    )


class ApiTokenVerifier:
    async def verify_token(self, token: str) -> AccessToken | None:
        return await in_pool(_verify, token)


def current_caller() -> tuple[Actor, set[str]]:
    """The actor and enabled features of the authenticated request being served."""
    access = get_access_token()
    if access is None or not access.claims or "actor" not in access.claims:
        raise PermissionDenied("Authentication is required.")
    return access.claims["actor"], set(access.claims.get("features", []))
