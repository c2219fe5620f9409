"""What a client that registers itself may ask for: the same rules for dynamic registration and
for client metadata documents, so neither way in is looser than the other."""

from __future__ import annotations

import ipaddress
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.http.request import validate_host

from brain.core.inputs import text_problem

LOOPBACK_NAMES = {"localhost"}
# Redirect schemes that can run code or read files in a browser: never a place to send a code.
NEVER_SCHEMES = {"javascript", "data", "file", "vbscript", "blob", "about"}
MAX_REDIRECT_URIS = 10
MAX_NAME = 100


def is_loopback(host: str) -> bool:
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def redirect_problem(uri: object) -> str | None:
    """Why a client may not register this redirect address, or None when it may.

    HTTPS anywhere; plain HTTP only to this machine (an app listening on a loopback port);
    another scheme only when the operator lists it (an app that opens links of its own). With
    BRAIN_OAUTH_REDIRECT_HOSTS set, the host must be one of them (loopback always may)."""
    if not isinstance(uri, str) or not uri.strip():
        return "each redirect URI must be a non-empty string"
    if len(uri) > 2000:
        return "a redirect URI may be at most 2,000 characters"
    try:
        parts = urlsplit(uri)
        _ = parts.port
    except ValueError:
        return f"{uri!r} is not a URL"
    scheme, host = parts.scheme.lower(), parts.hostname or ""
    if parts.fragment or "#" in uri:
        return f"{uri!r} has a fragment, which a redirect URI may not have"
    if scheme in NEVER_SCHEMES or not scheme:
        return f"{uri!r} uses a scheme Brain never redirects to"
    if scheme == "http" and not is_loopback(host):
        return f"{uri!r} uses plain http to another machine; use https, or http to 127.0.0.1 or localhost"
    if scheme not in ("http", "https") and scheme not in settings.BRAIN_OAUTH_REDIRECT_SCHEMES:
        return f"{uri!r} uses the scheme {scheme!r}, which this server does not allow"
    if scheme in ("http", "https") and not host:
        return f"{uri!r} has no host"
    allowed = settings.BRAIN_OAUTH_REDIRECT_HOSTS
    if allowed and scheme == "https" and not validate_host(host, allowed):
        return f"{uri!r} sends people to {host}, which is not among the hosts this server allows"
    return None


def metadata_problem(data: dict[str, Any]) -> tuple[str, str] | None:
    """The OAuth error and its description for client metadata Brain will not take, or None.

    What the toolkit checks itself (JSON shape, auth methods, one grant type) is left to it."""
    for key, value in data.items():
        texts = value if isinstance(value, list) else [value]
        for text in texts:
            if isinstance(text, str) and (problem := text_problem(text)):
                return "invalid_client_metadata", f"{key} {problem}"
    uris = data.get("redirect_uris")
    if not isinstance(uris, list) or not uris:
        return "invalid_redirect_uri", "redirect_uris must be a non-empty array of URLs"
    if len(uris) > MAX_REDIRECT_URIS:
        return "invalid_redirect_uri", f"at most {MAX_REDIRECT_URIS} redirect URIs may be registered"
    for uri in uris:
        if problem := redirect_problem(uri):
            return "invalid_redirect_uri", problem
    grants = data.get("grant_types", ["authorization_code"])
    if not isinstance(grants, list) or set(grants) - {"authorization_code", "refresh_token"}:
        return "invalid_client_metadata", "grant_types may name only authorization_code and refresh_token"
    responses = data.get("response_types", ["code"])
    if not isinstance(responses, list) or set(responses) - {"code"}:
        return "invalid_client_metadata", "response_types may name only code"
    name = data.get("client_name", "")
    if not isinstance(name, str) or len(name) > MAX_NAME:
        return "invalid_client_metadata", f"client_name must be text of at most {MAX_NAME} characters"
    return None
