"""The MCP connection's session id: handed out with ``initialize``, carrying the assistant app.

The endpoint is stateless (any process answers any request, nothing is kept between them), so
what a client says it is at ``initialize`` (``clientInfo``: its name and version) would be lost
by its next request. Brain hands out a session id in the ``Mcp-Session-Id`` header of the
``initialize`` answer, as the protocol allows; the client sends it back with every request, and
each call reads the app's name and version from it. The id is signed, so only ids Brain made are
read; its random part is the session reference a report keeps.
"""

from __future__ import annotations

import json
import secrets
from typing import Any

from django.core import signing

HEADER = "mcp-session-id"
_SALT = "brain.mcp.session"


def mint(client_info: dict[str, Any]) -> str:
    """A new session id for a client that introduced itself with ``client_info``."""
    payload = {
        "s": secrets.token_urlsafe(12),
        "n": str(client_info.get("name") or "")[:200],
        "v": str(client_info.get("version") or "")[:100],
    }
    return signing.dumps(payload, salt=_SALT, compress=True)


def read(session_id: str) -> dict[str, str]:
    """``name``, ``version`` and ``session`` (the random part) from an id Brain minted; else nothing."""
    if not session_id:
        return {}
    try:
        payload = signing.loads(session_id, salt=_SALT)
    except signing.BadSignature:
        return {}
    if not isinstance(payload, dict):
        return {}
    return {key: str(payload.get(short, "")) for key, short in (("name", "n"), ("version", "v"), ("session", "s"))}


def for_initialize(body: bytes) -> str | None:
    """A session id to hand out when ``body`` is an ``initialize`` request; None for anything else."""
    if b'"initialize"' not in body:  # most requests: no JSON parsing at all
        return None
    try:
        message = json.loads(body)
    except ValueError:
        return None
    if not isinstance(message, dict) or message.get("method") != "initialize":
        return None
    params = message.get("params")
    client = params.get("clientInfo") if isinstance(params, dict) else None
    return mint(client if isinstance(client, dict) else {})
